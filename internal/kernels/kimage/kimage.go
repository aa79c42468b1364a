// SPDX-License-Identifier: GPL-2.0-only

// Package kimage tells what a kernel image file is (which arch, which format)
// before anything boots it, and unpacks the ELF vmlinux from an x86 bzImage,
// which QEMU boots through PVH in half the time under emulation.
package kimage

import (
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/ftrace-stackmap/conformance/internal/atomicfile"
)

// Format is how the kernel is packaged.
type Format string

const (
	ELF          Format = "ELF vmlinux"
	ARM64Image   Format = "arm64 Image"
	ARM64ImageGz Format = "arm64 Image.gz" // QEMU unpacks it itself
	BzImage      Format = "x86 bzImage"
)

// Info describes a kernel image.
type Info struct {
	Arch   string // "arm64" or "x86_64"; "" when not one of ours
	Format Format
	Detail string // e.g. "32-bit", "zstd payload"
}

// ErrNotKernel says the file is not a kernel image this tool knows.
var ErrNotKernel = errors.New("not a kernel image")

// Inspect reads a kernel image's headers.
func Inspect(path string) (Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return Info{}, err
	}
	defer f.Close()
	head := make([]byte, 0x300)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, []byte(elf.ELFMAG)):
		ef, err := elf.NewFile(f)
		if err != nil {
			return Info{}, fmt.Errorf("%s: %w: bad ELF: %v", path, ErrNotKernel, err)
		}
		if ef.Section(".init.text") == nil {
			return Info{}, fmt.Errorf("%s: %w: an ELF file, but not a Linux kernel (no .init.text section)", path, ErrNotKernel)
		}
		info := Info{Format: ELF, Detail: ef.Machine.String()}
		switch ef.Machine {
		case elf.EM_X86_64:
			info.Arch = "x86_64"
		case elf.EM_AARCH64:
			info.Arch = "arm64"
		}
		return info, nil
	case len(head) >= 0x40 && string(head[0x38:0x3c]) == "ARM\x64":
		return Info{Arch: "arm64", Format: ARM64Image}, nil
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return Info{}, err
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			return Info{}, fmt.Errorf("%s: %w: a gzip file that does not open: %v", path, ErrNotKernel, err)
		}
		inner := make([]byte, 0x40)
		if _, err := io.ReadFull(zr, inner); err != nil || string(inner[0x38:0x3c]) != "ARM\x64" {
			return Info{}, fmt.Errorf("%s: %w: a gzip file without an arm64 Image inside", path, ErrNotKernel)
		}
		return Info{Arch: "arm64", Format: ARM64ImageGz}, nil
	case len(head) >= 0x250 && string(head[0x202:0x206]) == "HdrS":
		info := Info{Format: BzImage, Arch: "x86_64"}
		if head[0x236]&1 == 0 { // XLF_KERNEL_64
			info.Arch, info.Detail = "", "32-bit x86"
		}
		return info, nil
	}
	return Info{}, fmt.Errorf("%s: %w (no ELF, arm64 Image or bzImage header)", path, ErrNotKernel)
}

// HasPVH reports whether an ELF vmlinux has the Xen PVH entry note QEMU
// needs to boot it directly.
func HasPVH(path string) (bool, error) {
	ef, err := elf.Open(path)
	if err != nil {
		return false, err
	}
	defer ef.Close()
	const xenElfNotePhys32Entry = 18
	for _, p := range ef.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		data, err := io.ReadAll(p.Open())
		if err != nil {
			return false, err
		}
		for len(data) >= 12 {
			nameSz := binary.LittleEndian.Uint32(data[0:])
			descSz := binary.LittleEndian.Uint32(data[4:])
			typ := binary.LittleEndian.Uint32(data[8:])
			off := 12 + align4(nameSz)
			if off > uint32(len(data)) {
				break
			}
			if typ == xenElfNotePhys32Entry && bytes.HasPrefix(data[12:], []byte("Xen")) {
				return true, nil
			}
			off += align4(descSz)
			if off > uint32(len(data)) {
				break
			}
			data = data[off:]
		}
	}
	return false, nil
}

func align4(n uint32) uint32 { return (n + 3) &^ 3 }

// ExtractVmlinux writes the ELF kernel packed inside a bzImage to out. The
// setup header names where the compressed payload starts and how long it is.
func ExtractVmlinux(bzImage, out string) error {
	data, err := os.ReadFile(bzImage)
	if err != nil {
		return err
	}
	if len(data) < 0x250 || string(data[0x202:0x206]) != "HdrS" {
		return fmt.Errorf("%s: not a bzImage", bzImage)
	}
	setupSects := int(data[0x1f1])
	if setupSects == 0 {
		setupSects = 4
	}
	start := (setupSects+1)*512 + int(binary.LittleEndian.Uint32(data[0x248:]))
	length := int(binary.LittleEndian.Uint32(data[0x24c:]))
	if start+length > len(data) || length == 0 {
		return fmt.Errorf("%s: payload %d+%d outside the file", bzImage, start, length)
	}
	r, err := decompressor(data[start : start+length])
	if err != nil {
		return fmt.Errorf("%s: %v", bzImage, err)
	}
	err = atomicfile.Produce(out, 0o644, func(tmp string) error {
		f, err := os.Create(tmp)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, r)
		if err = errors.Join(err, f.Close()); err != nil {
			return err
		}
		info, err := Inspect(tmp)
		if err == nil && info.Format != ELF {
			err = fmt.Errorf("payload is %s, want ELF", info.Format)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("%s: unpacking vmlinux: %v", bzImage, err)
	}
	return nil
}

func decompressor(p []byte) (io.Reader, error) {
	switch {
	case bytes.HasPrefix(p, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		// The build appends the unpacked size as 4 bytes after the frame.
		return zstd.NewReader(bytes.NewReader(p[:len(p)-4]), zstd.WithDecoderMaxWindow(1<<31))
	case bytes.HasPrefix(p, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		// Kernels use XZ's branch filters (BCJ), which only xz itself
		// decodes; the stream may be followed by the size: read one stream.
		return command(p, "xz", "--decompress", "--stdout", "--single-stream")
	case bytes.HasPrefix(p, []byte{0x1f, 0x8b}):
		return gzip.NewReader(bytes.NewReader(p))
	case bytes.HasPrefix(p, []byte{0x02, 0x21, 0x4c, 0x18}):
		return lz4.NewReader(bytes.NewReader(p)), nil // legacy frame, as the kernel writes it
	case bytes.HasPrefix(p, []byte{0x5d, 0x00, 0x00}):
		return command(p, "xz", "--decompress", "--stdout", "--format=lzma")
	}
	return nil, fmt.Errorf("payload compression not known (starts % x)", p[:min(6, len(p))])
}

// command decompresses p with an external program.
func command(p []byte, name string, args ...string) (io.Reader, error) {
	cmd := exec.Command(name, args...)
	cmd.Stdin = bytes.NewReader(p)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && len(out) == 0 {
		return nil, fmt.Errorf("%s: %v: %s (install xz-utils)", name, err, strings.TrimSpace(stderr.String()))
	}
	return bytes.NewReader(out), nil
}

// Config returns the kernel configuration embedded in an image built with
// CONFIG_IKCONFIG (between the IKCFG_ST and IKCFG_ED markers, gzipped), as
// option name to value ("y", "m", a number or a string); nil when the image
// carries none. A bzImage is read through its unpacked vmlinux.
func Config(path string, format Format) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if format == ARM64ImageGz {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		if data, err = io.ReadAll(zr); err != nil {
			return nil, err
		}
	}
	i := bytes.Index(data, []byte("IKCFG_ST"))
	if i < 0 {
		return nil, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(data[i+len("IKCFG_ST"):]))
	if err != nil {
		return nil, fmt.Errorf("%s: the embedded config does not open: %v", path, err)
	}
	zr.Multistream(false)
	text, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: the embedded config does not read: %v", path, err)
	}
	return ParseConfig(text), nil
}

// ParseConfig reads a kernel configuration's text (a .config) as option
// name to value; options not set are not in it.
func ParseConfig(text []byte) map[string]string {
	cfg := map[string]string{}
	for _, l := range strings.Split(string(text), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok && strings.HasPrefix(k, "CONFIG_") {
			cfg[k] = v
		}
	}
	return cfg
}
