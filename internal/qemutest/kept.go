// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/ftrace-stackmap/conformance/internal/atomicfile"
)

// Some answers depend only on the machine, QEMU and the kernel (whether
// KVM works, whether PVH boots a kernel) and are kept in the cache as
// JSON, in a file named by what decides them.

// readKept is the answer kept in path, or nil: a file that is missing,
// unreadable or not parsed, or an answer valid says is not one for this
// run, means deciding again.
func readKept[T any](path string, valid func(*T) bool) *T {
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var a T
	if json.Unmarshal(data, &a) != nil || !valid(&a) {
		return nil
	}
	return &a
}

// writeKept keeps a in path as JSON, whole or not at all.
func writeKept(path string, a any) error {
	data, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, append(data, '\n'), 0o644)
}
