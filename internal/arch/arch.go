// SPDX-License-Identifier: GPL-2.0-only

// Package arch is the one table of what the suite knows about each arch it
// runs on: Go's, Debian's and the kernel's names for it, how to cross-build
// its kernel, and how QEMU boots it. A third arch is one more row here.
package arch

import (
	"debug/elf"
	"fmt"
	"sort"
	"strings"
)

// Arch is one arch, named as the user names it (ARCH=).
type Arch struct {
	Name   string
	GOARCH string
	Deb    string // Debian's architecture

	// Building the reference kernel: the kernel's ARCH=, the
	// CROSS_COMPILE= prefix ("" for native), the compiler and the Debian
	// package that has it, the make target and the file to boot, relative
	// to the build directory.
	KernelArch, Cross       string
	Compiler, CompilerPkg   string
	KernelTarget, BootImage string
	SrcDir                  string // the kernel source's arch/ directory
	// ELFNeedsPVH: QEMU boots an ELF vmlinux of this arch only through
	// its PVH entry note.
	ELFNeedsPVH bool

	// Booting it: the QEMU binary and its package, machine and CPU, the
	// kernel's name for the serial port, and earlycon= for the same UART.
	// cortex-a57 avoids the cost of emulating pointer authentication.
	QEMU, QEMUPkg string
	Machine       []string
	// QEMUUser runs a program of this arch on a host of another (Debian's
	// QEMUUserPkg): the guest's suite lists its specs on the host through it.
	QEMUUser          string
	Console, EarlyCon string
	// ConsoleConfig are the Kconfig options that give the kernel that
	// console (and, on x86, the ACPI it powers off with).
	ConsoleConfig []string
	// SerialBus is QEMU's virtio-serial device on this machine, which the
	// reports' port hangs on (virtio-mmio on virt, PCI on q35).
	SerialBus string

	// The guest's workload: an ELF executable for ELFMachine whose code is
	// ExitGroup, machine code for exit_group(0).
	ELFMachine elf.Machine
	ExitGroup  []byte
}

var table = map[string]Arch{
	"arm64": {Name: "arm64", GOARCH: "arm64", Deb: "arm64",
		KernelArch: "arm64", Cross: "aarch64-linux-gnu-", Compiler: "aarch64-linux-gnu-gcc", CompilerPkg: "gcc-aarch64-linux-gnu",
		KernelTarget: "Image", BootImage: "arch/arm64/boot/Image", SrcDir: "arm64",
		QEMU: "qemu-system-aarch64", QEMUPkg: "qemu-system-arm", Machine: []string{"-M", "virt", "-cpu", "cortex-a57"}, QEMUUser: "qemu-aarch64",
		Console: "ttyAMA0", EarlyCon: "pl011,0x9000000", ConsoleConfig: []string{"CONFIG_SERIAL_AMBA_PL011_CONSOLE"},
		SerialBus:  "virtio-serial-device",
		ELFMachine: elf.EM_AARCH64, ExitGroup: []byte{
			0x00, 0x00, 0x80, 0xd2, // mov x0, #0
			0xc8, 0x0b, 0x80, 0xd2, // mov x8, #94 (exit_group)
			0x01, 0x00, 0x00, 0xd4, // svc #0
		}},
	// x86_64 boots the ELF vmlinux directly (PVH): no decompression.
	"x86_64": {Name: "x86_64", GOARCH: "amd64", Deb: "amd64",
		KernelArch: "x86_64", Compiler: "gcc", CompilerPkg: "build-essential",
		KernelTarget: "bzImage", BootImage: "vmlinux", SrcDir: "x86", ELFNeedsPVH: true,
		QEMU: "qemu-system-x86_64", QEMUPkg: "qemu-system-x86", Machine: []string{"-M", "q35", "-cpu", "qemu64"}, QEMUUser: "qemu-x86_64",
		Console: "ttyS0", EarlyCon: "uart8250,io,0x3f8", ConsoleConfig: []string{"CONFIG_SERIAL_8250_CONSOLE", "CONFIG_ACPI"},
		SerialBus:  "virtio-serial-pci",
		ELFMachine: elf.EM_X86_64, ExitGroup: []byte{
			0xb8, 0xe7, 0x00, 0x00, 0x00, // mov eax, 231 (exit_group)
			0x31, 0xff, // xor edi, edi
			0x0f, 0x05, // syscall
		}},
}

// QEMUUserPkg holds every arch's QEMUUser.
const QEMUUserPkg = "qemu-user"

// Lookup finds an arch by the user's name for it.
func Lookup(name string) (Arch, error) {
	a, ok := table[name]
	if !ok {
		return Arch{}, fmt.Errorf("ARCH=%q: want one of %v", name, Names())
	}
	return a, nil
}

// Names are the arches the suite runs on, sorted.
func Names() []string {
	var names []string
	for n := range table {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// MustLookup is Lookup for names written in the code: an unknown one
// is a bug, not the user's input.
func MustLookup(name string) Arch {
	a, err := Lookup(name)
	if err != nil {
		panic(err)
	}
	return a
}

// ByGOARCH finds an arch by Go's name for it.
func ByGOARCH(goarch string) (Arch, error) {
	for _, a := range table {
		if a.GOARCH == goarch {
			return a, nil
		}
	}
	return Arch{}, fmt.Errorf("no arch of the suite has GOARCH %s", goarch)
}

// Known says whether name is an arch of the table.
func Known(name string) bool {
	_, ok := table[name]
	return ok
}

// String is the user's name for the arch; "" for none.
func (a Arch) String() string { return a.Name }

// Set makes -arch a flag of this type: an unknown name is refused as the
// flag is parsed, before anything is built or booted.
func (a *Arch) Set(name string) error {
	if name == "" {
		*a = Arch{} // ARCH= left empty by make: said later, with the other checks
		return nil
	}
	found, err := Lookup(name)
	if err != nil {
		return err
	}
	*a = found
	return nil
}

// MarshalText writes an arch by its name, so that files holding a request
// (result.json, a LAVA job's description) keep a plain string.
func (a Arch) MarshalText() ([]byte, error) { return []byte(a.Name), nil }

// UnmarshalText reads an arch written by MarshalText.
func (a *Arch) UnmarshalText(b []byte) error { return a.Set(string(b)) }

// List is a comma-separated list of arches, as -arches takes it.
type List []Arch

func (l List) String() string {
	names := make([]string, len(l))
	for i, a := range l {
		names[i] = a.Name
	}
	return strings.Join(names, ",")
}

// Set reads the list, every name checked.
func (l *List) Set(v string) error {
	*l = nil
	for _, name := range strings.Split(v, ",") {
		a, err := Lookup(name)
		if err != nil {
			return err
		}
		*l = append(*l, a)
	}
	return nil
}

// All is every arch of the table, in Names' order.
func All() List {
	var l List
	for _, n := range Names() {
		l = append(l, table[n])
	}
	return l
}
