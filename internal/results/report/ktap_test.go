// SPDX-License-Identifier: GPL-2.0-only

package report

import (
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/contract"
)

// TestClassDirectives: the one mapping from the contract's classes to
// KTAP, and the totals counted from it.
func TestClassDirectives(t *testing.T) {
	var k KTAP
	k.Class("default.SM-NODE-01", contract.Pass, false, "")
	k.Class("default.SM-BIN-01", contract.Unsupported, false, "no stack_map\n# not a directive")
	k.Class("default.SM-RESET-01", contract.Fail, false, "accepted")
	k.Class("default.SM-OPT-01", contract.Unresolved, false, "cannot write")
	k.Class("default.SM-ROBUST-01", contract.Unresolved, true, "A spec timeout occurred")
	k.Class("full-map.SM-STAT-03", contract.Fail, false, "[SM-STAT-03.4] entries 1008 of 1024")
	want := `KTAP version 1
1..6
ok 1 default.SM-NODE-01
ok 2 default.SM-BIN-01 # SKIP no stack_map _ not a directive
not ok 3 default.SM-RESET-01
not ok 4 default.SM-OPT-01 # ERROR cannot write
not ok 5 default.SM-ROBUST-01 # TIMEOUT A spec timeout occurred
not ok 6 full-map.SM-STAT-03 # SM-STAT-03.4
# Totals: pass:1 fail:2 xfail:0 xpass:0 skip:1 error:2
`
	if got := k.String(); got != want {
		t.Errorf("KTAP =\n%s\nwant\n%s", got, want)
	}
}

// TestNest: a subtest is indented under its parent's result line, keeps
// its own numbering and plan, and stays out of the parent's totals.
func TestNest(t *testing.T) {
	var k, sub, inner KTAP
	inner.Result(true, "a", "XFAIL")
	sub.Nest("inner", &inner)
	sub.Result(inner.Passed(), "inner", "")
	sub.Class("b", contract.Unresolved, false, "why")
	k.Nest("outer", &sub)
	k.Result(sub.Passed(), "outer", "")
	want := `KTAP version 1
1..1
  KTAP version 1
  # Subtest: outer
  1..2
    KTAP version 1
    # Subtest: inner
    1..1
    ok 1 a # XFAIL
  ok 1 inner
  not ok 2 b # ERROR why
not ok 1 outer
# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0
`
	if got := k.String(); got != want {
		t.Errorf("KTAP =\n%s\nwant\n%s", got, want)
	}
}
