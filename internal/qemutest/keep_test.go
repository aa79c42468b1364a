// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"bytes"
	"context"
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
	consoleframe.WriteExit(&b, exit)
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
	req := results.Request{Arch: arch.MustLookup("arm64"), Labels: "BASE-ONOFF-01"}
	r := &run{o: Options{Request: req, Boots: []string{contract.DefaultBoot}, Lanes: 1, Progress: progress.Discard()},
		res: &results.Result{Request: req, Dir: dir}, console: results.NewConsole(dir),
		specs: types.SpecReports{{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[BASE-ONOFF-01] toggles", LeafNodeLabels: []string{"BASE-ONOFF-01"}}}}
	r.booter = func(context.Context, contract.BootPlan, string, *selftestSetup, string, *progress.Reporter) (*qemu.Result, []byte, error) {
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
