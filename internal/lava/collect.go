// SPDX-License-Identifier: GPL-2.0-only

package lava

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/ftrace-stackmap/conformance/initramfs/guest"
	"github.com/ftrace-stackmap/conformance/internal/consoleframe"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// Results judges a LAVA job's log as a run made here is judged, and
// returns its result in a run directory of its own under o.ResultsDir
// (results/latest pointing at it). Like qemutest.Run, on a problem that
// leaves no verdict (a log that is not LAVA's, a job LAVA ended with an
// error, a job that never reached the suite) it returns an
// *qemutest.InfraError, with the run directory in the result.
func Results(ctx context.Context, rn *qemutest.Runner, o qemutest.Options, logFile string) (*results.Result, *Log, error) {
	f, err := os.Open(logFile)
	if err != nil {
		res, derr := runDir(o, nil)
		return res, nil, noVerdict(derr, "reading LAVA's log: %v", err)
	}
	l, err := ParseLog(f)
	f.Close()
	if err != nil {
		res, derr := runDir(o, nil)
		return res, nil, noVerdict(derr, "%s: %v", logFile, err)
	}
	boots, desc := l.recorded()
	res, err := runDir(o, desc)
	if err != nil {
		return res, l, err
	}
	why := l.Failed()
	if desc == nil {
		what := "no boot of the job reached the suite's init"
		if len(boots) == 0 {
			what = "the job made no boot: its log has no console"
		} else if underKVM(boots) {
			// A kernel that KVM cannot run on the server hangs there; the
			// server's device dictionary, not the job, may have chosen it.
			what += ", under KVM (-enable-kvm in the server's QEMU command)"
		}
		if why != "" {
			what = why + "; " + what
		}
		return res, l, noVerdict(nil, "%s (%s)", what, logFile)
	}
	res.Machine = l.machine(desc.Job, logFile)
	o.Request = desc.Request
	// A job LAVA ended early, or a log cut short, still holds whole boots:
	// they are judged, the boots it lacks are not.
	res, err = rn.Collect(ctx, o, res, boots, why)
	if err == nil && why != "" && len(res.Unjudged) == 0 {
		res.Unjudged = append(res.Unjudged, results.BootNote{Note: why})
	}
	return res, l, err
}

// underKVM says whether the server booted any of the boots under KVM.
func underKVM(boots map[string]qemutest.Recorded) bool {
	for _, b := range boots {
		if slices.Contains(strings.Fields(b.Command), "-enable-kvm") {
			return true
		}
	}
	return false
}

// noVerdict is the error of a log that gives no verdict; err, when not
// nil, came first.
func noVerdict(err error, format string, args ...any) error {
	if err != nil {
		return err
	}
	return &qemutest.InfraError{Err: fmt.Errorf(format, args...)}
}

// runDir makes the run's directory, named after the job's arch when the
// description is known, and fills in what the job's maker knew.
func runDir(o qemutest.Options, desc *Description) (*results.Result, error) {
	res := &results.Result{}
	archName := ""
	if desc != nil {
		res.Request, res.Kernel, res.Entry, res.Source, res.KernelSHA = desc.Request, desc.Kernel, desc.Entry, desc.Source, desc.KernelSHA
		res.Required, res.RequiredWhy, res.Suite, res.Plans, res.Sanitized = desc.Required, desc.RequiredWhy, desc.Suite, desc.Plans, desc.Sanitized
		res.Derived = desc.Derived
		archName = desc.Request.Arch.Name
	}
	var err error
	if res.Dir, err = results.NewRunDir(o.ResultsDir, "lava", archName); err != nil {
		return nil, &qemutest.InfraError{Err: fmt.Errorf("making the run directory: %w", err)}
	}
	return res, nil
}

// recorded are the boots of the log as qemutest.Collect judges them, by
// namespace (the boot plan's name), and the run's description, which the
// first boot that reached the init sent back.
func (l *Log) recorded() (map[string]qemutest.Recorded, *Description) {
	boots := map[string]qemutest.Recorded{}
	var desc *Description
	for _, ns := range l.Order {
		b := l.Boots[ns]
		if len(b.Console) == 0 {
			continue
		}
		console := strings.Join(b.Console, "\n") + "\n"
		r := qemutest.Recorded{Console: []byte(console), Command: b.Command,
			Boot: qemu.Result{Duration: max(0, b.End.Sub(b.Start)), TimedOut: b.TimedOut, Reached: strings.Contains(console, guest.StartMarker)}}
		if b.Quiet {
			r.Boot.Silent, r.Boot.Quiet = true, QuietTimeout
		}
		for _, line := range b.Console {
			if p := qemu.PanicIn(line); p != "" {
				r.Boot.Panic = p
				break
			}
		}
		boots[ns] = r
		if desc == nil {
			desc = description(r.Console)
		}
	}
	return boots, desc
}

// description is the run's description in a boot's console, or nil.
func description(console []byte) *Description {
	c, err := consoleframe.Decode(bytes.NewReader(console))
	if err != nil || c.Files[guest.JobFile] == nil {
		return nil
	}
	var d Description
	if json.Unmarshal(c.Files[guest.JobFile], &d) != nil || d.Request.Arch.Name == "" {
		return nil
	}
	return &d
}

// machine says where the boots ran, for the reports: the LAVA job, its
// log, and QEMU's options as LAVA ran them.
func (l *Log) machine(job, logFile string) string {
	var opts []string
	for _, ns := range l.Order {
		if words := strings.Fields(l.Boots[ns].Command); len(words) > 0 {
			i := slices.Index(words, "-kernel")
			if i < 0 {
				i = len(words)
			}
			opts = words[:i]
			break
		}
	}
	name := fmt.Sprintf("LAVA job %q", job)
	if l.JobID != "" {
		name = fmt.Sprintf("LAVA job %s %q", l.JobID, job)
	}
	return fmt.Sprintf("%s (lava-dispatcher %s, log %s): QEMU %s %s", name, l.Dispatcher, logFile, l.QEMU, strings.Join(opts, " "))
}

// Agreement compares the cases LAVA recorded with the run's verdict of the
// same specs and checks: how many agree, and each that does not, or that
// LAVA has for something the verdict does not judge. Each spec has a case
// name of its own; a log of a suite that named a case after its boot and
// requirements only (default.SM-RESET-01, for every spec of it) has its
// cases matched with those specs' classes as a whole, in any order. The
// guest's own cases, each boot's kernel-log check and verdict, and the
// case of a kernel that panicked are matched with what the run made of
// that boot.
func (l *Log) Agreement(res *results.Result) (agree int, differ []string) {
	classes := map[string][]contract.Class{}
	for _, sp := range res.Summary.Specs {
		classes[sp.Name] = append(classes[sp.Name], sp.Class)
		if old := sp.Boot + "." + strings.Join(sp.IDs, "+"); old != sp.Name && len(sp.IDs) > 0 {
			classes[old] = append(classes[old], sp.Class)
		}
	}
	died := map[string]bool{}
	for boot, c := range bootClasses(res) {
		classes[boot+".kernel-log"] = []contract.Class{c.kernelLog}
		classes[boot+".verdict"] = []contract.Class{c.verdict}
		died[boot] = c.died
	}
	for _, c := range l.Cases {
		if c.ID == PanicCase {
			if boot := strings.TrimPrefix(c.Suite, Suite("")); died[boot] && c.Result == "fail" {
				agree++
			} else {
				differ = append(differ, fmt.Sprintf("%s/%s: the kernel panicked in LAVA, not in the verdict", c.Suite, c.Name))
			}
			continue
		}
		left, ok := classes[c.ID]
		i := slices.IndexFunc(left, func(cl contract.Class) bool { return fixup[string(cl)] == c.Result })
		switch {
		case !ok:
			differ = append(differ, fmt.Sprintf("%s/%s: %s in LAVA, not in the verdict", c.Suite, c.Name, c.Result))
		case i < 0:
			differ = append(differ, fmt.Sprintf("%s/%s: %s in LAVA, %v in the verdict", c.Suite, c.Name, c.Result, left))
		default:
			classes[c.ID] = slices.Delete(left, i, i+1)
			agree++
		}
	}
	return agree, differ
}

// bootClass is what a run made of one boot, as the guest's own cases say
// it: its kernel-log check, its verdict, and whether it died.
type bootClass struct {
	kernelLog, verdict contract.Class
	died               bool
}

// bootClasses are the run's boots as their guests' cases would have them.
func bootClasses(res *results.Result) map[string]bootClass {
	rank := map[contract.Class]int{contract.Pass: 0, contract.Unsupported: 0, contract.Unresolved: 1, contract.Fail: 2}
	out := map[string]bootClass{}
	for _, br := range res.Boots {
		if br.Boot != nil && !br.Control {
			out[br.Plan.Name] = bootClass{kernelLog: contract.Pass, verdict: contract.Pass, died: br.Boot.Panic != ""}
		}
	}
	worse := func(boot string, c contract.Class) {
		b := out[boot]
		if rank[c] > rank[b.verdict] {
			b.verdict = c
		}
		out[boot] = b
	}
	for _, k := range res.KernelLogs {
		b := out[k.Boot]
		b.kernelLog = k.Class()
		out[k.Boot] = b
		worse(k.Boot, k.Class())
	}
	for _, sp := range res.Summary.Specs {
		if _, made := out[sp.Boot]; made {
			worse(sp.Boot, sp.Class)
		}
	}
	for _, u := range res.Unjudged {
		if b, made := out[u.Boot]; made {
			b.verdict = contract.Unresolved
			out[u.Boot] = b
		}
	}
	return out
}
