// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"encoding/binary"
	"os"
	"path/filepath"

	"github.com/u-root/u-root/pkg/cpio"

	"github.com/ftrace-stackmap/conformance/initramfs"
	"github.com/ftrace-stackmap/conformance/initramfs/guest"
	"github.com/ftrace-stackmap/conformance/internal/apt"
	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/dumpcheck"
	"github.com/ftrace-stackmap/conformance/internal/ftracetest"
	"github.com/ftrace-stackmap/conformance/internal/kernels/images"
	"github.com/ftrace-stackmap/conformance/internal/progress"
)

// selftestSetup is what the default boot needs to run the tree's ftracetest.
type selftestSetup struct {
	tests   []string
	records []cpio.Record
}

// selftestRecords fetches the pinned busybox for the arch and packs it with
// the tree's selftests.
func (o Options) selftestRecords(a arch.Arch) ([]cpio.Record, error) {
	busybox, err := o.busybox(a)
	if err != nil {
		return nil, err
	}
	return initramfs.SelftestRecords(busybox, o.FtraceDir)
}

// busybox fetches (or finds cached) the busybox images.lock pins for the
// arch: the guest's shell for ftracetest and SHELL=1.
func (o Options) busybox(a arch.Arch) (string, error) {
	lock, err := images.Read(o.LockFile)
	if err != nil {
		return "", err
	}
	tool, err := lock.Tool("busybox")
	if err != nil {
		return "", err
	}
	step := o.Progress.Step("busybox (%s)", a.Name)
	busybox, err := images.Fetch(tool, a, o.CacheDir, o.Progress)
	step(err)
	return busybox, err
}

// readSelftests reads the verdicts the guest sent back from ftracetest
// among the files of the default boot; a note says why there are none.
func readSelftests(files map[string][]byte, ftraceDir string, tests []string) ([]ftracetest.Case, string) {
	out, ok := files[guest.SelftestOutput]
	if !ok {
		return nil, "the guest sent no ftracetest output"
	}
	cases, err := ftracetest.Parse(string(out), string(files[guest.SelftestLogs]), tests)
	for i := range cases {
		if tc, rerr := os.ReadFile(filepath.Join(ftraceDir, cases[i].File)); rerr == nil && !cases[i].Passed() {
			cases[i].Hint = ftracetest.Diagnose(string(tc))
		}
	}
	if err != nil {
		return cases, err.Error()
	}
	return cases, ""
}

// checkDecoder holds the tree's own stack_map_bin decoder, if it has one,
// to the export the default boot captured (files, kept in bootDir for the
// decoder to read); a note says why it was not.
func checkDecoder(tree, bootDir string, files map[string][]byte, rep *progress.Reporter) (*dumpcheck.Check, string) {
	tool := dumpcheck.Find(tree)
	if tool == "" {
		return nil, ""
	}
	bin := filepath.Join(bootDir, "stack_map_bin")
	if _, ok := files["stack_map_bin"]; !ok {
		return nil, "not run: the default boot captured no stack_map_bin (SM-BIN-03 did not run, or the feature is absent)"
	}
	if err := apt.Ensure(rep, apt.Need{Program: "python3", Package: "python3"}); err != nil {
		return nil, "not run: " + err.Error()
	}
	// Both arches the suite boots are little-endian.
	c, err := dumpcheck.Run(tool, bin, filepath.Join(bootDir, "stack_map"), binary.LittleEndian)
	if err != nil {
		return nil, "not run: " + err.Error()
	}
	return c, ""
}
