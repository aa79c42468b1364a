// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/internal/consoleframe"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// ginkgoReport makes a report.json with one It in the given state.
func ginkgoReport(t *testing.T, state types.SpecState, msg string) []byte {
	t.Helper()
	r := types.Report{SuiteSucceeded: state != types.SpecStateFailed, SpecReports: types.SpecReports{{
		LeafNodeType: types.NodeTypeIt, LeafNodeText: "[BASE-ONOFF-01] toggles", State: state,
		LeafNodeLabels: []string{"BASE-ONOFF-01"}, Failure: types.Failure{Message: msg},
	}}}
	b, err := json.Marshal([]types.Report{r})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func console(t *testing.T, report []byte, exit int) string {
	var b bytes.Buffer
	b.WriteString("[    0.000000] Booting Linux on physical CPU 0x0\r\n")
	frames := &consoleframe.Sender{W: &b}
	if report != nil {
		frames.Write("report.json", report)
	}
	if exit >= 0 {
		consoleframe.WriteExit(&b, exit, frames.Sent)
	}
	b.WriteString("[    2.870650] reboot: Power down\r\n")
	return b.String()
}

// lose cuts a frame out of a console: its lines never arrived.
func lose(console, name string) string {
	begin := strings.Index(console, "SMCT-FRAME-BEGIN name="+name+" ")
	end := strings.Index(console, "SMCT-FRAME-END name="+name+"\n")
	return console[:begin] + console[end+len("SMCT-FRAME-END name="+name+"\n"):]
}

func judge(t *testing.T, log string, boot qemu.Result) (int, error) {
	t.Helper()
	c, err := Judge([]byte(log), "console.log", "default", &boot)
	if err != nil {
		return 2, err
	}
	return report.Summarize(contract.DefaultBoot, c.Reports).ExitCode(), nil
}

func TestJudgeTrustsOnlyCompleteResults(t *testing.T) {
	pass := ginkgoReport(t, types.SpecStatePassed, "")
	fail := ginkgoReport(t, types.SpecStateFailed, "tracing_on reads 1, want 0")
	good := console(t, pass, 0)
	for _, tc := range []struct {
		name     string
		log      string
		boot     qemu.Result
		wantExit int
		wantWhy  string // in the infra reason; "" means no infra error
	}{
		{"a passing run", good, qemu.Result{}, 0, ""},
		{"a failing run", console(t, fail, 1), qemu.Result{}, 1, ""},
		{"a kernel panic", good[:40] + "\r\n[ 1.0] Kernel panic - not syncing: No working init found.\r\n",
			qemu.Result{Panic: "Kernel panic - not syncing: No working init found."}, 2, "panicked"},
		{"a hang", good[:40], qemu.Result{TimedOut: true, Duration: time.Minute}, 2, "did not power off"},
		{"no frames at all", "[ 0.1] hello\r\n", qemu.Result{}, 2, "report.json of boot default did not arrive; nothing of the guest's arrived"},
		{"a report without the exit line", console(t, pass, -1), qemu.Result{}, 2, "the exit line of boot default did not arrive"},
		{"an exit line without a report", console(t, nil, 0), qemu.Result{}, 2, "report.json of boot default was not sent: the guest's exit line does not list it; its init ran: the exit line arrived"},
		{"a report lost on the way", lose(good, "report.json"), qemu.Result{}, 2, "report.json of boot default did not arrive; the guest sent it (its exit line lists it); its init ran: the exit line arrived"},
		{"an older guest's exit line, no report", "SMCT-EXIT code=0\r\n", qemu.Result{}, 2, "report.json of boot default did not arrive, and the guest's exit line has no list of what it sent"},
		{"a cut report", good[:len(good)/2], qemu.Result{}, 2, "report.json of boot default arrived damaged"},
		{"a corrupt report", strings.Replace(good, "SMCT-FRAME-BEGIN name=report.json size=", "SMCT-FRAME-BEGIN name=report.json size=1", 1), qemu.Result{}, 2, "damaged"},
		{"a guest error", "SMCT-GUEST-ERROR cannot run /suites.test: exec format error\r\n", qemu.Result{}, 2, "exec format error"},
		{"an exit code that contradicts the report", console(t, pass, 1), qemu.Result{}, 2, "disagrees"},
		{"a report that is not JSON", console(t, []byte("{{"), 0), qemu.Result{}, 2, "report.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, err := judge(t, tc.log, tc.boot)
			if tc.wantWhy == "" && err != nil {
				t.Fatalf("Judge() = %v, want no error", err)
			}
			if tc.wantWhy != "" && (err == nil || !strings.Contains(err.Error(), tc.wantWhy)) {
				t.Fatalf("Judge() = %v, want an error mentioning %q", err, tc.wantWhy)
			}
			if code != tc.wantExit {
				t.Fatalf("exit code = %d, want %d", code, tc.wantExit)
			}
		})
	}
}

func TestKernelProblems(t *testing.T) {
	log := []byte("<6>[    1.0] ftrace_stackmap: 16384 entries\n<4>[    2.0] WARNING: CPU: 0 PID: 1 at kernel/trace/trace.c:123 foo+0x1/0x2\n<0>[ 3.0] watchdog: BUG: soft lockup - CPU#1 stuck for 22s!\n<4>[ 4.0] ftrace_stackmap: fault 'no_ebusy' switched on\n")
	got := KernelProblems(log)
	if len(got) != 2 || !strings.Contains(got[0], "WARNING: CPU: 0") || !strings.Contains(got[1], "soft lockup") {
		t.Fatalf("KernelProblems() = %q", got)
	}
}

// Lines as kernels print them when something is wrong, each of which must
// fail the run, and lines that must not.
func TestKernelProblemsTable(t *testing.T) {
	for line, want := range map[string]bool{
		"[   12.345678] kernel BUG at mm/slub.c:451!":                                                         true,
		"[    5.000000] BUG: KASAN: slab-out-of-bounds in stackmap_insert+0x1c/0x1a0":                         true,
		"[    5.000000] UBSAN: array-index-out-of-bounds in kernel/trace/trace_stackmap.c:210:5":              true,
		"[    5.000000] BUG: KFENCE: out-of-bounds read in stackmap_seq_show+0x40/0x90":                       true,
		"[    5.000000] KFENCE: use-after-free read in stackmap_bin_read":                                     true,
		"[    5.000000] list_add corruption. next->prev should be prev (ffff8880), but was 0000000000000000":  true,
		"[    5.000000] list_del corruption, ffff888003e1c0c8->next is LIST_POISON1 (dead000000000100)":       true,
		"[  243.000000] INFO: task kworker/0:1:31 blocked for more than 120 seconds.":                         true,
		"[   30.000000] rcu: INFO: rcu_preempt self-detected stall on CPU":                                    true,
		"[   22.000000] watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [swapper/0:1]":                      true,
		"[    3.000000] Internal error: Oops: 0000000096000004 [#1] SMP":                                      true,
		"[    1.000000] ftrace_stackmap: 16384 entries, 32768 slots":                                          false,
		"[    1.000000] ftrace_stackmap: fault 'no_ebusy' on: this kernel breaks the stackmap ABI on purpose": false,
		"[    0.100000] Kernel command line: console=ttyS0 panic=-1":                                          false,
	} {
		if got := len(KernelProblems([]byte(line+"\n"))) == 1; got != want {
			t.Errorf("KernelProblems(%q) caught it: %v, want %v", line, got, want)
		}
	}
}
