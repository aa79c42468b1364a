// SPDX-License-Identifier: GPL-2.0-only

// Package results holds what a QEMU run produced and renders it for the
// people and programs that read it: the summary qemu-test prints, KTAP,
// JUnit, the evidence for a reply on the mailing list, the reproduce line
// and the one-line verdict, each in a file of its own. What the specs say
// is rendered by package report, which live mode links without QEMU.
package results

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/claims"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/dumpcheck"
	"github.com/ftrace-stackmap/conformance/internal/ftracetest"
	"github.com/ftrace-stackmap/conformance/internal/kernellog"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kchoice"
	"github.com/ftrace-stackmap/conformance/internal/kernels/korigin"
	"github.com/ftrace-stackmap/conformance/internal/labels"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
	"github.com/ftrace-stackmap/conformance/internal/textlines"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// Request is what the user asked of a run: everything that makes it again.
type Request struct {
	Arch arch.Arch // marshalled by its name
	// Choice is the kernel asked for: KERNEL=, TREE= or IMAGE=, and the
	// lane (SANITIZE=1: built with the tree's debug.config, or a KERNEL=
	// whose config has KASAN on).
	kchoice.Choice
	Profile  contract.Profile
	Labels   labels.Filter
	BootArgs []string
	Timeout  time.Duration
	// FtraceDir is a kernel tree's tools/testing/selftests/ftrace: its
	// ftracetest runs the .tc files whose path contains FtraceMatch in the
	// default boot, after the suite. None when empty.
	FtraceDir, FtraceMatch string
	// Seed orders the specs (Ginkgo's -ginkgo.seed): chosen once per run
	// when not given, so that a run can be made again in the same order.
	Seed int64
	// Claims adds the claims plan's boots (CLAIMS=1): measurements of
	// what the series claims, which never change the verdict.
	Claims bool
	// Require is REQUIRE=: whether UNSUPPORTED stackmap specs fail the
	// run; RequireAuto decides by the kernel (see Result.Required).
	Require report.Require
	// Torture is how long the torture boot's actors run (make torture
	// DURATION=); its boot's limit grows by as much.
	Torture time.Duration
}

// Derived is what a run decided from its request and its kernel.
type Derived struct {
	// Timeout is each boot's limit: the request's, grown for a debug
	// kernel or a torture boot (TimeoutWhy says so when it grew).
	Timeout    time.Duration
	TimeoutWhy string `json:",omitempty"`
	// BootArgs are words the run adds after the user's on every boot's
	// command line (the reference kernel's v3 profile).
	BootArgs []string `json:",omitempty"`
	// Debug are the debug options the kernel's config sets: its boots
	// keep RCU's normal grace periods and are given longer.
	Debug []string `json:",omitempty"`
	// Emulated says the boots run under TCG.
	Emulated bool
}

// DefaultFtraceMatch picks the tree's selftests run by FTRACETEST=: those
// of the feature.
const DefaultFtraceMatch = "stackmap"

// Result is what one run produced.
type Result struct {
	Request   Request // what was asked
	Dir       string  // results/<run>
	Kernel    string  // the image booted
	Entry     string  // the images.lock entry it came from, "" for KERNEL=
	Source    string  // where it came from: the lock entry and package, or KERNEL=
	KernelSHA string
	// Origin is what the kernel was made from, as far as the run learnt
	// it: the source and build that kcidb.json describes.
	Origin korigin.Origin
	// Sanitized says how the kernel is sanitized, in the reports' words,
	// when the run asked for it (SANITIZE=1): "sanitized (debug.config)"
	// for a kernel built here. Source ends with it too.
	Sanitized string
	// Derived is what the run decided from Request and the kernel; Request
	// stays what was asked.
	Derived Derived
	// KernelCached says a kernel built here came from the cache.
	KernelCached bool
	KernelTime   time.Duration // finding, fetching or building the kernel
	Machine      string        // QEMU's version and machine settings
	Lanes        int           // boots made at a time
	Summary      report.Summary
	Boots        []BootResult
	// KernelLogs are the kernel-log checks that did not pass, by boot in
	// plan order: a kernel that warned, oopsed or stalled fails the run,
	// and a boot whose kernel log never arrived leaves its check
	// UNRESOLVED.
	KernelLogs []KernelLog
	// Unjudged are the boots whose specs could not be judged, and why,
	// in plan order: what they brought back was missing or damaged, or
	// their kernel died. Their specs are UNRESOLVED; every other boot's
	// verdicts stand, and a failure among them fails the run.
	Unjudged []BootNote
	// Lost are the frames of the boots that did not arrive whole, each
	// named with what became of it: of a judged boot, frames no verdict
	// rests on (a capture, the selftests' logs).
	Lost []BootNote
	// Selftests are the verdicts of the tree's own ftracetest, when asked
	// for; SelftestsNote says why there are none, or what went wrong.
	Selftests     []ftracetest.Case
	SelftestsNote string
	// Decoder is the tree's own stack_map_bin decoder held to the
	// kernel's export (TREE= runs whose tree has one); DecoderNote says
	// why it was not, when it has one.
	Decoder     *dumpcheck.Check
	DecoderNote string

	Started time.Time // on the host: the guest's clock may read 1970
	Suite   string    // the suite's repository and commit (git describe)
	Plans   []string  // the boots the run was to make, in order
	// Required says whether UNSUPPORTED stackmap specs fail this run, and
	// RequiredWhy who decided it (REQUIRE=, or the kernel's origin).
	Required    bool
	RequiredWhy string
	// Claims is what the claims plan measured, when the run made it.
	Claims *claims.Report
	// NoVerdict is why the run gave no trustworthy verdict, "" when it did.
	NoVerdict string
}

// KernelLog is one boot's kernel-log check that did not pass: a test of
// its own in the KTAP and the JUnit, and in the closing line, so that no
// report reads as a pass of a run that failed on it. It failed with the
// lines that report trouble, or is UNRESOLVED when the log never came.
type KernelLog struct {
	Boot  string
	Lines []string
	// Reports are the reports the lines tell of, one by one, each with
	// the spec it is placed in.
	Reports []kernellog.Report
	// Missing says the guest's kernel log did not arrive: nothing says
	// the kernel logged no warning, so the boot is not clean.
	Missing bool
}

// BootNote is something said of one boot of the run, or of the run as a
// whole when Boot is "".
type BootNote struct {
	Boot, Note string
	// Died says how the boot's kernel died before its suite reported (a
	// panic, a hang, no init), "" when it did not.
	Died string
}

// Unjudged says, on one line, what of the run could not be judged.
func (n BootNote) Unjudged() string {
	if n.Boot == "" {
		return textlines.First(n.Note)
	}
	return "boot " + n.Boot + " cannot be judged: " + textlines.First(n.Note)
}

// KernelLogMissing is why a boot's kernel-log test is UNRESOLVED.
const KernelLogMissing = "no kernel log arrived (the console has no dmesg.txt frame): whether the kernel warned, oopsed or stalled is unknown"

// Class is the check's verdict: FAIL, or UNRESOLVED when the log is missing.
func (k KernelLog) Class() contract.Class {
	if k.Missing {
		return contract.Unresolved
	}
	return contract.Fail
}

// kernelLogs counts the boots whose kernel-log check is in class c.
func (r *Result) kernelLogs(c contract.Class) int {
	n := 0
	for _, k := range r.KernelLogs {
		if k.Class() == c {
			n++
		}
	}
	return n
}

// KernelProblems are the kernel's problems as the reports list them, each
// after its boot: "boot bits-12: WARNING: ...". A log that did not arrive
// shows none: MissingKernelLogs names its boot.
func (r *Result) KernelProblems() []string {
	var out []string
	for _, k := range r.KernelLogs {
		for _, l := range k.Lines {
			out = append(out, "boot "+k.Boot+": "+l)
		}
	}
	return out
}

// KernelReports are the reports in the boots' kernel logs, boot by boot.
func (r *Result) KernelReports() []kernellog.Report {
	var out []kernellog.Report
	for _, k := range r.KernelLogs {
		out = append(out, k.Reports...)
	}
	return out
}

// MissingKernelLogs are the boots whose kernel log did not arrive.
func (r *Result) MissingKernelLogs() []string {
	var out []string
	for _, k := range r.KernelLogs {
		if k.Missing {
			out = append(out, k.Boot)
		}
	}
	return out
}

// KernelLogTest names a boot's kernel-log test: beside its specs'.
func KernelLogTest(boot string) string { return boot + ".kernel-log" }

// Totals are the closing line's numbers: the specs', and a failure for
// each boot whose kernel-log check did not pass (UNRESOLVED counts as
// failed, as a spec's does).
func (r *Result) Totals() (passed, failed, skipped int) {
	p, f, k := r.Summary.Totals()
	if d := r.Decoder; d != nil && d.Agrees() {
		p++
	} else if d != nil {
		f++
	}
	return p, f + len(r.KernelLogs), k
}

// DecoderTest names the test of the tree's own decoder, which reads the
// export the default boot captured.
const DecoderTest = contract.DefaultBoot + ".decoder"

// ClosingLine is the last line of the run.
func (r *Result) ClosingLine() string { return report.Closing(r.Totals()) }

// ExitCode is the run's exit status: the summary's, or, when that is 0,
// 1 when a kernel log shows a problem or the decoder disagrees, else 2
// when a kernel log did not arrive.
func (r *Result) ExitCode() int {
	if r.NoVerdict != "" {
		return 2
	}
	code := r.Summary.ExitCode()
	switch {
	case code != 0:
		return code
	case r.kernelLogs(contract.Fail) > 0 || r.Decoder != nil && !r.Decoder.Agrees():
		return 1
	case r.kernelLogs(contract.Unresolved) > 0 || len(r.Unjudged) > 0:
		return 2
	}
	return 0
}

// Verdict is the run's verdict on one line, as verdict.txt keeps it: "ok",
// "FAIL" or "NO VERDICT: <reason>", matching ExitCode's 0, 1 and 2.
func (r *Result) Verdict() string {
	switch {
	case r.NoVerdict != "":
		return "NO VERDICT: " + r.NoVerdict
	case r.ExitCode() == 2 && len(r.Unjudged) > 0 && len(r.Summary.SuiteProblems) == 0:
		return "NO VERDICT: " + r.Unjudged[0].Unjudged()
	case r.Summary.ExitCode() == 1 && len(r.Unjudged) > 0:
		return r.Summary.Verdict(r.RequiredWhy) + unjudgedToo(r.Unjudged)
	case r.ExitCode() == 0 || r.Summary.ExitCode() != 0:
		return r.Summary.Verdict(r.RequiredWhy)
	case r.ExitCode() == 2:
		return "NO VERDICT: " + KernelLogTest(r.MissingKernelLogs()[0]) + " UNRESOLVED: " + KernelLogMissing
	case r.kernelLogs(contract.Fail) == 0:
		return "FAIL: the tree's " + dumpcheck.Tool + " disagrees with the kernel's export"
	}
	return "FAIL: the kernel logged problems"
}

// unjudgedToo is what a failing run's verdict adds when some of its boots
// could not be judged: their specs may have failed too.
func unjudgedToo(boots []BootNote) string {
	names := make([]string, len(boots))
	for i, b := range boots {
		names[i] = cmp.Or(b.Boot, "the run: "+textlines.First(b.Note))
	}
	return fmt.Sprintf(" (and could not judge %s)", strings.Join(names, ", "))
}

// NoSpecSelected is why a boot whose specs the label filter left out was
// not made: the reports do not count it as a boot not made.
const NoSpecSelected = "no spec selected"

// BootResult is how one boot of the run went.
type BootResult struct {
	Plan    contract.BootPlan
	Boot    *qemu.Result // nil when the boot was not needed
	Skipped string       // why it was not made (NoSpecSelected, or a reason)
	// Control marks a boot made only to show that the kernel comes up
	// without the parameters of a boot that died; its specs are not reported.
	Control bool
}

// ExitCodeAs is the run's exit status in a convention.
func (r *Result) ExitCodeAs(convention report.ExitCodes) int {
	return convention.Status(r.ExitCode(), r.Summary)
}

// run is what the reports say of the run besides its specs.
func (r *Result) run() report.Run {
	return report.Run{Name: suiteName(r), Arch: r.Request.Arch.Name, Image: r.Source, SHA256: r.KernelSHA, Machine: r.Machine,
		Profile: r.Request.Profile, Seed: r.Request.Seed, Suite: r.Suite, Require: requireLine(r), Verdict: r.Verdict(),
		Started: r.Started, NoVerdict: r.NoVerdict, Plans: r.Plans, Summary: r.Summary}
}

// suiteName names what was booted: the lock entry, KERNEL=path or TREE=dir.
func suiteName(res *Result) string {
	switch {
	case res.Entry != "":
		return res.Entry
	case res.Request.Kernel != "":
		return "KERNEL=" + res.Request.Kernel
	case res.Request.Tree != "":
		return "TREE=" + res.Request.Tree
	case res.Request.Image != "":
		return res.Request.Image
	}
	return "lock-default" // the run stopped before reading images.lock
}

// requireLine says whether the run requires the feature, and who decided.
func requireLine(res *Result) string {
	switch {
	case res.RequiredWhy == "":
		return ""
	case res.Required:
		return "stackmap (" + res.RequiredWhy + ")"
	}
	return "nothing (" + res.RequiredWhy + ")"
}
