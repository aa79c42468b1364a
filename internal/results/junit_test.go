// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"strings"
	"testing"
	"time"

	junit "github.com/joshdk/go-junit"

	"github.com/ftrace-stackmap/conformance/internal/kernels/kchoice"
)

// TestJUnitAgreesWithTheSummary reads junit.xml back with go-junit, the
// parser gotestsum and several CI reporters use, and checks its counts
// against the closing line, its names and its timestamp.
func TestJUnitAgreesWithTheSummary(t *testing.T) {
	noVerdict := result()
	noVerdict.NoVerdict = "LABELS=\"(\": \x1b[1mmissing )\x1b[0m"
	noVerdict.Plans = []string{"default", "bits-12"}
	debian := result(pass, unsupported, unsupported)
	debian.Entry = "debian-6.12"
	// Every spec passed, but a boot's kernel warned: a failure of its own.
	warnedKernel := result(pass, warned)
	warnedKernel.KernelLogs = []KernelLog{{Boot: "default", Lines: []string{oops}}, {Boot: "bits-12", Lines: []string{"BUG: KFENCE: out-of-bounds read"}}}
	for name, tc := range map[string]struct {
		res                              *Result
		suite                            string
		passed, failed, errored, skipped int
	}{
		"pass":       {result(pass, warned), "reference x86_64", 2, 0, 0, 0},
		"fail":       {result(pass, fail, unsupported, unresolved), "reference x86_64", 1, 1, 1, 1},
		"skipped":    {debian, "debian-6.12 x86_64", 1, 0, 0, 2},
		"no verdict": {noVerdict, "reference x86_64", 0, 0, 2, 0},
		"kernel log": {warnedKernel, "reference x86_64", 2, 2, 0, 0},
	} {
		t.Run(name, func(t *testing.T) {
			res := tc.res
			res.Started = time.Date(2026, 11, 23, 16, 5, 0, 0, time.UTC)
			b, err := JUnit(res)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), "\x1b") {
				t.Errorf("junit.xml carries an escape:\n%s", b)
			}
			suites, err := junit.Ingest(b)
			if err != nil || len(suites) != 1 {
				t.Fatalf("go-junit: %d suites, %v\n%s", len(suites), err, b)
			}
			s := suites[0]
			if s.Name != tc.suite {
				t.Errorf("suite name %q, want %q", s.Name, tc.suite)
			}
			got := s.Totals
			if got.Passed != tc.passed || got.Failed != tc.failed || got.Error != tc.errored || got.Skipped != tc.skipped ||
				got.Tests != tc.passed+tc.failed+tc.errored+tc.skipped {
				t.Errorf("totals %+v, want %d passed, %d failed, %d errors, %d skipped", got, tc.passed, tc.failed, tc.errored, tc.skipped)
			}
			if res.NoVerdict == "" {
				p, f, k := res.Totals()
				if got.Passed != p || got.Failed+got.Error != f || got.Skipped != k {
					t.Errorf("totals %+v disagree with %q", got, res.ClosingLine())
				}
			}
			for i, tst := range s.Tests {
				var boot string
				switch {
				case res.NoVerdict != "":
					boot = res.Plans[i]
				case i < len(res.Summary.Specs):
					boot = res.Summary.Specs[i].Boot
				default:
					boot = res.KernelLogs[i-len(res.Summary.Specs)].Boot
				}
				if tst.Classname != "x86_64."+boot || strings.ContainsAny(tst.Name, " #") {
					t.Errorf("test %q of class %q: want a requirement ID or a boot, in class x86_64.%s", tst.Name, tst.Classname, boot)
				}
				if res.NoVerdict != "" && (tst.Error == nil || !strings.Contains(tst.Error.Error(), "missing )")) {
					t.Errorf("test %q: want an error naming why there is no verdict, got %v", tst.Name, tst.Error)
				}
			}
			if ts := s.Properties["timestamp"]; !strings.Contains(string(b), `timestamp="2026-11-23T16:05:00"`) {
				t.Errorf("no host timestamp (%q):\n%s", ts, b)
			}
		})
	}
}

func TestSuiteNameNamesWhatWasBooted(t *testing.T) {
	for _, tc := range []struct {
		entry string
		o     Request
		want  string
	}{
		{"debian-6.12", Request{Choice: kchoice.Choice{Image: "debian-6.12"}}, "debian-6.12"},
		{"", Request{Choice: kchoice.Choice{Kernel: "/k/bzImage"}}, "KERNEL=/k/bzImage"},
		{"", Request{Choice: kchoice.Choice{Tree: "/src/linux"}}, "TREE=/src/linux"},
		{"", Request{}, "lock-default"},
	} {
		if got := suiteName(&Result{Entry: tc.entry, Request: tc.o}); got != tc.want {
			t.Errorf("suiteName(%q, %+v) = %q, want %q", tc.entry, tc.o, got, tc.want)
		}
	}
}
