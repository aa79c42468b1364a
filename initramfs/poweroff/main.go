// SPDX-License-Identifier: GPL-2.0-only

// Command poweroff is the init of the floor boot (smct bench): it powers
// the machine off at once, so the boot costs only the kernel and QEMU.
package main

import "golang.org/x/sys/unix"

func main() {
	unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	// As the suite's init: without ACPI, -no-reboot turns a restart into an exit.
	unix.Reboot(unix.LINUX_REBOOT_CMD_RESTART)
	select {}
}
