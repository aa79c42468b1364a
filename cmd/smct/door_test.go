// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/matrix"
	"github.com/ftrace-stackmap/conformance/internal/mutants"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
	"github.com/ftrace-stackmap/conformance/internal/review"
)

var closingLine = regexp.MustCompile(`^\d+ passed, \d+ failed, \d+ skipped$`)

// The placeholders of a refusal's command line: EXIT the convention's
// flag, DIR a fresh directory, NOTLOG a file that is not LAVA's log.
const exitFlag, dirArg, notLogArg = "EXIT", "DIR", "NOTLOG"

// Every command's refusals and no-verdict paths that end before a boot,
// under both conventions: each ends with a NO VERDICT line, then the
// closing line, and the convention's status for no verdict.
func TestEveryRefusalEndsAtTheDoor(t *testing.T) {
	// No lab token from this machine: lava -server has none.
	t.Setenv("SMCT_CACHE", t.TempDir())
	t.Setenv("LAB_TOKEN", "")
	cases := []struct {
		name   string
		args   []string
		origin string // KCIDB_ORIGIN=
	}{
		{"no command", []string{exitFlag}, ""},
		{"unknown command", []string{"frobnicate", exitFlag}, ""},
		{"origin KCIDB refuses", []string{"reply", exitFlag}, "My-Lab"},
		{"qemu-test: no arch", []string{"qemu-test", exitFlag, "-results", dirArg}, ""},
		// Parsing stops at the bad flag, before the convention.
		{"qemu-test: bad seed first", []string{"qemu-test", "-results", dirArg, "-seed", "many", exitFlag}, ""},
		{"qemu-test: stray argument", []string{"qemu-test", exitFlag, "-results", dirArg, "-arch", "x86_64", "stray"}, ""},
		{"claims: missing sample", []string{"claims", exitFlag, "-sample", "no-such-sample.json"}, ""},
		{"claims: bad profile", []string{"claims", exitFlag, "-profile", "v9"}, ""},
		{"kernel: no arch", []string{"kernel", exitFlag}, ""},
		{"kernel: unknown flag", []string{"kernel", "-arch", "x86_64", "-no-such-flag", exitFlag}, ""},
		{"mutants: unknown fault", []string{"mutants", exitFlag, "-results", dirArg, "-arch", "x86_64", "-faults", "no-such-fault"}, ""},
		{"matrix: unknown entry", []string{"matrix", exitFlag, "-results", dirArg, "-images", "no-such-entry"}, ""},
		{"matrix -lava-jobs: no lock", []string{"matrix", exitFlag, "-results", dirArg, "-lava-jobs", "-lock", "no-such.lock"}, ""},
		{"bench: no repetitions", []string{"bench", exitFlag, "-results", dirArg, "-reps", "0"}, ""},
		{"review: no series", []string{"review", exitFlag, "-results", dirArg}, ""},
		{"reply: no run", []string{"reply", exitFlag, "-run", "no-such-run"}, ""},
		{"reply: no reply.eml", []string{"reply", exitFlag, "-run", dirArg}, ""},
		{"lava: bad notify", []string{"lava", exitFlag, "-results", dirArg, "-arch", "x86_64", "-notify", "ftp://lab"}, ""},
		{"lava -server: no token", []string{"lava", exitFlag, "-results", dirArg, "-arch", "x86_64", "-server", "http://127.0.0.1:9"}, ""},
		{"lava-results: no log", []string{"lava-results", exitFlag, "-results", dirArg}, ""},
		{"lava-results: not a log", []string{"lava-results", exitFlag, "-results", dirArg, notLogArg}, ""},
		{"lava-results: missing log", []string{"lava-results", exitFlag, "-results", dirArg, "no-such.log"}, ""},
		{"lava-results: several non-logs", []string{"lava-results", exitFlag, "-results", dirArg, notLogArg, notLogArg}, ""},
		{"cache: stray argument", []string{"cache", exitFlag, "stray"}, ""},
	}
	walked := map[string]bool{}
	for _, tc := range cases {
		walked[tc.args[0]] = true
		for _, codes := range []report.ExitCodes{report.ExitCodesSmct, report.ExitCodesKselftest} {
			t.Run(tc.name+"/"+codes.String(), func(t *testing.T) {
				if tc.origin != "" {
					t.Setenv("KCIDB_ORIGIN", tc.origin)
				}
				args := make([]string, len(tc.args))
				for i, a := range tc.args {
					switch a {
					case exitFlag:
						a = "-exit-codes=" + codes.String()
					case dirArg:
						a = t.TempDir()
					case notLogArg:
						a = filepath.Join(t.TempDir(), "console.log")
						os.WriteFile(a, []byte("[    0.000000] Linux version 6.12\nSMCT-EXIT code=0\n"), 0o644)
					}
					args[i] = a
				}
				var stdout strings.Builder
				code := smct(args, &stdout, io.Discard)
				checkNoVerdict(t, code, codes, stdout.String())
			})
		}
	}
	for _, c := range commands {
		if !walked[c.name] {
			t.Errorf("no refusal of %s is walked", c.name)
		}
	}
}

// A command line that says nothing ends without a verdict, in smct's
// convention: there is none other to read.
func TestEmptyCommandLine(t *testing.T) {
	var stdout strings.Builder
	checkNoVerdict(t, smct(nil, &stdout, io.Discard), report.ExitCodesSmct, stdout.String())
}

// Help is not a run: status 0 whatever the convention.
func TestHelpIsZero(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"qemu-test", "-exit-codes=kselftest", "-h"}, {"lava-results", "-h"}} {
		if code := smct(args, io.Discard, io.Discard); code != 0 {
			t.Errorf("smct %v: exit %d, want 0", args, code)
		}
	}
}

// Every command takes -exit-codes: the door applies it on every path.
func TestEveryCommandTakesExitCodes(t *testing.T) {
	for _, c := range commands {
		if _, ok := flagNamed(c, "exit-codes"); !ok {
			t.Errorf("%s has no -exit-codes", c.name)
		}
	}
}

// checkNoVerdict: the convention's status for no verdict, a closing line
// last and a NO VERDICT line before it.
func checkNoVerdict(t *testing.T, code int, codes report.ExitCodes, out string) {
	t.Helper()
	want := map[report.ExitCodes]int{report.ExitCodesSmct: 2, report.ExitCodesKselftest: 5}[codes]
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	last := lines[len(lines)-1]
	if code != want || !closingLine.MatchString(last) || !hasNoVerdict(lines[:len(lines)-1]) {
		t.Errorf("exit %d, stdout:\n%s\nwant exit %d, a NO VERDICT line, then a closing line", code, out, want)
	}
}

func hasNoVerdict(lines []string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, "NO VERDICT: ") {
			return true
		}
	}
	return false
}

// The door, given outcomes the paths after a boot return: the end it
// prints and the status in each convention.
func TestDoorEndsOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		o         outcome
		end       string // the last lines printed
		smct, ksf int
	}{
		{"counted without a verdict", outcome{body: "table\n", status: exitNoVerdict, reason: "1 specs UNRESOLVED", passed: 2, failed: 1, counted: true},
			"table\nNO VERDICT: 1 specs UNRESOLVED\n2 passed, 1 failed, 0 skipped\n", 2, 5},
		{"no verdict, no reason", outcome{status: exitNoVerdict},
			"NO VERDICT: no reason given\n" + noneCounted + "\n", 2, 5},
		{"a reason is no verdict", outcome{reason: "cut", counted: true, passed: 3},
			"NO VERDICT: cut\n3 passed, 0 failed, 0 skipped\n", 2, 5},
		{"passed", outcome{counted: true, passed: 3, skipped: 1}, "3 passed, 0 failed, 1 skipped\n", 0, 0},
		{"all skipped", outcome{counted: true, skipped: 4}, "0 passed, 0 failed, 4 skipped\n", 0, 4},
		{"failed", outcome{status: exitFailed, counted: true, passed: 1, failed: 1}, "1 passed, 1 failed, 0 skipped\n", 1, 1},
		{"an answer", outcome{body: "/cache/Image\n"}, "/cache/Image\n", 0, 0},
	} {
		for codes, want := range map[report.ExitCodes]int{report.ExitCodesSmct: tc.smct, report.ExitCodesKselftest: tc.ksf} {
			var out strings.Builder
			if code := tc.o.end(&out, codes); code != want || !strings.HasSuffix(out.String(), tc.end) {
				t.Errorf("%s, %s: exit %d, %q; want %d, ending %q", tc.name, codes, code, out.String(), want, tc.end)
			}
		}
	}
}

// A run whose counted specs leave it without a verdict (UNRESOLVED)
// says why before its closing line, which keeps its counts.
func TestFinishOfAnUnresolvedRun(t *testing.T) {
	spec := func(name string, c contract.Class) report.Spec {
		return report.Spec{Name: "default." + name, Boot: contract.DefaultBoot, Text: name, IDs: []string{name}, Class: c}
	}
	res := &results.Result{Dir: t.TempDir(), Summary: report.Summary{Succeeded: true, Specs: []report.Spec{
		spec("SM-A-01", contract.Pass), spec("SM-B-01", contract.Pass), spec("SM-C-01", contract.Unresolved)}}}
	o := finish(t.Context(), res, nil, outputs{stderr: io.Discard})
	for codes, want := range map[report.ExitCodes]int{report.ExitCodesSmct: 2, report.ExitCodesKselftest: 5} {
		var out strings.Builder
		code := o.end(&out, codes)
		if code != want || !strings.HasSuffix(out.String(), "\nNO VERDICT: 1 specs UNRESOLVED\n2 passed, 1 failed, 0 skipped\n") ||
			strings.Count(out.String(), "2 passed, 1 failed") != 1 {
			t.Errorf("%s: exit %d, output:\n%s", codes, code, out.String())
		}
	}
}

// A mutants row without a verdict leaves the table without one, naming it.
func TestMutantsRowWithoutVerdict(t *testing.T) {
	rows := []mutants.Row{{Fault: "stat-off-by-one", Want: "SM-STAT-01", Failed: []string{"SM-STAT-01"}}, {Fault: "drop-no-count", Err: errors.New("boot hung")}}
	var out strings.Builder
	code := mutantsOutcome("table\n", mutants.Count(rows), false).end(&out, report.ExitCodesKselftest)
	if code != 5 || !strings.HasSuffix(out.String(), "NO VERDICT: 1 of 2 rows without a verdict: drop-no-count\n1 passed, 1 failed, 0 skipped\n") {
		t.Errorf("exit %d, output:\n%s", code, out.String())
	}
}

// A matrix with a cell without a verdict, or whose reports could not be
// written, ends without one; so do LAVA jobs not all written.
func TestMatrixWithoutVerdict(t *testing.T) {
	cells := []matrix.Cell{{Entry: "debian-6.12", Err: errors.New("QEMU missing")}}
	for _, tc := range []struct {
		dir, reason string
	}{
		{t.TempDir(), "NO VERDICT: 1 of 1 cells without a verdict: debian-6.12-?\n"},
		{filepath.Join(t.TempDir(), "gone"), "NO VERDICT: the matrix's reports: "},
	} {
		var out strings.Builder
		code := printMatrix(tc.dir, cells, outputs{stderr: io.Discard}).end(&out, report.ExitCodesSmct)
		if code != 2 || !strings.Contains(out.String(), tc.reason) || !strings.HasSuffix(out.String(), "\n"+noneCounted+"\n") {
			t.Errorf("%s: exit %d, output:\n%s", tc.dir, code, out.String())
		}
	}
	var out strings.Builder
	code := jobsOutcome("dir", 1, errors.New("no kernel for reference arm64")).end(&out, report.ExitCodesKselftest)
	if code != 5 || !strings.HasSuffix(out.String(), "NO VERDICT: writing the LAVA jobs: no kernel for reference arm64\n"+noneCounted+"\n") {
		t.Errorf("-lava-jobs failed: exit %d, output:\n%s", code, out.String())
	}
}

// A walk with a prefix without a verdict names it before the counts.
func TestReviewWithoutVerdict(t *testing.T) {
	w := &review.Walk{Series: review.Series{Name: "v1"}, Arches: []string{"x86_64"}, Steps: map[string][]*review.Step{"x86_64": {{Infra: "boot hung"}}}}
	var out strings.Builder
	code := printReview(&review.Review{Dir: "dir", Series: w}, new(request), outputs{stderr: io.Discard}).end(&out, report.ExitCodesSmct)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if code != 2 || len(lines) < 2 || lines[len(lines)-2] != "NO VERDICT: no verdict for 0/0 on x86_64 (boot hung)" || !closingLine.MatchString(lines[len(lines)-1]) {
		t.Errorf("exit %d, output:\n%s", code, out.String())
	}
}
