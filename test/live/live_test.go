// SPDX-License-Identifier: GPL-2.0-only

// Package live runs the suite binary on this machine's own kernel (live
// mode) and checks that it leaves tracefs as it found it: after a full run,
// after a refusal, and after interrupts that land while a spec has settings
// changed. It runs when SMCT_LIVE=1 asks for it, and needs root and
// tracefs; it skips otherwise. It leaves tracefs mounted if it had to mount
// it, as the suite does.
package live

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	junit "github.com/joshdk/go-junit"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/harness"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// labelFilter is the README's live-mode filter: the default boot's.
var labelFilter = contract.Plans()[0].Labels.String()

// execEnable is set by BASE-EVENT-01 (and the stackmap specs) right before
// they run the workload with tracing on.
const execEnable = "events/sched/sched_process_exec/enable"

func TestLiveMode(t *testing.T) {
	tfs := liveTraceFS(t)
	suite := buildSuite(t)

	t.Run("full run", func(t *testing.T) {
		guard(t, tfs)
		before := dump(t, tfs)
		code, out, report := run(t, suite, nil)
		if code != 0 {
			t.Fatalf("exit %d, want 0\n%s", code, out)
		}
		checkVerdicts(t, tfs, report)
		sameSettings(t, before, dump(t, tfs))
	})

	t.Run("reports for labs", func(t *testing.T) {
		guard(t, tfs)
		ktap, junitXML := filepath.Join(t.TempDir(), "ktap.txt"), filepath.Join(t.TempDir(), "junit.xml")
		code, out, rep := run(t, suite, nil, "-smct.ktap="+ktap, "-smct.junit="+junitXML, "-smct.exit-codes=kselftest")
		s := report.Summarize(contract.DefaultBoot, []types.Report{rep})
		if want := report.Kselftest(s.ExitCode(), s); code != want {
			t.Errorf("exit %d, want kselftest's %d for %q\n%s", code, want, s.ClosingLine(), out)
		}
		b, err := os.ReadFile(ktap)
		if err != nil || !strings.HasPrefix(string(b), "KTAP version 1\n") {
			t.Fatalf("-smct.ktap wrote %q, %v", b, err)
		}
		if len(s.Specs) == 0 {
			t.Fatal("no spec ran")
		}
		// Without a terminal, each spec's class and reason; in the KTAP,
		// each spec under the name a QEMU run gives it.
		for _, sp := range s.Specs {
			line := fmt.Sprintf("%-11s %s", sp.Class, sp.Text)
			if sp.Class != contract.Pass {
				line += " -- " + sp.Message
			}
			if !strings.Contains(out, line+"\n") {
				t.Errorf("output lacks %q", line)
			}
			if !regexp.MustCompile(`(?m)^(ok|not ok) \d+ ` + regexp.QuoteMeta(sp.Name) + `( # .*)?$`).Match(b) {
				t.Errorf("KTAP has no test %s:\n%s", sp.Name, b)
			}
		}
		if strings.Contains(out, "\x1b[") {
			t.Errorf("colour escapes in output that is no terminal")
		}
		suites, err := junit.IngestFile(junitXML)
		if err != nil || len(suites) != 1 {
			t.Fatalf("-smct.junit: %d suites, %v", len(suites), err)
		}
		p, f, k := s.Totals()
		if got := suites[0].Totals; got.Passed != p || got.Failed+got.Error != f || got.Skipped != k {
			t.Errorf("JUnit totals %+v disagree with %q", got, s.ClosingLine())
		}
	})

	t.Run("refusal and force", func(t *testing.T) {
		guard(t, tfs)
		// An instance stands for someone else's tracing session.
		busy := tfs.Path("instances/smct-live-busy")
		if err := os.Mkdir(busy, 0o755); err != nil {
			t.Fatalf("making an instance: %v", err)
		}
		t.Cleanup(func() { os.Remove(busy) })
		before := dump(t, tfs)
		code, out, _ := run(t, suite, nil)
		if code != 1 || !strings.Contains(out, "tracefs is in use (instances smct-live-busy)") {
			t.Fatalf("with an instance in place: exit %d, want 1 and a refusal naming it\n%s", code, out)
		}
		sameSettings(t, before, dump(t, tfs))
		code, out, _ = run(t, suite, nil, "-smct.force")
		if code != 0 {
			t.Fatalf("with -smct.force: exit %d, want 0\n%s", code, out)
		}
		sameSettings(t, before, dump(t, tfs))
	})

	t.Run("interrupted", func(t *testing.T) {
		if !tfs.Exists(execEnable) {
			t.Skipf("no %s: no spec runs a workload to interrupt", execEnable)
		}
		// Start from tracing off: the spec under interruption turns it on,
		// so a missed restore shows.
		if was, _ := tfs.ReadTrimmed("tracing_on"); was != "0" {
			tfs.Write("tracing_on", "0")
			t.Cleanup(func() { tfs.Write("tracing_on", was) })
		}
		sig := func(s ...os.Signal) []os.Signal { return s }
		for _, tc := range []struct {
			name   string
			delay  time.Duration // after the spec has changed a setting
			sigs   []os.Signal   // sent a millisecond apart
			hangup bool          // stdout's reader goes away first, as with a dropped adb shell
		}{
			{"SIGINT after 0.2s", 200 * time.Millisecond, sig(os.Interrupt), false},
			{"SIGINT after 0.5s", 500 * time.Millisecond, sig(os.Interrupt), false},
			{"SIGINT after 1s", time.Second, sig(os.Interrupt), false},
			{"SIGINT after 2s", 2 * time.Second, sig(os.Interrupt), false},
			{"SIGTERM after 0.5s", 500 * time.Millisecond, sig(syscall.SIGTERM), false},
			{"two SIGINTs", 500 * time.Millisecond, sig(os.Interrupt, os.Interrupt), false},
			{"three SIGINTs", 500 * time.Millisecond, sig(os.Interrupt, os.Interrupt, os.Interrupt), false},
			{"SIGHUP with stdout gone", 500 * time.Millisecond, sig(syscall.SIGHUP), true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				guard(t, tfs)
				before := dump(t, tfs)
				code, out, _ := run(t, suite, func(p *os.Process, dropStdout func()) {
					waitFor(t, func() bool { v, _ := tfs.ReadTrimmed(execEnable); return v == "1" })
					if tc.hangup {
						dropStdout()
					}
					time.Sleep(tc.delay)
					changed := diff(before, dump(t, tfs))
					if len(changed) == 0 {
						t.Errorf("nothing changed when the signal was sent: the interrupt tests nothing")
					}
					t.Logf("changed when signalled: %s", strings.Join(changed, "; "))
					for _, s := range tc.sigs {
						p.Signal(s)
						time.Sleep(time.Millisecond)
					}
				}, "-smct.workload-delay=3s")
				path := ginkgoPath(out)
				if tc.hangup {
					path = "(its output went nowhere)"
				}
				t.Logf("exit %d; Ginkgo: %s", code, path)
				if code != 1 {
					t.Errorf("exit %d, want 1 (interrupted)\n%s", code, out)
				}
				sameSettings(t, before, dump(t, tfs))
			})
		}
	})
}

// liveTraceFS skips the test unless it was asked for and the suite can
// run here, and puts back the harness's view of the settings when it ends,
// whatever happened. It is asked for with SMCT_LIVE=1 (make test sets it):
// `go test ./...` as root must not run the suite on the developer's tracefs.
func liveTraceFS(t *testing.T) *harness.TraceFS {
	if os.Getenv("SMCT_LIVE") != "1" {
		t.Skip("runs the suite on this machine's tracefs: set SMCT_LIVE=1 to run it (make test does)")
	}
	if runtime.GOOS != "linux" {
		t.Skip("live mode needs Linux")
	}
	if os.Geteuid() != 0 {
		t.Skip("live mode needs root: the suite writes tracefs")
	}
	tfs, err := harness.OpenTraceFS()
	if err != nil {
		t.Skipf("no tracefs: %v", err)
	}
	snap, err := tfs.Save()
	if err != nil {
		t.Skipf("cannot read tracefs settings: %v", err)
	}
	if busy := snap.InUse(); busy != "" {
		t.Skipf("tracefs is in use (%s): leaving it alone", busy)
	}
	guard(t, tfs)
	return tfs
}

// guard puts back, when the test ends, whatever setting a failed run left
// changed, so that no failure outlives its test or leaks into the next.
func guard(t *testing.T, tfs *harness.TraceFS) {
	snap, err := tfs.Save()
	if err != nil {
		t.Fatalf("saving tracefs settings: %v", err)
	}
	t.Cleanup(func() {
		if drift := snap.Drift(); len(drift) > 0 {
			t.Logf("restoring what the run left changed: %s", strings.Join(drift, "; "))
			if err := snap.Restore(); err != nil {
				t.Errorf("restoring tracefs settings: %v", err)
			}
		}
	})
}

// buildSuite compiles the suite binary as the README says.
func buildSuite(t *testing.T) string {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		goCmd = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "suites.test")
	cmd := exec.Command(goCmd, "test", "-c", "-o", bin, "./suites")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the suite: %v\n%s", err, out)
	}
	return bin
}

// run runs the suite with the live-mode label filter and returns its exit
// status, output and report. during, when given, runs once it has started.
func run(t *testing.T, bin string, during func(p *os.Process, dropStdout func()), args ...string) (int, string, types.Report) {
	t.Helper()
	dir := t.TempDir()
	reportPath := filepath.Join(dir, "report.json")
	args = append([]string{"-ginkgo.label-filter=" + labelFilter, "-ginkgo.no-color", "-ginkgo.json-report=" + reportPath}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Dir = dir
	outFile, err := os.Create(filepath.Join(dir, "output"))
	if err != nil {
		t.Fatal(err)
	}
	defer outFile.Close()
	// stdout through a pipe that a drain goroutine copies to the file, so
	// the reader can go away; stderr straight to the file.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, outFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	drained := make(chan struct{})
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			outFile.Write(buf[:n])
			if err != nil {
				break
			}
		}
		close(drained)
	}()
	waited := false
	defer func() { // a failed check in during: do not leave the suite running
		if !waited {
			cmd.Process.Signal(os.Interrupt)
			cmd.Wait()
		}
	}()
	if during != nil {
		during(cmd.Process, func() { r.Close() })
	}
	cmd.Wait()
	waited = true
	<-drained
	r.Close()
	out, _ := os.ReadFile(outFile.Name())
	if ctx.Err() != nil {
		t.Fatalf("the suite did not finish within 30s\n%s", out)
	}
	var reports []types.Report
	if data, err := os.ReadFile(reportPath); err == nil {
		json.Unmarshal(data, &reports)
	}
	if len(reports) == 0 {
		reports = []types.Report{{}}
	}
	return cmd.ProcessState.ExitCode(), string(out), reports[0]
}

// checkVerdicts logs a line per spec and checks the run: nothing failed or
// unresolved, and on a kernel without the feature every stackmap spec is
// UNSUPPORTED with the reason.
func checkVerdicts(t *testing.T, tfs *harness.TraceFS, report types.Report) {
	if len(report.SpecReports) == 0 {
		t.Fatal("no report")
	}
	noFeature := !tfs.Exists("options/stackmap") && !tfs.Exists("stack_map")
	for _, s := range report.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		class := contract.ClassOf(s)
		if class == contract.NotRun {
			continue
		}
		why := ""
		if class != contract.Pass {
			why = ": " + s.Failure.Message
		}
		t.Logf("%-11s %s%s", class, s.LeafNodeText, why)
		switch {
		case class == contract.Fail || class == contract.Unresolved:
			t.Errorf("%s: %s", s.LeafNodeText, class)
		case noFeature && slices.Contains(s.Labels(), contract.LabelStackmap) &&
			(class != contract.Unsupported || !strings.Contains(why, contract.NoStackmapFeature)):
			t.Errorf("%s: %s on a kernel without stackmap, want UNSUPPORTED (%s)", s.LeafNodeText, class, contract.NoStackmapFeature)
		}
	}
}

// ginkgoPath says which of Ginkgo's interrupt paths a run took.
func ginkgoPath(out string) string {
	var path []string
	for _, s := range []string{"First interrupt received", "Second interrupt received", "Final interrupt received", "restoring tracefs settings after the run"} {
		if strings.Contains(out, s) {
			path = append(path, s)
		}
	}
	return strings.Join(path, "; ")
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no spec turned on the exec event within 10s")
		}
	}
}

// settingFiles are the tracefs files that hold settings the suite may
// change, with the options and every event's enable file. Read errors are
// kept as values: set_ftrace_filter refuses to open on some kernels.
var settingFiles = []string{
	"current_tracer", "tracing_on", "buffer_size_kb", "trace_options",
	"set_event", "set_event_pid", "set_ftrace_filter", "set_ftrace_notrace",
	"set_ftrace_pid", "trace_clock", "tracing_cpumask", "tracing_thresh",
	"options/*", "events/enable", "events/*/enable", "events/*/*/enable",
}

// dump reads every setting, and the names under instances/.
func dump(t *testing.T, tfs *harness.TraceFS) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, pattern := range settingFiles {
		paths, _ := filepath.Glob(tfs.Path(pattern))
		for _, p := range paths {
			node, _ := filepath.Rel(tfs.Root, p)
			b, err := os.ReadFile(p)
			if err != nil {
				m[node] = "error: " + err.Error()
				continue
			}
			m[node] = strings.TrimSpace(string(b))
		}
	}
	instances, err := tfs.Instances()
	if err != nil {
		t.Fatalf("listing instances: %v", err)
	}
	m["instances/"] = strings.Join(instances, " ")
	if len(m) < 10 {
		t.Fatalf("read only %d settings from %s", len(m), tfs.Root)
	}
	return m
}

func diff(before, after map[string]string) []string {
	var d []string
	for node, was := range before {
		if now, ok := after[node]; !ok || !sameValue(node, was, now) {
			d = append(d, fmt.Sprintf("%s: %q -> %q", node, was, now))
		}
	}
	for node, now := range after {
		if _, ok := before[node]; !ok {
			d = append(d, fmt.Sprintf("%s: new, %q", node, now))
		}
	}
	slices.Sort(d)
	return d
}

// sameValue compares a setting's two readings. A buffer not used yet reads
// "7 (expanded: 1408)" and, once the suite has traced, 1410 (whole pages):
// the same setting, as the harness's own restore check judges it.
func sameValue(node, a, b string) bool {
	if node == "buffer_size_kb" {
		return harness.SameBufferSize(a, b)
	}
	return a == b
}

func sameSettings(t *testing.T, before, after map[string]string) {
	t.Helper()
	if d := diff(before, after); len(d) > 0 {
		t.Errorf("tracefs settings changed by the run:\n%s", strings.Join(d, "\n"))
		return
	}
	t.Logf("all %d settings as before", len(after))
}
