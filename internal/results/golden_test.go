// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/claims"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/dumpcheck"
	"github.com/ftrace-stackmap/conformance/internal/ftracetest"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kchoice"
	"github.com/ftrace-stackmap/conformance/internal/kernels/korigin"
	"github.com/ftrace-stackmap/conformance/internal/labels"
	"github.com/ftrace-stackmap/conformance/internal/page"
	"github.com/ftrace-stackmap/conformance/internal/results/golden"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// TestGolden writes the reports of a passing, a failing and a no-verdict
// run into their run directory, and holds each file to testdata/<run>/
// (kcidb_test.go holds their kcidb.json to KCIDB's schema too).
func TestGolden(t *testing.T) {
	t.Setenv(KCIDBOriginEnv, "") // the default origin, whatever the caller's
	for name, res := range map[string]*Result{"pass": passingRun(), "fail": failingRun(), "noverdict": noVerdictRun(), "claims": claimsRun(t)} {
		t.Run(name, func(t *testing.T) {
			t.Chdir(t.TempDir()) // res.Dir is relative, as qemu-test's is
			if err := os.MkdirAll(res.Dir, 0o755); err != nil {
				t.Fatal(err)
			}
			summary, err := Write(res)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, name+"/"+SummaryFile, report.Plain(summary)) // as qemu-test prints it
			for _, f := range []string{SummaryFile, KTAPFile, JUnitFile, EvidenceFile, VerdictFile, KCIDBFile, page.File} {
				b, err := os.ReadFile(filepath.Join(res.Dir, f))
				if err != nil {
					t.Fatal(err)
				}
				golden.Check(t, name+"/"+f, string(b))
			}
			if res.Claims != nil {
				b, err := os.ReadFile(filepath.Join(res.Dir, ClaimsJSONFile))
				if err != nil {
					t.Fatal(err)
				}
				golden.Check(t, name+"/"+ClaimsJSONFile, string(b))
			}
			b, _ := os.ReadFile(filepath.Join(res.Dir, EvidenceFile))
			checkMail(t, string(b))
		})
	}
}

// TestGoldenClaimsRun holds what make claims writes: the claims alone,
// their page and their KCIDB data.
func TestGoldenClaimsRun(t *testing.T) {
	t.Setenv(KCIDBOriginEnv, "")
	res := claimsRun(t)
	res.Plans, res.Summary.Specs = nil, nil // no spec runs in a claims run
	t.Chdir(t.TempDir())
	if err := os.MkdirAll(res.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteClaimsRun(res); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{ClaimsFile, ClaimsJSONFile, KCIDBFile, page.File} {
		b, err := os.ReadFile(filepath.Join(res.Dir, f))
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, "claimsrun/"+f, string(b))
	}
}

var started = time.Date(2026, 11, 22, 16, 45, 52, 0, time.UTC)

// claimsRun is a passing run that measured the claims too (CLAIMS=1),
// from a sample the guest took.
func claimsRun(t *testing.T) *Result {
	r, err := claims.JudgeSampleFile("../claims/testdata/sample-arm64.json")
	if err != nil {
		t.Fatal(err)
	}
	res := passingRun()
	res.Request.Claims, res.Claims = true, &r
	return res
}

func took(sp report.Spec, d time.Duration) report.Spec { sp.Duration = d; return sp }

// passingRun is a tree built here: its own selftests and decoder agree.
func passingRun() *Result {
	noted := report.Spec{Name: "default.SM-TEXT-01", Boot: "default", Text: "the text export [SM-TEXT-01] lists each stack once",
		IDs: []string{"SM-TEXT-01"}, Class: contract.Pass, Notes: []string{"no stack deeper than 8 frames was recorded: depth limits unchecked"}}
	profileSkip := report.Spec{Name: "default.SM-INIT-01", Boot: "default", Text: "stackmap init [SM-INIT-01] starts empty",
		IDs: []string{"SM-INIT-01"}, Class: contract.Unsupported, Message: "SM-INIT-01 belongs to the v4 profile only",
		Detail: "SM-INIT-01 belongs to the v4 profile only"}
	option := report.Spec{Name: "trace-options.SM-OPT-02", Boot: "trace-options", Text: "boot [SM-OPT-02] trace_options=stackmap turns the option on",
		IDs: []string{"SM-OPT-02"}, Class: contract.Pass}
	res := result(took(pass, 1200*time.Millisecond), took(warned, 300*time.Millisecond), took(noted, 2500*time.Millisecond),
		profileSkip, took(option, 800*time.Millisecond))
	res.Request = Request{Arch: arch.MustLookup("arm64"), Choice: kchoice.Choice{Tree: "/src/linux"}, Profile: "v3", Seed: 1700000001, Timeout: 10 * time.Minute, FtraceDir: "/src/linux/tools/testing/selftests/ftrace", FtraceMatch: "stackmap/basic"}
	res.Dir = "results/20261122-164552-arm64"
	res.Entry, res.Source = "", "TREE=/src/linux (v6.19-rc2-12-g0123456789ab)"
	res.Origin = korigin.Origin{Tree: "/src/linux", Commit: "0123456789ab" + strings.Repeat("c", 28), Describe: "v6.19-rc2-12-g0123456789ab",
		Config: "tinyconfig+common+arm64", Compiler: "aarch64-linux-gnu-gcc (Debian 12.2.0-14+deb12u1) 12.2.0"}
	res.Machine = "QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3) -M virt -cpu max"
	res.Summary.Kernel = "6.19.0-rc2-00012-g0123456789ab #3 SMP PREEMPT aarch64"
	res.Suite = "github.com/ftrace-stackmap/conformance v1.2-3-g0123456789ab"
	res.Started = started
	res.Required, res.RequiredWhy = true, "default for TREE="
	res.Decoder = &dumpcheck.Check{Tool: dumpcheck.Tool, Stacks: 12}
	res.Selftests = []ftracetest.Case{
		{No: 1, File: "test.d/stackmap/basic.tc", Name: "stackmap: basic", Result: "PASS"},
		{No: 2, File: "test.d/stackmap/basic-bin.tc", Name: "stackmap: basic binary export", Result: "XFAIL"},
	}
	return res
}

// failingRun fails every way a run can: specs, a boot that died, the
// feature required and absent, the kernel's log, the suite, the tree's
// selftests.
func failingRun() *Result {
	absent := unsupported
	absent.Labels, absent.FeatureAbsent = []string{contract.LabelStackmap, "SM-BIN-01"}, absent.Message
	notMade := absent // in a boot not made: the default boot's reason
	notMade.Name, notMade.Boot, notMade.IDs = "bits-12.SM-BOOT-02", "bits-12", []string{"SM-BOOT-02"}
	notMade.Text = "boot bits-12 [SM-BOOT-02] sizes the map by stackmap.bits"
	notMade.Message += " (seen in the default boot; boot bits-12 not made)"
	long := fail
	long.Name, long.IDs, long.Text = "default.SM-TEXT-02", []string{"SM-TEXT-02"}, "the text export [SM-TEXT-02] names every frame"
	long.Detail = "frames without a name:\n" + strings.Repeat("  0xffffffff81000000\n", 30) + "\x1b[31mend\x1b[0m\r"
	long.Message = strings.Join(strings.Fields(long.Detail), " ")[:237] + "..."
	died := report.Spec{Name: "trace-options.SM-OPT-02", Boot: "trace-options", Text: "boot [SM-OPT-02] trace_options=stackmap turns the option on",
		IDs: []string{"SM-OPT-02"}, Class: contract.Fail,
		Message: "boot trace-options died: Kernel panic - not syncing: stackmap: bad option the console's last lines: [ 0.51] stackmap: bad option [ 0.52] Kernel panic - not syncing: stackmap: bad option",
		Detail:  "boot trace-options died: Kernel panic - not syncing: stackmap: bad option\nthe console's last lines:\n  [ 0.51] stackmap: bad option\n  [ 0.52] Kernel panic - not syncing: stackmap: bad option 'stackmap=on,stacktrace,bits=12,depth=64'"}
	stress := report.Spec{Name: "default.stress-readers-and-resets-keep-the-map-consist", Boot: "default",
		Text: "stress readers and resets keep the map consistent", Class: contract.Fail,
		Message: "stack_map lost 3 stacks", Detail: "stack_map lost 3 stacks", Location: "suites/stress/stress.go:77"}
	twoIDs := fail
	twoIDs.Name, twoIDs.IDs = "default.SM-RESET-04+SM-BIN-04", []string{"SM-RESET-04", "SM-BIN-04"}
	twoIDs.Text = "resetting the map [SM-RESET-04][SM-BIN-04] empties the binary export"
	res := result(took(pass, time.Second), took(fail, 40*time.Millisecond), absent, notMade, took(unresolved, time.Millisecond),
		took(timedOut, 30*time.Second), long, died, stress, twoIDs, pass)
	res.Summary.Require(contract.LabelStackmap, "default for build entries: IMAGE=reference")
	res.Required, res.RequiredWhy = true, "default for build entries: IMAGE=reference"
	res.Request.Labels = labels.MustParse("stackmap || baseline && !SM-BOOT-02")
	res.Request.Require = report.RequireStackmap
	res.Request.FtraceDir, res.Request.FtraceMatch = "/src/linux/tools/testing/selftests/ftrace", DefaultFtraceMatch
	res.Suite = "github.com/ftrace-stackmap/conformance v1.2-3-g0123456789ab-dirty"
	res.Started = started
	res.Summary.SuiteProblems = []string{"AfterSuite: tracefs settings differ after the suite: current_tracer nop, want function"}
	res.KernelLogs = []KernelLog{{Boot: "default", Lines: []string{oops, "BUG: KASAN: slab-out-of-bounds in stackmap_insert+0x1c/0x80"}},
		{Boot: "trace-options", Lines: []string{"Kernel panic - not syncing: stackmap: bad option"}}}
	res.Decoder = &dumpcheck.Check{Tool: dumpcheck.Tool, Stacks: 12,
		Problems: []string{"stack 7: depth 5, the kernel's 6", "stack 9: ref count 2, the kernel's 3"}}
	res.Selftests = []ftracetest.Case{
		{No: 1, File: "test.d/stackmap/basic.tc", Name: "stackmap: basic", Result: "PASS"},
		{No: 2, File: "test.d/stackmap/stacktrace.tc", Name: "stackmap: function stacks", Result: "FAIL",
			Log:  "+ echo function > current_tracer\nno stack_id in trace\n+ exit_fail\nstack_map is empty after 5 seconds of the function tracer with options/stacktrace set",
			Hint: "the function tracer records stacks with func_stack_trace, not options/stacktrace"},
		{No: 3, File: "test.d/stackmap/reset.tc", Name: "stackmap: reset", Result: "UNRESOLVED", Log: "cannot write stack_map"},
		{No: 4, File: "test.d/stackmap/bin.tc", Name: "stackmap: bin", Result: "UNSUPPORTED"},
	}
	res.SelftestsNote = "ftracetest exited 1"
	res.Boots = []BootResult{
		{Plan: contract.Plans()[0], Boot: &qemu.Result{Duration: 3900 * time.Millisecond}},
		{Plan: contract.Plans()[1], Skipped: "it died: Kernel panic - not syncing: stackmap: bad option"},
		{Plan: contract.Plans()[2], Skipped: "kernel has no stackmap feature"},
		{Plan: contract.BootPlan{Name: "control", Labels: labels.MustParse("BASE-TRACEFS-01")}, Boot: &qemu.Result{Duration: 1500 * time.Millisecond}, Control: true},
	}
	return res
}

// noVerdictRun found its kernel, and the default boot never reached the
// suite.
func noVerdictRun() *Result {
	res := result()
	res.Request.BootArgs = []string{"nokaslr", "loglevel=7"}
	res.Summary = report.Summary{}
	res.Suite = "github.com/ftrace-stackmap/conformance v1.2-3-g0123456789ab"
	res.Started = started
	res.Plans = []string{"default", "trace-options", "bits-12"}
	res.Boots = []BootResult{{Plan: contract.Plans()[0], Boot: &qemu.Result{Duration: 61 * time.Second}}}
	res.Required, res.RequiredWhy = true, "default for build entries: IMAGE=reference"
	res.NoVerdict = "boot default did not reach the suite: \x1b[31mKernel panic\x1b[0m - not syncing: VFS: Unable to mount root fs # 1\n" +
		"the console's last lines:\n  [    1.234] VFS: Cannot open root device \"vda\"\n  [    1.235] Kernel panic - not syncing: VFS: Unable to mount root fs"
	return res
}

// checkMail fails on what a mail would mangle: colours, tabs, lines wider
// than Width that a space could have broken (the reproduce command aside).
func checkMail(t *testing.T, text string) {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if strings.ContainsAny(l, "\x1b\t\r") {
			t.Errorf("control character in %q", l)
		}
		if len(l) > report.Width && !strings.HasPrefix(l, "  make ") && !strings.HasPrefix(l, "  go run ") && strings.Contains(strings.TrimSpace(l), " ") {
			t.Errorf("line of %d columns: %q", len(l), l)
		}
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

// The grid has a column per boot the run made, not per plan: a torture
// run boots one plan of many.
func TestGridColumnsAreTheBootsMade(t *testing.T) {
	res := &Result{Plans: []string{"default", "bits-12", "torture"}, Boots: []BootResult{
		{Plan: contract.BootPlan{Name: "default"}, Skipped: NoSpecSelected},
		{Plan: contract.BootPlan{Name: "bits-12"}, Skipped: NoSpecSelected},
		{Plan: contract.BootPlan{Name: "torture"}, Boot: &qemu.Result{}},
	}}
	res.Summary.Specs = []report.Spec{{Name: "torture.SM-TORTURE-01", Boot: "torture", Class: contract.Unresolved}}
	g := gridSection(res)
	if !slices.Equal(g.Table.Head, []string{"requirement", "torture"}) {
		t.Errorf("columns %v, want the torture boot's only", g.Table.Head)
	}
	if !strings.Contains(g.Text[0], "(1 of them UNRESOLVED)") {
		t.Errorf("grid text %q", g.Text[0])
	}
}
