// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/initramfs/guest"
	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/consoleframe"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/labels"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// recorded is the console of a default boot that ran BASE-ONOFF-01 in
// state and sent its kernel log dmesg, as the guest's init writes it.
func recorded(t *testing.T, state types.SpecState, dmesg string) string {
	var b bytes.Buffer
	b.WriteString("[    0.000000] Linux version 6.12.0-stackmap (build) #1 SMP\r\n")
	consoleframe.Write(&b, "report.json", ginkgoReport(t, state, "tracing_on reads 1, want 0"))
	consoleframe.Write(&b, guest.KernelLogFile, []byte(dmesg))
	exit := 0
	if state == types.SpecStateFailed {
		exit = 1
	}
	consoleframe.WriteExit(&b, exit, nil)
	b.WriteString("[    2.870650] reboot: Power down\r\n")
	return b.String()
}

// dropFrame takes a frame out of a console, from its begin line to its
// end line, as a lossy log loses it.
func dropFrame(console, name string) string {
	begin := strings.Index(console, "SMCT-FRAME-BEGIN name="+name+" ")
	endTag := "SMCT-FRAME-END name=" + name + "\n"
	end := strings.Index(console, endTag)
	if begin < 0 || end < 0 {
		panic("no frame " + name)
	}
	return console[:begin] + console[end+len(endTag):]
}

// runOf makes a run of the default boot, whose console is the one given,
// as Run makes it after preparing: bootAll, then finish.
func runOf(t *testing.T, console string, prepare func(dir string)) (*results.Result, error) {
	t.Helper()
	dir := t.TempDir()
	if prepare != nil {
		prepare(dir)
	}
	req := results.Request{Arch: arch.MustLookup("arm64"), Labels: labels.MustParse("BASE-ONOFF-01")}
	r := &run{o: Options{Request: req, Boots: []string{contract.DefaultBoot}, Lanes: 1, Progress: progress.Discard()},
		res: &results.Result{Request: req, Dir: dir}, console: results.NewConsole(dir),
		specs: types.SpecReports{{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[BASE-ONOFF-01] toggles", LeafNodeLabels: []string{"BASE-ONOFF-01"}}}}
	r.booter = func(context.Context, contract.BootPlan, labels.Filter, *selftestSetup, string, *progress.Reporter) (*qemu.Result, []byte, error) {
		return &qemu.Result{Reached: true}, []byte(console), nil
	}
	if err := r.bootAll(context.Background(), r.o.plans()); err != nil {
		return r.res, err
	}
	return r.finish()
}

// The kernel-log check of a boot judged here: a log that did not arrive
// is UNRESOLVED and named, never clean; a run that failed still fails.
func TestKernelLogThatDidNotArrive(t *testing.T) {
	const warning = "<4>[    3.1] WARNING: CPU: 0 PID: 9 at kernel/trace/stackmap.c:99 stackmap_reset+0x9/0x40\n"
	for _, tc := range []struct {
		name    string
		console string
		code    int
		verdict string
		missing bool
	}{
		{"clean log", recorded(t, types.SpecStatePassed, "<6>[    1.0] ftrace_stackmap: 16384 entries\n"), 0, "ok", false},
		{"a warning", recorded(t, types.SpecStatePassed, warning), 1, "FAIL: the kernel logged problems", false},
		{"log dropped", dropFrame(recorded(t, types.SpecStatePassed, warning), guest.KernelLogFile), 2,
			"NO VERDICT: default.kernel-log UNRESOLVED: no kernel log arrived", true},
		{"log dropped, a spec failed", dropFrame(recorded(t, types.SpecStateFailed, ""), guest.KernelLogFile), 1, "FAIL", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := runOf(t, tc.console, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("verdict: %s", res.Verdict())
			if res.ExitCode() != tc.code || !strings.HasPrefix(res.Verdict(), tc.verdict) {
				t.Errorf("exit %d, verdict %q; want %d, %q", res.ExitCode(), res.Verdict(), tc.code, tc.verdict)
			}
			if got := len(res.MissingKernelLogs()) > 0; got != tc.missing {
				t.Errorf("missing kernel logs %v, want some: %v", res.MissingKernelLogs(), tc.missing)
			}
			ktap := results.KTAP(res)
			if line := "not ok 2 default.kernel-log # ERROR no kernel log arrived"; tc.missing != strings.Contains(ktap, line) {
				t.Errorf("KTAP has %q: %v, want %v\n%s", line, !tc.missing, tc.missing, ktap)
			}
			_, err = os.Stat(filepath.Join(res.Dir, "boots", "default", guest.KernelLogFile))
			if kept := err == nil; kept == tc.missing {
				t.Errorf("dmesg.txt kept for the reader: %v, want %v", kept, !tc.missing)
			}
		})
	}
}

// A file of a boot that cannot be written leaves the run without a
// verdict, naming the file.
func TestBootFileNotWrittenIsNoVerdict(t *testing.T) {
	inTheWay := func(dir string) {
		// A directory where the kernel log is to be written.
		if err := os.MkdirAll(filepath.Join(dir, "boots", "default", guest.KernelLogFile), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_, err := runOf(t, recorded(t, types.SpecStatePassed, ""), inTheWay)
	t.Logf("error: %v", err)
	var ie *InfraError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), filepath.Join("default", guest.KernelLogFile)) {
		t.Fatalf("err %v, want no verdict naming boots/default/dmesg.txt", err)
	}
}

// bootReport is the report.json of a boot that ran one spec of id in
// state.
func bootReport(t *testing.T, id string, state types.SpecState) []byte {
	t.Helper()
	r := types.Report{SuiteSucceeded: state != types.SpecStateFailed, SpecReports: types.SpecReports{{
		LeafNodeType: types.NodeTypeIt, LeafNodeText: "[" + id + "] holds", State: state,
		LeafNodeLabels: []string{id}, Failure: types.Failure{Message: id + " broken"},
	}}}
	b, err := json.Marshal([]types.Report{r})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// bootConsole is a boot's console as the init writes it, manifest and all.
func bootConsole(t *testing.T, id string, state types.SpecState) string {
	var b bytes.Buffer
	frames := &consoleframe.Sender{W: &b}
	frames.Write("report.json", bootReport(t, id, state))
	frames.Write("stack_map_bin", []byte("captured"))
	frames.Write(guest.KernelLogFile, []byte("<6>[    1.0] clean\n"))
	exit := 0
	if state == types.SpecStateFailed {
		exit = 1
	}
	consoleframe.WriteExit(&b, exit, frames.Sent)
	return b.String()
}

// Each boot's results stand on their own: a boot whose console lost a
// frame the verdict rests on (or that is missing) leaves its specs
// UNRESOLVED, naming the boot and the frame; an intact failure elsewhere
// still fails the run; a lost capture is named, and judges nothing.
func TestEachBootStandsOnItsOwn(t *testing.T) {
	fail, pass := bootConsole(t, "BASE-ONOFF-01", types.SpecStateFailed), bootConsole(t, "BASE-ONOFF-01", types.SpecStatePassed)
	bits := bootConsole(t, "SM-BOOT-02", types.SpecStatePassed)
	for _, tc := range []struct {
		name          string
		boots         map[string]string // console by boot; a boot left out has none
		code          int
		verdict, spec string // the verdict's start; what the bits-12 spec says
	}{
		{"all intact, a failure", map[string]string{"default": fail, "bits-12": bits}, 1, "FAIL", "PASS"},
		{"all intact, passing", map[string]string{"default": pass, "bits-12": bits}, 0, "ok", "PASS"},
		{"another boot's report lost, a failure", map[string]string{"default": fail, "bits-12": dropFrame(bits, "report.json")}, 1,
			"FAIL (and could not judge bits-12)", "UNRESOLVED boot bits-12 cannot be judged: report.json of boot bits-12 did not arrive; the guest sent it (its exit line lists it); its init ran: dmesg.txt, stack_map_bin, the exit line arrived"},
		{"another boot's report damaged, passing", map[string]string{"default": pass, "bits-12": strings.Replace(bits, "SMCT-FRAME-BEGIN name=report.json size=", "SMCT-FRAME-BEGIN name=report.json size=9", 1)}, 2,
			"NO VERDICT: boot bits-12 cannot be judged: report.json of boot bits-12 arrived damaged", "UNRESOLVED"},
		{"another boot not recorded, a failure", map[string]string{"default": fail}, 1,
			"FAIL (and could not judge bits-12)", "UNRESOLVED boot bits-12 cannot be judged: the run's record has no console of boot bits-12"},
		{"a capture lost, passing", map[string]string{"default": pass, "bits-12": dropFrame(bits, "stack_map_bin")}, 0, "ok", "PASS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := results.Request{Arch: arch.MustLookup("arm64")}
			r := &run{o: Options{Request: req, Boots: []string{contract.DefaultBoot, "bits-12"}, Lanes: 1, Progress: progress.Discard()},
				res: &results.Result{Request: req, Dir: t.TempDir()}, console: results.NewConsole(t.TempDir()),
				specs: types.SpecReports{
					{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[BASE-ONOFF-01] holds", LeafNodeLabels: []string{"BASE-ONOFF-01"}},
					{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[SM-BOOT-02] holds", LeafNodeLabels: []string{"SM-BOOT-02", contract.LabelNeedsBoot}}}}
			r.booter = func(_ context.Context, plan contract.BootPlan, _ labels.Filter, _ *selftestSetup, _ string, _ *progress.Reporter) (*qemu.Result, []byte, error) {
				c, ok := tc.boots[plan.Name]
				if !ok {
					return nil, nil, &Unjudged{Boot: plan.Name, Err: noRecord(plan.Name, "")}
				}
				return &qemu.Result{Reached: true}, []byte(c), nil
			}
			if err := r.bootAll(context.Background(), r.o.plans()); err != nil {
				t.Fatal(err)
			}
			res, err := r.finish()
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode() != tc.code || !strings.HasPrefix(res.Verdict(), tc.verdict) {
				t.Errorf("exit %d, verdict %q; want %d, %q", res.ExitCode(), res.Verdict(), tc.code, tc.verdict)
			}
			var got string
			for _, sp := range res.Summary.Specs {
				if sp.Boot == "bits-12" {
					got = strings.TrimSpace(string(sp.Class) + " " + sp.Message)
				}
			}
			if !strings.HasPrefix(got, tc.spec) {
				t.Errorf("bits-12's spec: %q, want %q", got, tc.spec)
			}
			if tc.name == "a capture lost, passing" && (len(res.Lost) != 1 || !strings.Contains(res.Lost[0].Note, "stack_map_bin did not arrive; the guest sent it")) {
				t.Errorf("lost frames %q, want stack_map_bin named", res.Lost)
			}
		})
	}
}
