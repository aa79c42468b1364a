// SPDX-License-Identifier: GPL-2.0-only

// Package arch is the one table of what the suite knows about each arch it
// runs on: Go's, Debian's and the kernel's names for it, how to cross-build
// its kernel, and how QEMU boots it. A third arch is one more row here.
package arch

import (
	"fmt"
	"sort"
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

	// Booting it: the QEMU binary and its package, machine and CPU, the
	// kernel's name for the serial port, and earlycon= for the same UART.
	// cortex-a57 avoids the cost of emulating pointer authentication.
	QEMU, QEMUPkg     string
	Machine           []string
	Console, EarlyCon string
}

var table = map[string]Arch{
	"arm64": {Name: "arm64", GOARCH: "arm64", Deb: "arm64",
		KernelArch: "arm64", Cross: "aarch64-linux-gnu-", Compiler: "aarch64-linux-gnu-gcc", CompilerPkg: "gcc-aarch64-linux-gnu",
		KernelTarget: "Image", BootImage: "arch/arm64/boot/Image",
		QEMU: "qemu-system-aarch64", QEMUPkg: "qemu-system-arm", Machine: []string{"-M", "virt", "-cpu", "cortex-a57"},
		Console: "ttyAMA0", EarlyCon: "pl011,0x9000000"},
	// x86_64 boots the ELF vmlinux directly (PVH): no decompression.
	"x86_64": {Name: "x86_64", GOARCH: "amd64", Deb: "amd64",
		KernelArch: "x86_64", Compiler: "gcc", CompilerPkg: "build-essential",
		KernelTarget: "bzImage", BootImage: "vmlinux",
		QEMU: "qemu-system-x86_64", QEMUPkg: "qemu-system-x86", Machine: []string{"-M", "q35", "-cpu", "qemu64"},
		Console: "ttyS0", EarlyCon: "uart8250,io,0x3f8"},
}

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

// Known says whether name is an arch of the table.
func Known(name string) bool {
	_, ok := table[name]
	return ok
}
