// SPDX-License-Identifier: GPL-2.0-only

package stackmapfmt

import (
	"regexp"
	"testing"
)

// frameLine reads exactly the lines `^  \[(\d+)\] (.+)$` matches.
func TestFrameLineIsTheRegexp(t *testing.T) {
	re := regexp.MustCompile(`^  \[(\d+)\] (.+)$`)
	for _, line := range []string{"  [0] do_sys_open+0x1c/0x30", "  [12] a] b", "  [] x", "  [1] ", "  [1]x", " [1] x",
		"  [1a] x", "  [-1] x", "   [1] x", "  [1] \t", "  [007] x y z", "  [1]  two spaces", "x  [1] y", ""} {
		m := re.FindStringSubmatch(line)
		index, frame, ok := frameLine(line)
		if ok != (m != nil) || (ok && (index != m[1] || frame != m[2])) {
			t.Errorf("%q: frameLine = %q %q %v, regexp %q", line, index, frame, ok, m)
		}
	}
}

// The hand-written readers of trace's lines agree with the regular
// expressions they stand for, on lines near the edges of each.
func TestHandReadersAreTheRegexps(t *testing.T) {
	symDetailRE := regexp.MustCompile(` <[0-9a-f]{8,16}>|\+0x[0-9a-f]+/0x[0-9a-f]+`)
	stackIDRE := regexp.MustCompile(`<stack_id (\d+)>$`)
	lines := []string{
		"", "<stack_id 0>", "x <stack_id 12>", "<stack_id >", "<stack_id 1a>", "<stack_id <stack_id 5>", "<stack_id 5> ",
		"<stack_id 5>>", " => do_sys_open+0x1c/0x30 <ffff800080123456>", "f+0x/0x1", "f+0x1/0x", "f+0x1/0x2/0x3",
		" <1234567> x", " <12345678>", " <12345678901234567>", " <ffffffffffffffff>", " <FFFFFFFF>", "a+0xg/0x1",
		"kworker/0:1-12 [000] d.h1. 1.0: function: f+0x4/0x140 <ffff000012345678> <- g+0x8/0x10 <ffff000012345679>",
		" <12345678+0x1/0x2>", "+0x+0x1/0x2", " < <12345678>",
	}
	for _, l := range lines {
		if got, want := withoutAddrs(l), symDetailRE.ReplaceAllString(l, ""); got != want {
			t.Errorf("withoutAddrs(%q) = %q, the regexp %q", l, got, want)
		}
		m := stackIDRE.FindStringSubmatch(l)
		id, ok := trailingStackID(l)
		if ok != (m != nil) || (ok && id != m[1]) {
			t.Errorf("trailingStackID(%q) = %q %v, the regexp %q", l, id, ok, m)
		}
	}
}
