// SPDX-License-Identifier: GPL-2.0-only

// Package kernellog finds what a kernel's log says went wrong: a warning,
// an oops, a stall, a sanitizer's report. The host judges each boot's log
// with it, and the guest's init, for a runner that reads only the console
// (a LAVA job), with the same rule.
package kernellog

import (
	"regexp"
	"strings"
)

// trouble matches the first line of what a kernel prints when it warns,
// oopses or stalls.
var trouble = regexp.MustCompile(`WARNING: |BUG: |kernel BUG at |Oops|general protection fault|soft lockup|hard LOCKUP|rcu: INFO: |self-detected stall|Unable to handle kernel|UBSAN: |KASAN: |KFENCE: |list_(add|del) corruption|INFO: task .* blocked for more than`)

// Trouble says whether one line of a kernel's log reports trouble.
func Trouble(line string) bool { return trouble.MatchString(line) }

// Problems returns the lines of a kernel log that report trouble.
func Problems(dmesg []byte) []string {
	var out []string
	for _, l := range strings.Split(string(dmesg), "\n") {
		if trouble.MatchString(l) {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}
