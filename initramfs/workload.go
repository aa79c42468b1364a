// SPDX-License-Identifier: GPL-2.0-only

package initramfs

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
)

// exitGroup is machine code for exit_group(0), per GOARCH.
var exitGroup = map[string][]byte{
	"amd64": {
		0xb8, 0xe7, 0x00, 0x00, 0x00, // mov eax, 231 (exit_group)
		0x31, 0xff, // xor edi, edi
		0x0f, 0x05, // syscall
	},
	"arm64": {
		0x00, 0x00, 0x80, 0xd2, // mov x0, #0
		0xc8, 0x0b, 0x80, 0xd2, // mov x8, #94 (exit_group)
		0x01, 0x00, 0x00, 0xd4, // svc #0
	},
}

// Workload is the guest's stack source (guest.WorkloadPath): a static ELF
// executable whose first instructions exit. Each run is one fork, one exec
// and one exit and nothing else. A Go program would spend some 20 ms of
// emulated time starting its runtime, and the suite runs this about a
// hundred times in a boot; this one is done in about 5.
func Workload(goarch string) ([]byte, error) {
	code, ok := exitGroup[goarch]
	if !ok {
		return nil, fmt.Errorf("no workload for GOARCH %s", goarch)
	}
	machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[goarch]
	// One loadable segment holds the headers and the code after them.
	const base, headers = 0x400000, 64 + 56
	size := uint64(headers + len(code))
	h := elf.Header64{
		Type: uint16(elf.ET_EXEC), Machine: uint16(machine), Version: uint32(elf.EV_CURRENT),
		Entry: base + headers, Phoff: 64, Ehsize: 64, Phentsize: 56, Phnum: 1,
	}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	h.Ident[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	h.Ident[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	p := elf.Prog64{
		Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_X),
		Vaddr: base, Paddr: base, Filesz: size, Memsz: size, Align: 0x1000,
	}
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, h)
	binary.Write(&b, binary.LittleEndian, p)
	b.Write(code)
	return b.Bytes(), nil
}
