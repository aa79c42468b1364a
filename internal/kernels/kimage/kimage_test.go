// SPDX-License-Identifier: GPL-2.0-only

package kimage

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// elfHeader is a small ELF64 file with the one section a kernel has and a
// program does not, .init.text (and the section names).
func elfHeader(machine uint16) []byte { return elfFile(machine, ".init.text") }

// elfFile is an ELF64 executable of the machine with empty sections named.
func elfFile(machine uint16, sections ...string) []byte {
	le := binary.LittleEndian
	names := "\x00.shstrtab\x00"
	offsets := []uint32{0, 1}
	for _, n := range sections {
		offsets = append(offsets, uint32(len(names)))
		names += n + "\x00"
	}
	h := make([]byte, 64)
	copy(h, "\x7fELF")
	h[4], h[5], h[6] = 2, 1, 1 // 64-bit, little endian, version 1
	le.PutUint16(h[16:], 2)    // ET_EXEC
	le.PutUint16(h[18:], machine)
	le.PutUint32(h[20:], 1)
	shoff := 64 + len(names)
	le.PutUint64(h[40:], uint64(shoff))
	le.PutUint16(h[52:], 64)
	le.PutUint16(h[58:], 64)
	le.PutUint16(h[60:], uint16(len(offsets)))
	le.PutUint16(h[62:], 1)
	b := append(h, names...)
	for i, off := range offsets {
		sh := make([]byte, 64)
		if i > 0 {
			le.PutUint32(sh[0:], off)
			le.PutUint32(sh[4:], 1) // PROGBITS
		}
		if i == 1 {
			le.PutUint32(sh[4:], 3) // STRTAB
			le.PutUint64(sh[24:], 64)
			le.PutUint64(sh[32:], uint64(len(names)))
		}
		b = append(b, sh...)
	}
	return b
}

func gzipped(b []byte) []byte {
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(b)
	w.Close()
	return z.Bytes()
}

func arm64Image() []byte {
	b := make([]byte, 4096)
	copy(b[0x38:], "ARM\x64")
	return b
}

// bzImage builds a setup header and a gzip payload holding vmlinux.
func bzImage(t *testing.T, vmlinux []byte, is64 bool) []byte {
	t.Helper()
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(vmlinux)
	w.Close()
	const setupSects = 4
	b := make([]byte, (setupSects+1)*512)
	b[0x1f1] = setupSects
	copy(b[0x202:], "HdrS")
	if is64 {
		b[0x236] = 1
	}
	binary.LittleEndian.PutUint32(b[0x248:], 0x10) // payload offset within the protected-mode part
	binary.LittleEndian.PutUint32(b[0x24c:], uint32(z.Len()))
	b = append(b, make([]byte, 0x10)...)
	return append(append(b, z.Bytes()...), 0, 0, 0, 0)
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
		{"x86_64 vmlinux", elfHeader(62), "x86_64", ELF},
		{"arm64 vmlinux", elfHeader(183), "arm64", ELF},
		{"riscv vmlinux", elfHeader(243), "", ELF},
		{"arm64 Image.gz", gzipped(arm64Image()), "arm64", ARM64ImageGz},
		{"arm64 Image", arm64Image(), "arm64", ARM64Image},
		{"x86_64 bzImage", bzImage(t, elfHeader(62), true), "x86_64", BzImage},
		{"i386 bzImage", bzImage(t, elfHeader(3), false), "", BzImage},
	} {
		info, err := Inspect(write(t, "k", tc.data))
		if err != nil || info.Arch != tc.arch || info.Format != tc.format {
			t.Errorf("Inspect(%s) = %+v, %v; want %q %q", tc.name, info, err, tc.arch, tc.format)
		}
	}
	for name, data := range map[string][]byte{
		"a program's ELF":     elfFile(62, ".text", ".data"),
		"a gzip of no kernel": gzipped([]byte("hello")),
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
	want := elfHeader(62)
	out := filepath.Join(t.TempDir(), "vmlinux")
	if err := ExtractVmlinux(write(t, "bz", bzImage(t, want, true)), out); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	if !bytes.Equal(got, want) {
		t.Fatalf("ExtractVmlinux wrote %d bytes, want the %d-byte ELF", len(got), len(want))
	}
	if ok, err := HasPVH(out); ok || err != nil {
		t.Fatalf("HasPVH(header-only ELF) = %v, %v; want false", ok, err)
	}
	bad := bzImage(t, []byte("not an elf"), true)
	if err := ExtractVmlinux(write(t, "bz", bad), out+"2"); err == nil {
		t.Fatalf("ExtractVmlinux(payload not ELF) succeeded")
	}
	// A failed unpack leaves nothing beside the good one.
	if left, _ := os.ReadDir(filepath.Dir(out)); len(left) != 1 {
		t.Fatalf("after a failed unpack the directory holds %d files, want the good vmlinux alone", len(left))
	}
}
