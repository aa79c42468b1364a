// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var (
	versionLine = regexp.MustCompile(`^KTAP version 1$`)
	planLine    = regexp.MustCompile(`^1\.\.(\d+)$`)
	// <result> <number> [<description>][ # [<directive>] [<diagnostic data>]]
	resultLine = regexp.MustCompile(`^(ok|not ok) (\d+)( [^#]+)?( # (SKIP|ERROR|TIMEOUT)?.*)?$`)
	// A name that lasts: "<boot>.<ID>" or "<boot>.kernel-log", no spaces.
	stableName = regexp.MustCompile(`^ [a-z0-9-]+(\.([A-Z0-9+-]+|kernel-log))?$`)
	// kunit_parser.py's TEST_RESULT: the name is group 4, and must be the
	// same name read this way.
	kunitResult = regexp.MustCompile(`^\s*(ok|not ok) ([0-9]+) ?(:?- )?([^#]*)( # .*)?$`)
	diagLine    = regexp.MustCompile(`^# .*$`)
	totalsLine  = regexp.MustCompile(`^# Totals: pass:(\d+) fail:(\d+) xfail:0 xpass:0 skip:(\d+) error:(\d+)$`)
)

// TestKTAPParses reads the KTAP back by the grammar of ktap.rst: version,
// plan, then test lines numbered from 1 and diagnostic lines only, as many
// tests as planned, names that last, ERROR only on "not ok", and totals
// that agree with the lines. A run without a verdict has a test per boot.
func TestKTAPParses(t *testing.T) {
	long := fail
	long.Detail = strings.Repeat("line\n", 50) + "\x1b[31mcoloured\x1b[0m\r"
	noVerdict := result()
	noVerdict.NoVerdict = "LABELS=\"(\": \x1b[1mmissing )\x1b[0m # not a directive"
	noVerdict.Plans = []string{"default", "bits-12"}
	for name, tc := range map[string]struct {
		res    *Result
		errors int
	}{
		"all pass":    {result(pass, warned), 0},
		"mixed":       {result(pass, fail, unsupported, unresolved, warned, timedOut), 2},
		"long detail": {result(long, unresolved), 1},
		"unsupported": {result(unsupported, pass), 0},
		"no verdict":  {noVerdict, 2},
	} {
		t.Run(name, func(t *testing.T) {
			res := tc.res
			res.KernelLogs = []KernelLog{{Boot: "default", Lines: []string{oops}}}
			lines := strings.Split(strings.TrimSuffix(KTAP(res), "\n"), "\n")
			if len(lines) < 3 || !versionLine.MatchString(lines[0]) || !planLine.MatchString(lines[1]) {
				t.Fatalf("no version and plan lines:\n%s", strings.Join(lines, "\n"))
			}
			plan, _ := strconv.Atoi(planLine.FindStringSubmatch(lines[1])[1])
			tests, ok, notOK, skip, errors := 0, 0, 0, 0, 0
			for _, l := range lines[2:] {
				m := resultLine.FindStringSubmatch(l)
				switch {
				case m != nil:
					tests++
					if n, _ := strconv.Atoi(m[2]); n != tests {
						t.Errorf("test number %d, want %d: %q", n, tests, l)
					}
					if !stableName.MatchString(m[3]) {
						t.Errorf("test name %q is not <boot>.<ID>", m[3])
					}
					if k := kunitResult.FindStringSubmatch(l); k == nil || " "+k[4] != m[3] {
						t.Errorf("kunit_parser would read %q as %q", l, k)
					}
					switch {
					case m[5] == "SKIP":
						skip++
					case (m[5] == "ERROR" || m[5] == "TIMEOUT") && m[1] == "not ok":
						errors++
					case m[5] == "ERROR" || m[5] == "TIMEOUT":
						t.Errorf("ERROR on a passing test: %q", l)
					case m[1] == "ok":
						ok++
					default:
						notOK++
					}
				case !diagLine.MatchString(l):
					t.Errorf("neither a test nor a diagnostic line: %q", l)
				}
				if strings.ContainsAny(l, "\x1b\r") {
					t.Errorf("control character in %q", l)
				}
			}
			if tests != plan {
				t.Errorf("%d test lines, plan says %d", tests, plan)
			}
			if errors != tc.errors {
				t.Errorf("%d ERROR tests, want %d", errors, tc.errors)
			}
			last := totalsLine.FindStringSubmatch(lines[len(lines)-1])
			if last == nil {
				t.Fatalf("last line %q is not kselftest's totals", lines[len(lines)-1])
			}
			p, f, s, e := atoi(last[1]), atoi(last[2]), atoi(last[3]), atoi(last[4])
			if p != ok || s != skip || f != notOK || e != errors {
				t.Errorf("totals %q disagree with the lines: %d ok, %d skip, %d not ok, %d errors", lines[len(lines)-1], ok, skip, notOK, errors)
			}
		})
	}
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }
