// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/ftracetest"
	"github.com/ftrace-stackmap/conformance/qemu"
)

const sha = "391d229a7c641821b7414d001c090043d977e11daf865362d36ea832ccf0dd69"

var opts = Request{Arch: "x86_64", Profile: "v4", Timeout: 5 * time.Minute, Seed: 4242}

// result is a run of the given specs: the default boot made, one boot not.
func result(specs ...Spec) *Result {
	return &Result{
		Request:   opts,
		Dir:       "results/20261122-164552-x86_64",
		Source:    "IMAGE=reference (built from kernel/, inputs 0123456789abcdef)",
		Entry:     "reference",
		KernelSHA: sha,
		Machine:   "QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3) -M q35 -cpu qemu64",
		Summary:   Summary{Specs: specs, Succeeded: true, Kernel: "6.12.117-stackmap #1 SMP PREEMPT_DYNAMIC x86_64"},
		Boots: []BootResult{
			{Plan: contract.Plans()[0], Boot: &qemu.Result{Duration: 3900 * time.Millisecond}},
			{Plan: contract.Plans()[1], Boot: &qemu.Result{Duration: 2500 * time.Millisecond}},
			{Plan: contract.Plans()[2], Skipped: NoSpecSelected},
		},
	}
}

var (
	pass = Spec{Name: "default.BASE-ONOFF-01", Boot: "default", Text: "ftrace baseline [BASE-ONOFF-01] turns tracing_on off and on again",
		IDs: []string{"BASE-ONOFF-01"}, Class: contract.Pass}
	fail = Spec{Name: "default.SM-RESET-01", Boot: "default", Text: "resetting the map [SM-RESET-01] refuses a reset with EBUSY while tracing is on, and changes nothing",
		IDs: []string{"SM-RESET-01"}, Class: contract.Fail,
		Message:  "write \"0\" to stack_map with tracing on: accepted Expected <bool>: false to be true",
		Detail:   "write \"0\" to stack_map with tracing on: accepted\nExpected\n    <bool>: false\nto be true",
		Location: "suites/stackmap/reset.go:42"}
	unsupported = Spec{Name: "default.SM-BIN-01", Boot: "default", Text: "the binary export [SM-BIN-01] starts with the profile's magic",
		IDs: []string{"SM-BIN-01"}, Class: contract.Unsupported,
		Message: "kernel has no stackmap feature (no options/stackmap, no stack_map)",
		Detail:  "kernel has no stackmap feature (no options/stackmap, no stack_map)"}
	unresolved = Spec{Name: "default.SM-OPT-01", Boot: "default", Text: "the stackmap option [SM-OPT-01] reads 0 or 1, round-trips 1 and 0, and trace_options agrees",
		IDs: []string{"SM-OPT-01"}, Class: contract.Unresolved,
		Message: "cannot write \"1\" to options/stackmap: device or resource busy",
		Detail:  "cannot write \"1\" to options/stackmap: device or resource busy"}
	timedOut = Spec{Name: "default.SM-ROBUST-01", Boot: "default", Text: "reading the nodes under load [SM-ROBUST-01] returns well-formed data",
		IDs: []string{"SM-ROBUST-01"}, Class: contract.Unresolved, TimedOut: true,
		Message: "A spec timeout occurred", Detail: "A spec timeout occurred"}
	warned = Spec{Name: "default.SM-EVT-01", Boot: "default", Text: "stackmap nodes [SM-EVT-01] describes the stack_id entry", IDs: []string{"SM-EVT-01"},
		Class: contract.Pass, Warnings: []string{"SM-EVT-01: no int stack_id field"}}
	oops = "boot default: WARNING: CPU: 0 PID: 1 at kernel/trace/trace_stackmap.c:88 stackmap_reset+0x44/0x90"
)

func TestKTAP(t *testing.T) {
	res := result(pass, fail, unsupported, unresolved, warned,
		Spec{Name: "bits-12.odd # name", Boot: "bits-12", Text: "odd\nname # with a hash", Class: contract.Pass},
		pass) // the same spec again, as a second boot would run it
	res.KernelProblems = []string{oops}
	want := `KTAP version 1
1..8
# kernel: 6.12.117-stackmap #1 SMP PREEMPT_DYNAMIC x86_64
# image: IMAGE=reference (built from kernel/, inputs 0123456789abcdef), sha256 ` + sha + `
# machine: x86_64 on QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3) -M q35 -cpu qemu64
# profile: v4
# seed: 4242
# ftrace baseline [BASE-ONOFF-01] turns tracing_on off and on again
ok 1 default.BASE-ONOFF-01
# resetting the map [SM-RESET-01] refuses a reset with EBUSY while tracing is on, and changes nothing
# write "0" to stack_map with tracing on: accepted
# Expected
#     <bool>: false
# to be true
# at suites/stackmap/reset.go:42
not ok 2 default.SM-RESET-01
# the binary export [SM-BIN-01] starts with the profile's magic
ok 3 default.SM-BIN-01 # SKIP kernel has no stackmap feature (no options/stackmap, no stack_map)
# the stackmap option [SM-OPT-01] reads 0 or 1, round-trips 1 and 0, and trace_options agrees
# UNRESOLVED: cannot write "1" to options/stackmap: device or resource busy
not ok 4 default.SM-OPT-01 # ERROR cannot write "1" to options/stackmap: device or resource busy
# stackmap nodes [SM-EVT-01] describes the stack_id entry
# WARNING: SM-EVT-01: no int stack_id field
ok 5 default.SM-EVT-01
# odd
# name # with a hash
ok 6 bits-12.odd _ name
# ftrace baseline [BASE-ONOFF-01] turns tracing_on off and on again
ok 7 default.BASE-ONOFF-01-2
# KERNEL: WARNING: CPU: 0 PID: 1 at kernel/trace/trace_stackmap.c:88 stackmap_reset+0x44/0x90
not ok 8 default.kernel-log
# Totals: pass:4 fail:2 xfail:0 xpass:0 skip:1 error:1
`
	if got := KTAP(res); got != want {
		t.Errorf("KTAP() =\n%s\nwant\n%s", got, want)
	}
}

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
			res.KernelProblems = []string{oops}
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

func TestEvidenceAllPass(t *testing.T) {
	res := result(pass, unsupported)
	res.Boots = append(res.Boots, BootResult{Plan: contract.Plans()[3], Skipped: "kernel has no stackmap feature"})
	want := `ftrace stackmap conformance (profile v4): 1 passed, 0 failed, 1 skipped
kernel:  6.12.117-stackmap #1 SMP PREEMPT_DYNAMIC x86_64
image:   IMAGE=reference (built from kernel/, inputs 0123456789abcdef)
sha256:  ` + sha + `
machine: x86_64 on QEMU emulator version 7.2.22 (Debian
         1:7.2+dfsg-7+deb12u18+b3) -M q35 -cpu qemu64
boots:   2 made (default, trace-options); 1 not made: kernel has no stackmap
         feature
seed:    4242

reproduce: make qemu-test ARCH=x86_64 IMAGE=reference PROFILE=v4 SEED=4242
`
	got := Evidence(res)
	if got != want {
		t.Errorf("Evidence() =\n%s\nwant\n%s", got, want)
	}
	checkMail(t, got)
}

func TestEvidenceFailures(t *testing.T) {
	twoIDs := fail
	twoIDs.Text, twoIDs.IDs = "resetting the map [SM-RESET-04][SM-BIN-04] empties the binary export", []string{"SM-RESET-04", "SM-BIN-04"}
	res := result(pass, fail, unsupported, unresolved, twoIDs)
	res.KernelProblems = []string{oops}
	o := opts
	o.Labels = "stackmap && !SM-BOOT-02"
	res.Suite = "github.com/ftrace-stackmap/conformance v1.2-3-g0123456789ab-dirty"
	res.Required, res.RequiredWhy = true, "default for build entries: IMAGE=reference"
	got := Evidence(withRequest(res, o))
	want := `ftrace stackmap conformance (profile v4): 1 passed, 4 failed, 1 skipped
kernel:  6.12.117-stackmap #1 SMP PREEMPT_DYNAMIC x86_64
image:   IMAGE=reference (built from kernel/, inputs 0123456789abcdef)
sha256:  ` + sha + `
machine: x86_64 on QEMU emulator version 7.2.22 (Debian
         1:7.2+dfsg-7+deb12u18+b3) -M q35 -cpu qemu64
boots:   2 made (default, trace-options)
seed:    4242
suite:   github.com/ftrace-stackmap/conformance v1.2-3-g0123456789ab-dirty
require: stackmap (default for build entries: IMAGE=reference)

failures:
FAIL SM-RESET-01: reset while tracing fails with EBUSY and changes nothing
    spec: resetting the map refuses a reset with EBUSY while tracing is on,
          and changes nothing
    observed: write "0" to stack_map with tracing on: accepted Expected
              <bool>: false to be true
UNRESOLVED SM-OPT-01: options/stackmap round-trips and trace_options agrees
    spec: the stackmap option reads 0 or 1, round-trips 1 and 0, and
          trace_options agrees
    observed: cannot write "1" to options/stackmap: device or resource busy
FAIL SM-RESET-04 SM-BIN-04: after a reset the map and counters are empty;
    stack_map_bin is a snapshot taken at open
    spec: resetting the map empties the binary export
    observed: write "0" to stack_map with tracing on: accepted Expected
              <bool>: false to be true

kernel problems:
  boot default: WARNING: CPU: 0 PID: 1 at kernel/trace/trace_stackmap.c:88
    stackmap_reset+0x44/0x90

reproduce:
  make qemu-test ARCH=x86_64 IMAGE=reference PROFILE=v4 LABELS='stackmap && !SM-BOOT-02' SEED=4242
`
	if got != want {
		t.Errorf("Evidence() =\n%s\nwant\n%s", got, want)
	}
	checkMail(t, got)
}

// checkMail fails on what a mail would mangle: colours, tabs, lines wider
// than Width that a space could have broken (the reproduce command aside).
func checkMail(t *testing.T, text string) {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if strings.ContainsAny(l, "\x1b\t\r") {
			t.Errorf("control character in %q", l)
		}
		if len(l) > Width && !strings.HasPrefix(l, "  make ") && strings.Contains(strings.TrimSpace(l), " ") {
			t.Errorf("line of %d columns: %q", len(l), l)
		}
	}
}

func TestReproduce(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Request
		want string
	}{
		{"lock's default named", Request{Arch: "arm64", Profile: "v4"},
			"make qemu-test ARCH=arm64 IMAGE=reference PROFILE=v4"},
		{"image", Request{Arch: "x86_64", Image: "debian-6.12", Profile: "v3", Timeout: 5 * time.Minute},
			"make qemu-test ARCH=x86_64 IMAGE=debian-6.12 PROFILE=v3"},
		{"kernel path with a space, labels, timeout", Request{Arch: "x86_64", Kernel: "/tmp/my kernel/bzImage", Profile: "v4", Labels: "stress", Timeout: 10 * time.Minute},
			"make qemu-test ARCH=x86_64 KERNEL='/tmp/my kernel/bzImage' PROFILE=v4 LABELS=stress TIMEOUT=10m0s"},
		{"boot arguments need smct", Request{Arch: "arm64", Image: "debian-6.1", Profile: "v4", Labels: "baseline", BootArgs: []string{"nokaslr", "loglevel=7"}},
			"go run ./cmd/smct qemu-test -arch arm64 -image debian-6.1 -profile v4 -labels baseline -append 'nokaslr loglevel=7'"},
		{"seed and a forced requirement", Request{Arch: "arm64", Image: "debian-6.12", Profile: "v4", Seed: 77, Require: RequireStackmap},
			"make qemu-test ARCH=arm64 IMAGE=debian-6.12 PROFILE=v4 SEED=77 REQUIRE=stackmap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Reproduce(withRequest(result(), tc.o)); got != tc.want {
				t.Errorf("Reproduce() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSummary keeps what qemu-test prints: the header, the spec lines, the
// coverage, the results and evidence paths, and the closing line last.
func TestSummary(t *testing.T) {
	res := result(pass, fail)
	res.KernelProblems = []string{oops}
	res.Boots = append(res.Boots, BootResult{Plan: contract.Plans()[3], Skipped: "kernel has no stackmap feature"})
	want := fmt.Sprintf(`kernel:  6.12.117-stackmap #1 SMP PREEMPT_DYNAMIC x86_64
image:   IMAGE=reference (built from kernel/, inputs 0123456789abcdef), sha256 %s
machine: x86_64 on QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3) -M q35 -cpu qemu64
profile: v4
seed:    4242
boot:    default        3.9s  
boot:    trace-options  2.5s  trace_options=stackmap,stacktrace
boots not made (kernel has no stackmap feature): bits-hex

PASS        ftrace baseline [BASE-ONOFF-01] turns tracing_on off and on again
FAIL        resetting the map [SM-RESET-01] refuses a reset with EBUSY while tracing is on, and changes nothing -- %s
KERNEL      %s

requirements:
  BASE-ONOFF-01    PASS
  SM-RESET-01      FAIL

results: results/20261122-164552-x86_64
evidence: results/20261122-164552-x86_64/evidence.txt
1 passed, 2 failed, 0 skipped
`, sha, fail.Message, oops)
	if got := Text(res); got != want {
		t.Errorf("Summary() =\n%s\nwant\n%s", got, want)
	}
}

func TestWrite(t *testing.T) {
	res := result(pass)
	res.Dir = t.TempDir()
	summary, err := Write(res)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{SummaryFile: summary, KTAPFile: KTAP(res), EvidenceFile: Evidence(res)} {
		got, err := os.ReadFile(filepath.Join(res.Dir, name))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
}

// withRequest is res as if asked for by o.
func withRequest(res *Result, o Request) *Result {
	res.Request = o
	return res
}

func TestVerdictIsOneLineWithoutEscapes(t *testing.T) {
	res := result()
	res.Dir = t.TempDir()
	res.NoVerdict = "boot default did not reach the suite: \x1b[31mpanic\x1b[0m\nthe console's last lines:\n  x"
	if _, err := Write(res); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(res.Dir, VerdictFile))
	if string(got) != "NO VERDICT: boot default did not reach the suite: panic\n" {
		t.Fatalf("verdict.txt = %q, want one line without control characters", got)
	}
	// Every report is there, and none carries an escape.
	for _, name := range []string{SummaryFile, KTAPFile, JUnitFile, EvidenceFile} {
		b, err := os.ReadFile(filepath.Join(res.Dir, name))
		if err != nil || !strings.Contains(string(b), "did not reach the suite") || strings.Contains(string(b), "\x1b") {
			t.Errorf("%s = %q, %v: want the reason, without escapes", name, b, err)
		}
	}
}

// TestKTAPSubtest: the tree's ftracetest is a nested KTAP test as ktap.rst
// nests them: its lines indented two spaces from its version line on, a
// plan, its own numbering, and the parent's result line after it.
func TestKTAPSubtest(t *testing.T) {
	res := result(pass)
	res.Request.FtraceDir, res.Request.FtraceMatch = "/src/linux/tools/testing/selftests/ftrace", DefaultFtraceMatch
	res.Selftests = []ftracetest.Case{
		{No: 1, File: "test.d/stackmap/basic.tc", Name: "stackmap: basic", Result: "PASS"},
		{No: 2, File: "test.d/stackmap/reset.tc", Name: "stackmap: reset", Result: "FAIL", Log: "reset accepted"},
		{No: 3, File: "test.d/stackmap/bin.tc", Name: "stackmap: bin", Result: "UNSUPPORTED"},
	}
	got := KTAP(res)
	want := `# ftrace baseline [BASE-ONOFF-01] turns tracing_on off and on again
ok 1 default.BASE-ONOFF-01
  KTAP version 1
  # Subtest: ftracetest
  1..3
  ok 1 test.d/stackmap/basic.tc
`
	if !strings.Contains(got, want) || !strings.Contains(got, "  not ok 2 test.d/stackmap/reset.tc\n") ||
		!strings.Contains(got, "  ok 3 test.d/stackmap/bin.tc # SKIP UNSUPPORTED\nnot ok 2 ftracetest\n") ||
		!strings.HasPrefix(got, "KTAP version 1\n1..2\n") {
		t.Errorf("KTAP() =\n%s\nwant the ftracetest subtest nested after the specs", got)
	}
}

// TestReportsOfARunRefusedEarly: what the run did not learn is left out,
// not printed empty, and the reason is there.
func TestReportsOfARunRefusedEarly(t *testing.T) {
	res := &Result{Request: opts, Dir: "results/x", NoVerdict: "PROFILE=\"v9\": want v4 or v3\n", Plans: []string{"default"}}
	for name, text := range map[string]string{"summary": Text(res), "evidence": Evidence(res), "ktap": KTAP(res)} {
		for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
			if strings.HasSuffix(strings.TrimSpace(l), ":") || strings.Contains(l, ", sha256") || strings.HasSuffix(l, " on") {
				t.Errorf("%s: empty field %q", name, l)
			}
		}
		if !strings.Contains(text, `PROFILE="v9": want v4 or v3`) {
			t.Errorf("%s lacks the reason:\n%s", name, text)
		}
	}
}

func TestKTAPTimeout(t *testing.T) {
	if got := KTAP(result(timedOut)); !strings.Contains(got, "not ok 1 default.SM-ROBUST-01 # TIMEOUT A spec timeout occurred\n") {
		t.Errorf("KTAP() =\n%s\nwant a TIMEOUT directive", got)
	}
}
