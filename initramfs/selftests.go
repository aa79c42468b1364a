// SPDX-License-Identifier: GPL-2.0-only

package initramfs

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/u-root/u-root/pkg/cpio"

	"github.com/ftrace-stackmap/conformance/initramfs/guest"
)

// FtraceTests returns the .tc files under dir/test.d whose path contains
// match, relative to dir, sorted: the tests ftracetest is asked to run.
// dir is a kernel tree's tools/testing/selftests/ftrace.
func FtraceTests(dir, match string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(dir, "ftracetest")); err != nil {
		return nil, fmt.Errorf("FTRACETEST=%s: no ftracetest script there (want a kernel tree's tools/testing/selftests/ftrace): %w", dir, err)
	}
	var tests []string
	err := filepath.WalkDir(filepath.Join(dir, "test.d"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if !d.IsDir() && strings.HasSuffix(p, ".tc") && strings.Contains(rel, match) {
			tests = append(tests, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("FTRACETEST=%s: %w", dir, err)
	}
	if len(tests) == 0 {
		return nil, fmt.Errorf("FTRACETEST=%s: no .tc file under test.d matches %q", dir, match)
	}
	sort.Strings(tests)
	return tests, nil
}

// BusyboxRecords put busybox at guest.BusyboxPath; the init installs its links
// when a shell is wanted.
func BusyboxRecords(busybox string) ([]cpio.Record, error) {
	bb, err := os.ReadFile(busybox)
	if err != nil {
		return nil, err
	}
	return []cpio.Record{
		cpio.Directory("bin", 0o755),
		cpio.StaticFile(strings.TrimPrefix(guest.BusyboxPath, "/"), string(bb), 0o755),
	}, nil
}

// SelftestRecords are the archive records that let the guest run the
// tree's ftracetest: busybox (its shell and utilities, installed as links
// by the init) and the ftracetest script with its whole test.d, since a
// test may source helpers from anywhere in it.
func SelftestRecords(busybox, dir string) ([]cpio.Record, error) {
	records, err := BusyboxRecords(busybox)
	if err != nil {
		return nil, err
	}
	guestDir := strings.TrimPrefix(guest.FtraceDir, "/")
	records = append(records, cpio.Directory(guestDir, 0o755))
	script, err := os.ReadFile(filepath.Join(dir, "ftracetest"))
	if err != nil {
		return nil, err
	}
	records = append(records, cpio.StaticFile(path.Join(guestDir, "ftracetest"), string(script), 0o755))
	err = filepath.WalkDir(filepath.Join(dir, "test.d"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		name := path.Join(guestDir, filepath.ToSlash(rel))
		if d.IsDir() {
			records = append(records, cpio.Directory(name, 0o755))
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		records = append(records, cpio.StaticFile(name, string(data), 0o755))
		return nil
	})
	return records, err
}
