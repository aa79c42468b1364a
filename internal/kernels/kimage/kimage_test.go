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

// elfHeader is the smallest ELF64 file debug/elf accepts: a header alone.
func elfHeader(machine uint16) []byte {
	h := make([]byte, 64)
	copy(h, "\x7fELF")
	h[4], h[5], h[6] = 2, 1, 1 // 64-bit, little endian, version 1
	binary.LittleEndian.PutUint16(h[16:], 2)
	binary.LittleEndian.PutUint16(h[18:], machine)
	binary.LittleEndian.PutUint32(h[20:], 1)
	binary.LittleEndian.PutUint16(h[52:], 64)
	return h
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
		{"arm64 Image", arm64Image(), "arm64", ARM64Image},
		{"x86_64 bzImage", bzImage(t, elfHeader(62), true), "x86_64", BzImage},
		{"i386 bzImage", bzImage(t, elfHeader(3), false), "", BzImage},
	} {
		info, err := Inspect(write(t, "k", tc.data))
		if err != nil || info.Arch != tc.arch || info.Format != tc.format {
			t.Errorf("Inspect(%s) = %+v, %v; want %q %q", tc.name, info, err, tc.arch, tc.format)
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
}
