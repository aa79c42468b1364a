// SPDX-License-Identifier: GPL-2.0-only

package qemu

import "strings"

// Port is a virtio-serial port the guest finds by Name, whose bytes QEMU
// writes to File.
type Port struct {
	Name, File string
}

// args are the QEMU options that give the guest the port.
func (p *Port) args(bus string) []string {
	// A comma in a chardev option is written twice.
	file := strings.ReplaceAll(p.File, ",", ",,")
	return []string{"-device", bus, "-chardev", "file,id=smct-reports,path=" + file,
		"-device", "virtserialport,chardev=smct-reports,name=" + p.Name}
}
