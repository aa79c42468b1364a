// SPDX-License-Identifier: GPL-2.0-only

// Package ftracetest reads what a kernel tree's own ftrace selftests
// (tools/testing/selftests/ftrace/ftracetest) printed in the guest: one
// verdict per .tc file, in ftracetest's own classes, with the log of each
// test that did not pass.
package ftracetest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/textlines"
)

// Case is one selftest's verdict.
type Case struct {
	No     int
	File   string // the .tc file, relative to the selftests directory
	Name   string // its description
	Result string // PASS, FAIL, UNRESOLVED, UNTESTED, UNSUPPORTED, XFAIL or UNDEFINED
	Log    string // what it printed, for a test that did not pass
	// Hint explains a failure the test brings on itself, when its text
	// shows a known mistake (see Diagnose).
	Hint string
}

// Passed says whether the case counts as passed in ftracetest's terms.
func (c Case) Passed() bool { return c.Result == "PASS" || c.Result == "XFAIL" }

// Failed says whether the case is a failure or could not be decided.
func (c Case) Failed() bool {
	return c.Result == "FAIL" || c.Result == "UNRESOLVED" || c.Result == "UNDEFINED"
}

// caseStart begins ftracetest's line for one test, "[N] description", and
// verdict ends it, "\t[RESULT]" (without colours: the guest's output is not
// a terminal). A test's exit trap may print between the two, under set -x.
var (
	caseStart = regexp.MustCompile(`^\[(\d+)\]\s*(.*)$`)
	verdict   = regexp.MustCompile(`\[(PASS|FAIL|UNRESOLVED|UNTESTED|UNSUPPORTED|XFAIL|UNDEFINED)\]\s*$`)
)

// logHeader heads each kept log: "==> N-name.tc-log.XXXXXX <==".
var logHeader = regexp.MustCompile(`(?m)^==> (\d+)-\S+ <==$`)

// Parse reads ftracetest's output and kept logs for the tests it was
// given, in that order (ftracetest numbers them so). A test without a
// verdict line, or a verdict for a test it was not given, is an error:
// the output was cut or is not ftracetest's.
func Parse(out, logs string, tests []string) ([]Case, error) {
	var cases []Case
	open := false // a case has started and has no verdict yet
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimRight(l, "\r")
		if m := caseStart.FindStringSubmatch(l); m != nil && !open {
			n, _ := strconv.Atoi(m[1])
			if n != len(cases)+1 || n > len(tests) {
				return nil, fmt.Errorf("ftracetest: test [%d] out of order or beyond the %d tests given", n, len(tests))
			}
			// The description ends at the tab before the verdict, or
			// where a trap's trace ("+ cmd") cuts in.
			name, _, _ := strings.Cut(m[2], "\t")
			name, _, _ = strings.Cut(name, "+ ")
			cases = append(cases, Case{No: n, File: tests[n-1], Name: strings.TrimSpace(verdict.ReplaceAllString(name, ""))})
			open = true
		}
		if m := verdict.FindStringSubmatch(l); m != nil && open {
			cases[len(cases)-1].Result = m[1]
			open = false
		}
	}
	if open {
		cases = cases[:len(cases)-1]
	}
	if len(cases) != len(tests) {
		return cases, fmt.Errorf("ftracetest gave %d verdicts for %d tests; its output ends:\n%s", len(cases), len(tests), textlines.Tail(out, 10))
	}
	locs := logHeader.FindAllStringSubmatchIndex(logs, -1)
	for i, loc := range locs {
		n, _ := strconv.Atoi(logs[loc[2]:loc[3]])
		end := len(logs)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		if n >= 1 && n <= len(cases) {
			cases[n-1].Log = strings.TrimSpace(logs[loc[1]:end])
		}
	}
	return cases, nil
}

// Totals counts the cases in ftracetest's summary terms.
func Totals(cases []Case) (passed, failed, other int) {
	for _, c := range cases {
		switch {
		case c.Passed():
			passed++
		case c.Failed():
			failed++
		default:
			other++
		}
	}
	return
}

// Tail returns the last n lines the test printed itself: its log without
// the shell's trace of each command (lines starting "+ ") and blank lines.
func (c Case) Tail(n int) []string {
	var own []string
	for _, l := range strings.Split(c.Log, "\n") {
		if !strings.HasPrefix(l, "+") {
			own = append(own, l)
		}
	}
	return textlines.Last(strings.Join(own, "\n"), n)
}

var (
	functionTracer = regexp.MustCompile(`echo\s+function\s*>\s*current_tracer`)
	stacktraceOpt  = regexp.MustCompile(`echo\s+1\s*>\s*options/stacktrace|stacktrace\s*>\s*trace_options`)
	funcStackTrace = regexp.MustCompile(`func_stack_trace`)
)

// Diagnose reads a .tc file for a recipe known to record no stacks: the
// function tracer with options/stacktrace, which only events read; the
// function tracer records stacks with its own func_stack_trace option. It
// returns the explanation, or "".
func Diagnose(tc string) string {
	if functionTracer.MatchString(tc) && stacktraceOpt.MatchString(tc) && !funcStackTrace.MatchString(tc) {
		return "the test takes its stacks from the function tracer with options/stacktrace, which records none: the function tracer records stacks only with func_stack_trace (CONTRACT.md, known defects of the postings)"
	}
	return ""
}
