// SPDX-License-Identifier: GPL-2.0-only

package lava

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/labels"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
	"github.com/ftrace-stackmap/conformance/internal/results"
)

func testRequest() results.Request {
	return results.Request{Arch: arch.MustLookup("x86_64"), Profile: contract.ProfileV4, Labels: labels.MustParse("BASE-ONOFF-01 || SM-RESET-01"), Seed: 5, Timeout: 5 * time.Minute}
}

func testDescription(filter string) Description {
	o := testRequest()
	if filter != "" {
		o.Labels = labels.MustParse(filter)
	}
	return Description{Job: "stackmap conformance reference x86_64 (profile v4, seed 5)", Request: o, Entry: "reference",
		Source: "IMAGE=reference (built from kernel/)", KernelSHA: strings.Repeat("0f", 32), Required: true,
		RequiredWhy: "default for build entries: IMAGE=reference", Suite: "github.com/ftrace-stackmap/conformance v1"}
}

// judge writes a fake log and judges it as smct lava-results does.
func judge(t *testing.T, desc Description, boots []fakeBoot, end string) (*results.Result, *Log, error) {
	t.Helper()
	if testing.Short() {
		t.Skip("lists the specs with a build of the suite")
	}
	root, _ := filepath.Abs("../..")
	logFile := filepath.Join(t.TempDir(), "lava.log")
	os.WriteFile(logFile, fakeLog(t, desc, boots, end), 0o644)
	o := qemutest.Options{ModuleDir: root, ResultsDir: t.TempDir(), Progress: progress.Discard()}
	res, l, err := Results(context.Background(), new(qemutest.Runner), o, logFile)
	if res == nil || res.Dir == "" {
		t.Fatalf("no run directory: %v", err)
	}
	if target, _ := os.Readlink(filepath.Join(o.ResultsDir, "latest")); target != filepath.Base(res.Dir) {
		t.Errorf("latest -> %q, want %s", target, filepath.Base(res.Dir))
	}
	return res, l, err
}

var (
	pass = func(id string) fakeSpec { return fakeSpec{id, types.SpecStatePassed, contract.Pass} }
	fail = func(id string) fakeSpec { return fakeSpec{id, types.SpecStateFailed, contract.Fail} }
)

// A job that ran: the verdict, counts and exit status as a run made here
// gives them, and LAVA's cases as the suite judged them.
func TestResultsOfAJob(t *testing.T) {
	for _, tc := range []struct {
		name    string
		specs   []fakeSpec
		dmesg   string
		code    int
		closing string
	}{
		{"pass", []fakeSpec{pass("BASE-ONOFF-01"), pass("SM-RESET-01")}, "", 0, "2 passed, 0 failed, 0 skipped"},
		{"fail", []fakeSpec{pass("BASE-ONOFF-01"), fail("SM-RESET-01")}, "", 1, "1 passed, 1 failed, 0 skipped"},
		// Two specs of one requirement share a case name: one fails.
		{"two specs of one requirement", []fakeSpec{fail("SM-RESET-01"), pass("SM-RESET-01")}, "", 1, "1 passed, 1 failed, 0 skipped"},
		{"unresolved", []fakeSpec{pass("BASE-ONOFF-01"), {"SM-RESET-01", types.SpecStateFailed, contract.Unresolved}}, "", 2, "1 passed, 1 failed, 0 skipped"},
		{"kernel-log", []fakeSpec{pass("BASE-ONOFF-01"), pass("SM-RESET-01")}, "<4>[    3.1] WARNING: CPU: 0 PID: 9 at kernel/trace/stackmap.c:99 stackmap_reset+0x9/0x40\n", 1, "2 passed, 1 failed, 0 skipped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, l, err := judge(t, testDescription(""), []fakeBoot{{name: "default", specs: tc.specs, dmesg: tc.dmesg}}, "pass")
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode() != tc.code || res.ClosingLine() != tc.closing {
				t.Errorf("exit %d, %q; want %d, %q", res.ExitCode(), res.ClosingLine(), tc.code, tc.closing)
			}
			if agree, differ := l.Agreement(res); agree != 2 || len(differ) > 0 {
				t.Errorf("LAVA's cases: %d agree, otherwise %v", agree, differ)
			}
			if !strings.Contains(res.Machine, `LAVA job "stackmap conformance reference x86_64`) || res.Source != "IMAGE=reference (built from kernel/)" {
				t.Errorf("machine %q, source %q: want the LAVA job and the kernel named", res.Machine, res.Source)
			}
			if _, err := results.Write(res); err != nil {
				t.Fatal(err)
			}
			evidence, _ := os.ReadFile(filepath.Join(res.Dir, results.EvidenceFile))
			if !strings.Contains(string(evidence), "LAVA job") {
				t.Errorf("the evidence does not name the LAVA job:\n%s", evidence)
			}
		})
	}
}

// A job whose log lost a boot's kernel log is not judged as if that
// kernel had logged nothing: the boot's kernel-log test is UNRESOLVED and
// named, and a run that failed still fails.
func TestResultsWithoutAKernelLog(t *testing.T) {
	const warning = "<4>[    3.1] WARNING: CPU: 0 PID: 9 at kernel/trace/stackmap.c:99 stackmap_reset+0x9/0x40\n"
	for _, tc := range []struct {
		name    string
		specs   []fakeSpec
		code    int
		verdict string
	}{
		{"passing", []fakeSpec{pass("BASE-ONOFF-01"), pass("SM-RESET-01")}, 2, "NO VERDICT: default.kernel-log UNRESOLVED: no kernel log arrived"},
		{"failing", []fakeSpec{pass("BASE-ONOFF-01"), fail("SM-RESET-01")}, 1, "FAIL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, _, err := judge(t, testDescription(""), []fakeBoot{{name: "default", specs: tc.specs, dmesg: warning, noDmesg: true}}, "pass")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := results.Write(res); err != nil {
				t.Fatal(err)
			}
			ktap, _ := os.ReadFile(filepath.Join(res.Dir, results.KTAPFile))
			t.Logf("verdict: %s; %s", res.Verdict(), res.ClosingLine())
			if res.ExitCode() != tc.code || !strings.HasPrefix(res.Verdict(), tc.verdict) ||
				!strings.Contains(string(ktap), "default.kernel-log # ERROR no kernel log arrived") {
				t.Errorf("exit %d, verdict %q; want %d, %q, and the kernel-log test UNRESOLVED:\n%s", res.ExitCode(), res.Verdict(), tc.code, tc.verdict, ktap)
			}
		})
	}
}

// The guest's status line, read only as LAVA closed the console, is the
// boot's still.
func TestStatusLineReadAsLAVACloses(t *testing.T) {
	res, _, err := judge(t, testDescription(""), []fakeBoot{{name: "default", late: true, specs: []fakeSpec{pass("BASE-ONOFF-01"), pass("SM-RESET-01")}}}, "pass")
	if err != nil || res.ExitCode() != 0 {
		t.Fatalf("err %v, exit %d; want the run's verdict", err, res.ExitCode())
	}
}

// A kernel that dies on a boot's parameter fails that boot's specs, as a
// run made here reports it; the other boots keep their results.
func TestResultsOfABootThatDied(t *testing.T) {
	var boots []fakeBoot
	for _, p := range contract.Plans() {
		switch {
		case p.IsDefault():
			boots = append(boots, fakeBoot{name: p.Name, specs: []fakeSpec{pass("BASE-ONOFF-01")}})
		case p.Name == "bits-30":
			boots = append(boots, fakeBoot{name: p.Name, panic: true})
		case p.Labels.String() == "SM-BOOT-02":
			boots = append(boots, fakeBoot{name: p.Name, specs: []fakeSpec{pass("SM-BOOT-02")}})
		}
	}
	res, _, err := judge(t, testDescription("BASE-ONOFF-01 || SM-BOOT-02"), boots, "pass")
	if err != nil {
		t.Fatal(err)
	}
	failed := map[string]bool{}
	for _, sp := range res.Summary.Specs {
		if sp.Class == contract.Fail {
			failed[sp.Boot] = true
		}
	}
	if len(failed) != 1 || !failed["bits-30"] || res.ExitCode() != 1 {
		t.Fatalf("failed boots %v, exit %d: want bits-30's specs alone", failed, res.ExitCode())
	}
	for _, sp := range res.Summary.Specs {
		if sp.Boot == "bits-30" && !strings.Contains(sp.Detail, "Kernel panic - not syncing: Fatal exception") {
			t.Errorf("bits-30 %s: %q, want the kernel's panic", sp.Name, sp.Detail)
		}
	}
}

// A job that gives no verdict says why, and never passes: a job LAVA
// ended early, or whose log is cut, judges the boots it holds whole and
// names what it lacks.
func TestResultsWithoutVerdict(t *testing.T) {
	ok := []fakeBoot{{name: "default", specs: []fakeSpec{pass("BASE-ONOFF-01"), pass("SM-RESET-01")}}}
	for _, tc := range []struct {
		name     string
		boots    []fakeBoot
		end      string
		want     string
		wholeRun bool // no boot to judge: the run has no verdict at all
	}{
		{"infrastructure error", ok, "infra", "NO VERDICT: the LAVA job ended in Infrastructure error", false},
		{"log cut", ok, "cut", "NO VERDICT: LAVA's log ends before the job did", false},
		{"never booted", nil, "pass", "the job made no boot", true},
		{"default boot died", []fakeBoot{{name: "default", panic: true}}, "pass", "no boot of the job reached the suite's init (", true},
		{"default boot died under KVM", []fakeBoot{{name: "default", panic: true, kvm: true}}, "pass", "no boot of the job reached the suite's init, under KVM (-enable-kvm", true},
		{"default boot hung", []fakeBoot{{name: "default", hang: true, specs: ok[0].specs}}, "pass", "NO VERDICT: boot default cannot be judged: the guest did not power off", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, _, err := judge(t, testDescription(""), tc.boots, tc.end)
			var infra *qemutest.InfraError
			switch {
			case tc.wholeRun && (!errors.As(err, &infra) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want no verdict: %q", err, tc.want)
			case tc.wholeRun:
				res.NoVerdict = err.Error()
			case err != nil || !strings.HasPrefix(res.Verdict(), tc.want):
				t.Fatalf("err %v, verdict %q; want %q", err, res.Verdict(), tc.want)
			}
			if res.ExitCode() != 2 {
				t.Errorf("exit %d, want 2", res.ExitCode())
			}
		})
	}
}
