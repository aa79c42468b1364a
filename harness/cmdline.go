// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"os"
	"strconv"
	"strings"
)

// KernelParam finds key=value on the kernel command line, the last one
// winning as in the kernel; bare reports a lone key without "=", which
// u-root's cmdline package cannot tell from "key=". A command line that
// cannot be read makes the spec UNRESOLVED.
func KernelParam(key string) (value string, set, bare bool) {
	b, err := os.ReadFile("/proc/cmdline")
	Must(err, "reading /proc/cmdline")
	for _, w := range strings.Fields(string(b)) {
		if w == key {
			value, set, bare = "", false, true
		} else if v, ok := strings.CutPrefix(w, key+"="); ok {
			value, set, bare = v, true, false
		}
	}
	return value, set, bare
}

// KernelUint reads a number as the kernel's kstrtouint with base 0 does:
// 0x hex, 0 octal or decimal, nothing else (no sign, no underscores).
func KernelUint(s string) (uint64, bool) {
	if strings.ContainsAny(s, "_+-") {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 0, 32)
	return n, err == nil
}
