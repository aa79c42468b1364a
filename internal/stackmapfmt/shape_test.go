// SPDX-License-Identifier: GPL-2.0-only

package stackmapfmt

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const event = "  sh-1 [000] d..1.  1.0: sched_process_exec: filename=/workload pid=2 old_pid=2\n"

// Every malformed shape is found and owned by its requirement; every
// well-formed trace passes.
func TestCheckTrace(t *testing.T) {
	header := "# tracer: nop\n#\n#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
	for _, c := range []struct {
		name, trace, owner string
	}{
		{"ids and full stacks", header + event + idLine(3) + event + fullStack(3) + event, ""},
		{"a stack whose event was overwritten", fullStack(2) + event + idLine(0), ""},
		{"lost events", event + "CPU:0 [LOST 12 EVENTS]\n" + idLine(4) + event + idLine(4), ""},
		{"an irq's event between an event and its stack", event + "  sh-1 [000] d.h1.  1.0: irq_handler_entry: irq=1\n" +
			"  sh-1 [000] d.h1.  1.0: <stack_id 7>\n" + idLine(3), ""},
		{"the counter clock", "  sh-1 [000] d..1.   41: sched_process_exec: pid=1\n  sh-1 [000] d..1.   42: <stack_id 7>\n", ""},
		{"two CPUs", event + "  sh-2 [001] d..1.  1.0: <stack_id 7>\n" + idLine(3), ""},
		{"a negative id", event + "  sh-1 [000] d..1.  1.0: <stack_id -28>\n", OwnerIDLine},
		{"a hex id", event + "  sh-1 [000] d..1.  1.0: <stack_id 0x1c>\n", OwnerIDLine},
		{"a leading zero", event + "  sh-1 [000] d..1.  1.0: <stack_id 07>\n", OwnerIDLine},
		{"a word", event + "  sh-1 [000] d..1.  1.0: <stack_id abc>\n", OwnerIDLine},
		{"trailing text", event + "  sh-1 [000] d..1.  1.0: <stack_id 7> x\n", OwnerIDLine},
		{"an id and a full stack for one event", event + idLine(3) + fullStack(4), OwnerFullStack},
		{"two ids for one event", event + idLine(3) + idLine(3), OwnerFullStack},
		{"a full stack with no frame", event + fullStack(0) + event, OwnerFullStack},
		{"a frame with no stack", event + " => f+0x1/0x10\n", OwnerFullStack},
		{"a line of no shape", event + "garbage\n", OwnerFullStack},
	} {
		got := CheckTrace(c.trace)
		switch {
		case c.owner == "" && len(got) > 0:
			t.Errorf("%s: %v, want none", c.name, got[0])
		case c.owner != "" && (len(got) != 1 || got[0].Owner != c.owner):
			t.Errorf("%s: %v, want one problem of %s", c.name, got, c.owner)
		}
	}
	if p := CheckTrace(event + "  sh-1 [000] d..1.  1.0: <stack_id -28>\n"); len(p) == 1 && (p[0].Line != 2 || !strings.Contains(p[0].Error(), "-28")) {
		t.Errorf("the problem does not name its line: %v", p[0])
	}
	// Two stacks in a row: the report names the first too, so the pair
	// can be read without the trace.
	if p := CheckTrace(event + idLine(3) + idLine(5)); len(p) != 1 || p[0].Line != 3 || !strings.Contains(p[0].Error(), "the first: line 2 ") {
		t.Errorf("a second stack does not name the first: %v", p)
	}
}

// What the reference kernel wrote (claims boots on arm64, first lines of
// trace; SM-DEPTH-01's chain of nested events on x86_64) fits the shapes.
func TestCheckTraceRecorded(t *testing.T) {
	files, _ := filepath.Glob("../claims/testdata/trace-*.txt")
	nested, _ := filepath.Glob("testdata/trace-*.txt")
	files = append(files, nested...)
	if len(files) == 0 {
		t.Fatal("no recorded trace")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if p := CheckTrace(string(b)); len(p) > 0 {
			t.Errorf("%s: %v", f, p[0])
		}
	}
}

// Nested events' stacks come back to back, one preempt level apart; from
// depth 15 trace shows every level as "f". The recorded chain, started
// three levels deeper (as in softirq), is still one stack per event, and a
// stack more than its events at "f" is still a second stack.
func TestCheckTraceNestedAtDepthF(t *testing.T) {
	b, err := os.ReadFile("testdata/trace-nested-x86_64.txt")
	if err != nil {
		t.Fatal(err)
	}
	deeper := deeperBy(string(b), 3)
	if !strings.Contains(deeper, "bN.f.     4.769943: <stack_id 4229>\n     suites.test-46      [000] bN.f.     4.770028: <stack_id 4217>") {
		t.Fatal("the shifted trace has no two stacks in a row at depth f: the case is not made")
	}
	if p := CheckTrace(deeper); len(p) > 0 {
		t.Errorf("nested events at depth f: %v", p[0])
	}
	extra := strings.Replace(deeper, "<stack_id 4217>\n", "<stack_id 4217>\n     suites.test-46      [000] bN.f.     4.770029: <stack_id 9>\n", 1)
	if p := CheckTrace(extra); len(p) != 1 || !strings.Contains(p[0].Text, "<stack_id 9>") {
		t.Errorf("a stack more than the events at depth f: %v, want one problem on <stack_id 9>", p)
	}
}

// deeperBy adds levels to every entry's preempt depth, shown up to f.
func deeperBy(trace string, levels int) string {
	return regexp.MustCompile(`(\[\d+\] \S{3})([0-9a-f])`).ReplaceAllStringFunc(trace, func(m string) string {
		d, _ := strconv.ParseInt(m[len(m)-1:], 16, 0)
		return m[:len(m)-1] + strconv.FormatInt(min(d+int64(levels), 15), 16)
	})
}
