// SPDX-License-Identifier: GPL-2.0-only

package reply

import "slices"

// defects are the known defects of the postings (CONTRACT.md), by the
// requirement whose failure shows one, in the contract's words.
var defects = []struct {
	ids     []string
	profile string // "" for any
	text    string
}{
	{[]string{"SM-BOOT-03"}, "", "A bare ftrace_stackmap.bits crashes the boot (SM-BOOT-03): in v3 and v4 the parameter handler hands its value, NULL without \"=\", straight to kstrtoul."},
	{[]string{"SM-BIN-01", "SM-RESET-05", "SM-DEPTH-01"}, "v4", "v3's binary magic and reset: v3's magic does not spell what its documentation says, v3 keeps the ring buffer across a reset and cuts deep stacks; v4 changed all three (SM-BIN-01, SM-RESET-05, SM-DEPTH-01)."},
}

// selftestDefect is the posted selftests' defect, shown by a .tc file
// that takes its stacks from options/stacktrace.
const selftestDefect = "Posted selftests that record no stacks: a .tc that sets options/stacktrace and runs the function tracer records no stack (the function tracer reads func_stack_trace), so it fails on every kernel."

// Defects are the known defects a run that failed ids under profile hit.
func Defects(failed []string, profile string, selftests bool) []string {
	var out []string
	for _, d := range defects {
		if d.profile != "" && d.profile != profile {
			continue
		}
		if slices.ContainsFunc(d.ids, func(id string) bool { return slices.Contains(failed, id) }) {
			out = append(out, d.text)
		}
	}
	if selftests {
		out = append(out, selftestDefect)
	}
	return out
}
