// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"fmt"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/dumpcheck"
	"github.com/ftrace-stackmap/conformance/internal/ftracetest"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// Request is what the user asked of a run: everything that makes it again.
type Request struct {
	Arch     string
	Kernel   string // a kernel image path; overrides Image
	Tree     string // a kernel source tree, built here; overrides Image
	Image    string // an images.lock entry; "" for the lock's default
	Profile  string // v4 or v3
	Labels   string // Ginkgo label filter
	BootArgs []string
	Timeout  time.Duration
	// FtraceDir is a kernel tree's tools/testing/selftests/ftrace: its
	// ftracetest runs the .tc files whose path contains FtraceMatch in the
	// default boot, after the suite. None when empty.
	FtraceDir, FtraceMatch string
}

// Result is what one run produced.
type Result struct {
	Request   Request // what was asked
	Dir       string  // results/<run>
	Kernel    string  // the image booted
	Entry     string  // the images.lock entry it came from, "" for KERNEL=
	Source    string  // where it came from: the lock entry and package, or KERNEL=
	KernelSHA string
	// KernelCached says a kernel built here came from the cache.
	KernelCached bool
	KernelTime   time.Duration // finding, fetching or building the kernel
	Machine      string        // QEMU's version and machine settings
	Lanes        int           // boots made at a time
	Summary      Summary
	Boots        []BootResult
	// KernelProblems are warnings, oopses and lockups the guests' kernel
	// logs show: a kernel that misbehaves fails the run.
	KernelProblems []string
	// Selftests are the verdicts of the tree's own ftracetest, when asked
	// for; SelftestsNote says why there are none, or what went wrong.
	Selftests     []ftracetest.Case
	SelftestsNote string
	// Decoder is the tree's own stack_map_bin decoder held to the
	// kernel's export (TREE= runs whose tree has one); DecoderNote says
	// why it was not, when it has one.
	Decoder     *dumpcheck.Check
	DecoderNote string
}

// ExitCode is the run's exit status: the summary's, or 1 when a kernel log
// shows a problem and nothing worse happened.
func (r *Result) ExitCode() int {
	code := r.Summary.ExitCode()
	if code == 0 && (len(r.KernelProblems) > 0 || r.Decoder != nil && !r.Decoder.Agrees()) {
		return 1
	}
	return code
}

// Verdict is the run's verdict on one line, as verdict.txt keeps it: "ok",
// "FAIL" or "NO VERDICT: <reason>", matching ExitCode's 0, 1 and 2.
func (r *Result) Verdict() string {
	s := r.Summary
	switch r.ExitCode() {
	case 0:
		return "ok"
	case 1:
		if s.ExitCode() == 0 && len(r.KernelProblems) == 0 {
			return "FAIL: the tree's " + dumpcheck.Tool + " disagrees with the kernel's export"
		}
		if s.ExitCode() == 0 {
			return "FAIL: the kernel logged problems"
		}
		return "FAIL"
	}
	switch {
	case len(s.SuiteProblems) > 0:
		return "NO VERDICT: suite: " + s.SuiteProblems[0]
	case len(s.Specs) == 0:
		return "NO VERDICT: no spec ran"
	}
	return fmt.Sprintf("NO VERDICT: %d specs UNRESOLVED", s.Count(contract.Unresolved))
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
