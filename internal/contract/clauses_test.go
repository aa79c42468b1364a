// SPDX-License-Identifier: GPL-2.0-only

package contract

import "testing"

// TestClauseMark: what the suite writes, the reports read back.
func TestClauseMark(t *testing.T) {
	for _, tc := range []struct{ msg, id, rest string }{
		{ClauseMark("SM-STAT-03.4", "entries 1008 of 1024"), "SM-STAT-03.4", "entries 1008 of 1024"},
		{ClauseMark("BASE-TRACEFS-01.1", ""), "BASE-TRACEFS-01.1", ""},
		{"[SM-STAT-03.4] a\nExpected", "SM-STAT-03.4", "a\nExpected"},
		{"[SM-NOPE-01.1] unknown requirement", "", "[SM-NOPE-01.1] unknown requirement"},
		{"[SM-STAT-03] a requirement, no clause", "", "[SM-STAT-03] a requirement, no clause"},
		{"SM-STAT-01 is broken: [SM-STAT-01.3] not at the start", "", "SM-STAT-01 is broken: [SM-STAT-01.3] not at the start"},
	} {
		if id, rest := ClauseOf(tc.msg); id != tc.id || rest != tc.rest {
			t.Errorf("ClauseOf(%q) = %q, %q; want %q, %q", tc.msg, id, rest, tc.id, tc.rest)
		}
	}
	for id, want := range map[string]string{"SM-STAT-03.4": "SM-STAT-03", "SM-STAT-03": "", "SM-STAT-03.x": "", "SM-NOPE-01.1": "", "SM-STAT-03.": ""} {
		if got := RequirementOf(id); got != want {
			t.Errorf("RequirementOf(%q) = %q, want %q", id, got, want)
		}
	}
}
