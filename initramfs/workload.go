// SPDX-License-Identifier: GPL-2.0-only

package initramfs

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"

	"github.com/ftrace-stackmap/conformance/internal/arch"
)

// Workload is the guest's stack source (guest.WorkloadPath): a static ELF
// executable whose first instructions exit. Each run is one fork, one exec
// and one exit and nothing else. A Go program would spend some 20 ms of
// emulated time starting its runtime, and the suite runs this about a
// hundred times in a boot; this one is done in about 5.
func Workload(a arch.Arch) ([]byte, error) {
	code := a.ExitGroup
	if len(code) == 0 {
		return nil, fmt.Errorf("no workload for %s: the arch table has no exit code for it", a.Name)
	}
	// One loadable segment holds the headers and the code after them.
	const base, headers = 0x400000, 64 + 56
	size := uint64(headers + len(code))
	h := elf.Header64{
		Type: uint16(elf.ET_EXEC), Machine: uint16(a.ELFMachine), Version: uint32(elf.EV_CURRENT),
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
