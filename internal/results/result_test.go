// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/dumpcheck"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

func TestExitCodes(t *testing.T) {
	stackmapSkip := unsupported
	stackmapSkip.Labels = []string{contract.LabelStackmap, "SM-BIN-01"}
	for _, tc := range []struct {
		name              string
		res               *Result
		smct, kselftest   int
		verdictStartsWith string
	}{
		{"pass", result(pass), 0, 0, "ok"},
		{"pass and skips", result(pass, unsupported), 0, 0, "ok"},
		{"all skipped", result(unsupported, unsupported), 0, 4, "ok"},
		{"a failure", result(pass, fail), 1, 1, "FAIL"},
		{"unresolved", result(pass, unresolved), 2, report.KselftestNoVerdict, "NO VERDICT"},
		{"no verdict", &Result{NoVerdict: "QEMU missing"}, 2, report.KselftestNoVerdict, "NO VERDICT: QEMU missing"},
		{"kernel problems", func() *Result {
			r := result(pass)
			r.KernelLogs = []KernelLog{{Boot: "default", Lines: []string{oops}}}
			return r
		}(), 1, 1, "FAIL: the kernel logged"},
		{"kernel log missing", func() *Result {
			r := result(pass)
			r.KernelLogs = []KernelLog{{Boot: "bits-12", Missing: true}}
			return r
		}(), 2, report.KselftestNoVerdict, "NO VERDICT: bits-12.kernel-log UNRESOLVED: no kernel log arrived"},
		{"kernel log missing, another warned", func() *Result {
			r := result(pass)
			r.KernelLogs = []KernelLog{{Boot: "default", Lines: []string{oops}}, {Boot: "bits-12", Missing: true}}
			return r
		}(), 1, 1, "FAIL: the kernel logged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.res.ExitCodeAs(report.ExitCodesSmct); got != tc.smct {
				t.Errorf("smct exit code %d, want %d", got, tc.smct)
			}
			if got := tc.res.ExitCodeAs(report.ExitCodesKselftest); got != tc.kselftest {
				t.Errorf("kselftest exit code %d, want %d", got, tc.kselftest)
			}
			if v := tc.res.Verdict(); !strings.HasPrefix(v, tc.verdictStartsWith) {
				t.Errorf("verdict %q, want it to start with %q", v, tc.verdictStartsWith)
			}
		})
	}
}

// TestRequire: a run that requires stackmap fails on its UNSUPPORTED
// stackmap specs, names why, and leaves the baseline's alone.
func TestRequire(t *testing.T) {
	stackmapSkip := unsupported
	stackmapSkip.Labels, stackmapSkip.FeatureAbsent = []string{contract.LabelStackmap, "SM-BIN-01"}, stackmapSkip.Message
	profileSkip := report.Spec{Name: "default.SM-INIT-01", Boot: "default", Text: "stackmap init [SM-INIT-01] ...", IDs: []string{"SM-INIT-01"},
		Labels: []string{contract.LabelStackmap, "SM-INIT-01"}, Class: contract.Unsupported, Message: "SM-INIT-01 belongs to the v4 profile only"}
	notMade := stackmapSkip // a boot not made: the default boot's reason
	notMade.Name, notMade.Boot, notMade.IDs = "bits-12.SM-BOOT-02", "bits-12", []string{"SM-BOOT-02"}
	notMade.Message += " (seen in the default boot; boot bits-12 not made)"
	baselineSkip := unsupported
	baselineSkip.Name, baselineSkip.Labels = "default.BASE-BOOTOPT-01", []string{contract.LabelBaseline}
	for _, tc := range []struct {
		name     string
		required bool
		specs    []report.Spec
		code     int
		verdict  string
		closing  string
		ktap     string // the second spec's KTAP line
	}{
		{"required and absent", true, []report.Spec{pass, stackmapSkip, notMade}, 1,
			"FAIL: 2 stackmap specs UNSUPPORTED, and this run requires stackmap (REQUIRE=stackmap): kernel has no stackmap feature (no options/stackmap, no stack_map)",
			"1 passed, 2 failed, 0 skipped", "not ok 2 default.SM-BIN-01\n"},
		{"not required", false, []report.Spec{pass, stackmapSkip}, 0, "ok", "1 passed, 0 failed, 1 skipped", "ok 2 default.SM-BIN-01 # SKIP "},
		{"required, another profile's skip stays", true, []report.Spec{pass, profileSkip}, 0, "ok", "1 passed, 0 failed, 1 skipped", "ok 2 default.SM-INIT-01 # SKIP "},
		{"required, baseline skip stays", true, []report.Spec{pass, baselineSkip}, 0, "ok", "1 passed, 0 failed, 1 skipped", "ok 2 default.BASE-BOOTOPT-01 # SKIP "},
		{"required and a real failure too", true, []report.Spec{fail, stackmapSkip}, 1,
			"FAIL: 1 specs failed, and 1 stackmap specs UNSUPPORTED while this run requires stackmap (REQUIRE=stackmap): kernel has no stackmap feature (no options/stackmap, no stack_map)",
			"0 passed, 2 failed, 0 skipped", "not ok 2 default.SM-BIN-01\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := result(tc.specs...)
			res.Required, res.RequiredWhy = tc.required, "REQUIRE=stackmap"
			if tc.required {
				res.Summary.Require(contract.LabelStackmap, res.RequiredWhy)
			}
			if got := res.ExitCode(); got != tc.code {
				t.Errorf("exit code %d, want %d", got, tc.code)
			}
			if got := res.Verdict(); got != tc.verdict {
				t.Errorf("verdict %q, want %q", got, tc.verdict)
			}
			if got := res.Summary.ClosingLine(); got != tc.closing {
				t.Errorf("closing line %q, want %q", got, tc.closing)
			}
			n, ids := "1 requirements are", "SM-BIN-01"
			if tc.name == "required and absent" {
				n, ids = "2 requirements are", "SM-BIN-01 SM-BOOT-02"
			}
			if ev := Evidence(res); tc.code == 1 && tc.required && (!strings.Contains(ev, "FAIL stackmap is required (REQUIRE=stackmap), but "+n) ||
				!strings.Contains(ev, "UNSUPPORTED:\n    kernel has no stackmap feature (no options/stackmap, no stack_map)\n    "+ids+"\n")) {
				t.Errorf("evidence does not group the required specs:\n%s", ev)
			}
			if !strings.Contains(KTAP(res), tc.ktap) {
				t.Errorf("KTAP lacks %q:\n%s", tc.ktap, KTAP(res))
			}
		})
	}
}

func TestKernelLogs(t *testing.T) {
	res := result(pass)
	res.KernelLogs = []KernelLog{
		{Boot: "default", Lines: []string{"WARNING: CPU: 0 PID: 1 at kernel/trace/trace_stackmap.c:88 stackmap_reset+0x44/0x90", "BUG: KASAN: slab-out-of-bounds in stackmap_insert+0x1c/0x80"}},
		{Boot: "stress", Lines: []string{"rcu: INFO: rcu_sched self-detected stall on CPU"}},
		{Boot: "bits-12", Lines: []string{"INFO: task kworker/0:1:12 blocked for more than 120 seconds."}},
	}
	got := res.KernelProblems()
	want := []string{
		"boot default: WARNING: CPU: 0 PID: 1 at kernel/trace/trace_stackmap.c:88 stackmap_reset+0x44/0x90",
		"boot default: BUG: KASAN: slab-out-of-bounds in stackmap_insert+0x1c/0x80",
		"boot stress: rcu: INFO: rcu_sched self-detected stall on CPU",
		"boot bits-12: INFO: task kworker/0:1:12 blocked for more than 120 seconds.",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("KernelProblems() = %q, want %q", got, want)
	}
	if c := res.ClosingLine(); c != "1 passed, 3 failed, 0 skipped" {
		t.Errorf("closing line %q: each boot's kernel log that shows problems is a failure", c)
	}
}

// The tree's decoder is a test of its own: passed when it reads the
// export as the suite does, failed (and the run with it) when not.
func TestDecoderIsATest(t *testing.T) {
	res := result(pass)
	res.Decoder = &dumpcheck.Check{Tool: "tools/tracing/stackmap_dump.py", Stacks: 12}
	if c, code := res.ClosingLine(), res.ExitCode(); c != "2 passed, 0 failed, 0 skipped" || code != 0 {
		t.Errorf("an agreeing decoder: %q, exit %d", c, code)
	}
	res.Decoder.Problems = []string{"the decoder failed on the kernel's export (exit status 1): ValueError: Bad magic: 0x46534d42 (neither LE nor BE)"}
	if c, code := res.ClosingLine(), res.ExitCode(); c != "1 passed, 1 failed, 0 skipped" || code != 1 {
		t.Errorf("a disagreeing decoder: %q, exit %d", c, code)
	}
	if v := res.Verdict(); !strings.Contains(v, "stackmap_dump.py disagrees") {
		t.Errorf("verdict %q does not name the decoder", v)
	}
}
