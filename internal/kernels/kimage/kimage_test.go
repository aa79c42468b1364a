// SPDX-License-Identifier: GPL-2.0-only

package kimage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/kernels/kimage/kimagetest"
)

func arm64Image() []byte {
	b := make([]byte, 4096)
	copy(b[0x38:], "ARM\x64")
	return b
}

func write(t *testing.T, name string, data []byte) string {
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestInspect(t *testing.T) {
	for _, tc := range []struct {
		name   string
		data   []byte
		arch   string
		format Format
	}{
		{"x86_64 vmlinux", kimagetest.Vmlinux(62), "x86_64", ELF},
		{"arm64 vmlinux", kimagetest.Vmlinux(183), "arm64", ELF},
		{"riscv vmlinux", kimagetest.Vmlinux(243), "", ELF},
		{"arm64 Image.gz", kimagetest.Gzipped(arm64Image()), "arm64", ARM64ImageGz},
		{"arm64 Image", arm64Image(), "arm64", ARM64Image},
		{"x86_64 bzImage", kimagetest.BzImage(kimagetest.Vmlinux(62), true), "x86_64", BzImage},
		{"i386 bzImage", kimagetest.BzImage(kimagetest.Vmlinux(3), false), "", BzImage},
	} {
		info, err := Inspect(write(t, "k", tc.data))
		if err != nil || info.Arch != tc.arch || info.Format != tc.format {
			t.Errorf("Inspect(%s) = %+v, %v; want %q %q", tc.name, info, err, tc.arch, tc.format)
		}
	}
	for name, data := range map[string][]byte{
		"a program's ELF":     kimagetest.ELF(62, ".text", ".data"),
		"a gzip of no kernel": kimagetest.Gzipped([]byte("hello")),
	} {
		if _, err := Inspect(write(t, "f", data)); !errors.Is(err, ErrNotKernel) {
			t.Errorf("Inspect(%s) = %v, want ErrNotKernel", name, err)
		}
	}
	if _, err := Inspect(write(t, "go.mod", []byte("module x\n"))); !errors.Is(err, ErrNotKernel) {
		t.Errorf("Inspect(text file) = %v, want ErrNotKernel", err)
	}
}

func TestExtractVmlinux(t *testing.T) {
	want := kimagetest.Vmlinux(62)
	out := filepath.Join(t.TempDir(), "vmlinux")
	if err := ExtractVmlinux(write(t, "bz", kimagetest.BzImage(want, true)), out); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	if !bytes.Equal(got, want) {
		t.Fatalf("ExtractVmlinux wrote %d bytes, want the %d-byte ELF", len(got), len(want))
	}
	if ok, err := HasPVH(out); ok || err != nil {
		t.Fatalf("HasPVH(header-only ELF) = %v, %v; want false", ok, err)
	}
	bad := kimagetest.BzImage([]byte("not an elf"), true)
	if err := ExtractVmlinux(write(t, "bz", bad), out+"2"); err == nil {
		t.Fatalf("ExtractVmlinux(payload not ELF) succeeded")
	}
	// A failed unpack leaves nothing beside the good one.
	if left, _ := os.ReadDir(filepath.Dir(out)); len(left) != 1 {
		t.Fatalf("after a failed unpack the directory holds %d files, want the good vmlinux alone", len(left))
	}
}
