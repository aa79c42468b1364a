// SPDX-License-Identifier: GPL-2.0-only

package ftracetest

import (
	"strings"
	"testing"
)

// Output as ftracetest prints it without a terminal, with two kept logs.
const out = `=== Ftrace unit tests ===
[1] Basic trace file check	[PASS]
[2] stackmap: basic dedup+ cleanup
+ echo nop
	[FAIL]
[3] stackmap: reset	[UNSUPPORTED]


# of passed:  1
# of failed:  1
# of unsupported:  1
`

const logs = `==> 2-stackmap-basic.tc-log.a1B2c3 <==
execute: /ftrace/test.d/ftrace/stackmap-basic.tc
+ grep -q stack_id trace
FAIL: no stack_id in trace
==> 3-stackmap-reset.tc-log.zZ9 <==
execute: /ftrace/test.d/ftrace/stackmap-reset.tc
`

func TestParse(t *testing.T) {
	tests := []string{"test.d/00basic/basic1.tc", "test.d/ftrace/stackmap-basic.tc", "test.d/ftrace/stackmap-reset.tc"}
	cases, err := Parse(out, logs, tests)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 3 || cases[1].Result != "FAIL" || cases[1].File != tests[1] || cases[1].Name != "stackmap: basic dedup" {
		t.Fatalf("Parse() = %+v", cases)
	}
	if !strings.Contains(cases[1].Log, "grep -q stack_id trace") || strings.Contains(cases[1].Log, "reset") || cases[0].Log != "" {
		t.Fatalf("logs went to the wrong cases: %+v", cases)
	}
	if tail := cases[1].Tail(3); len(tail) != 2 || tail[1] != "FAIL: no stack_id in trace" {
		t.Fatalf("Tail() = %q, want the test's own lines without the shell trace", tail)
	}
	if p, f, o := Totals(cases); p != 1 || f != 1 || o != 1 {
		t.Fatalf("Totals() = %d %d %d", p, f, o)
	}
}

func TestParseRefusesCutOutput(t *testing.T) {
	tests := []string{"a.tc", "b.tc", "c.tc"}
	if _, err := Parse("[1] a\t[PASS]\n", "", tests); err == nil || !strings.Contains(err.Error(), "1 verdicts for 3 tests") {
		t.Fatalf("Parse(cut) = %v", err)
	}
	if _, err := Parse("[2] b\t[PASS]\n", "", tests); err == nil {
		t.Fatal("Parse(verdict out of order) accepted it")
	}
}

func TestDiagnose(t *testing.T) {
	broken := "echo 1 > options/stacktrace\necho stackmap > trace_options\necho function > current_tracer\n"
	if Diagnose(broken) == "" {
		t.Error("Diagnose(function tracer + stacktrace) found nothing")
	}
	for name, tc := range map[string]string{
		"func_stack_trace": broken + "echo 1 > options/func_stack_trace\n",
		"an event":         "echo 1 > options/stacktrace\necho 1 > events/sched/sched_switch/enable\n",
	} {
		if d := Diagnose(tc); d != "" {
			t.Errorf("Diagnose(%s) = %q, want nothing", name, d)
		}
	}
}
