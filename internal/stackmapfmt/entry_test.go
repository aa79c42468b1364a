// SPDX-License-Identifier: GPL-2.0-only

package stackmapfmt

import (
	"regexp"
	"testing"
)

// entryRE is what cutEntry does by hand, as a regular expression.
var entryRE = regexp.MustCompile(`^\s*.+-(\d+)\s+\[(\d+)\]\s+(\S+)\s+(\d+)(?:\.(\d+))?:\s(.*)$`)

// TestCutEntryIsTheRegularExpression holds the hand-cut entry to the
// line's grammar on the shapes trace prints and on near misses.
func TestCutEntryIsTheRegularExpression(t *testing.T) {
	for _, line := range []string{
		"     suites.test-40     [000] .....  101: sched_process_fork: comm=suites.test pid=40",
		"  sh-1 [000] d..1.  1.000003: <stack_id 7>",
		"  kworker/0:1-12 [001] d.h1.  12.5: irq_handler_entry: irq=1 name=[x]",
		"  <...>-7 [000] ...1.  3: <stack trace>",
		"  a-b-c-99 [002] ....  4.1: body with - and [3] in it",
		"  sh-1 [000] d..1.  1.0:",
		"  sh-1 [000] d..1.  1.0:x",
		"  sh-1 [00a] d..1.  1.0: x",
		"  sh-x [000] d..1.  1.0: x",
		"sh-1 [000] d..1. 1.0: x",
		"  sh-1 [000]  1.0: x",
		"  sh-1 [000] d..1.  1.: x",
		" => frame+0x1/0x2",
		"CPU:0 [LOST 12 EVENTS]",
		"# tracer: nop",
		"",
	} {
		m := entryRE.FindStringSubmatch(line)
		e, ok := cutEntry(line)
		if ok != (m != nil) {
			t.Errorf("%q: cut %v, the expression %v", line, ok, m != nil)
			continue
		}
		if ok && (e.pid != m[1] || e.cpu != m[2] || e.flags != m[3] || e.whole != m[4] || e.frac != m[5] || e.body != m[6]) {
			t.Errorf("%q: cut %+v, the expression %q", line, e, m[1:])
		}
	}
}
