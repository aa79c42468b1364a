// SPDX-License-Identifier: GPL-2.0-only

// Package kimagetest makes small kernel images for tests: an ELF vmlinux
// and a bzImage holding one, as kimage reads them.
package kimagetest

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
)

// Vmlinux is a small ELF64 file with the one section a kernel has and a
// program does not, .init.text (and the section names).
func Vmlinux(machine uint16) []byte { return ELF(machine, ".init.text") }

// ELF is an ELF64 executable of the machine with empty sections named.
func ELF(machine uint16, sections ...string) []byte {
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

// Gzipped is b compressed with gzip.
func Gzipped(b []byte) []byte {
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(b)
	w.Close()
	return z.Bytes()
}

// BzImage is a setup header and a gzip payload holding vmlinux; is64 sets
// the flag of a 64-bit kernel.
func BzImage(vmlinux []byte, is64 bool) []byte {
	z := Gzipped(vmlinux)
	const setupSects = 4
	b := make([]byte, (setupSects+1)*512)
	b[0x1f1] = setupSects
	copy(b[0x202:], "HdrS")
	if is64 {
		b[0x236] = 1
	}
	binary.LittleEndian.PutUint32(b[0x248:], 0x10) // payload offset within the protected-mode part
	binary.LittleEndian.PutUint32(b[0x24c:], uint32(len(z)))
	b = append(b, make([]byte, 0x10)...)
	return append(append(b, z...), 0, 0, 0, 0)
}
