// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"fmt"
	"strings"
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
	// Seed orders the specs (Ginkgo's -ginkgo.seed): chosen once per run
	// when not given, so that a run can be made again in the same order.
	Seed int64
	// Require is REQUIRE=: "stackmap" fails the run on UNSUPPORTED stackmap
	// specs, "none" does not, "" decides by the kernel (see Result.Required).
	Require string
}

// Values of Request.Require.
const (
	RequireAuto     = ""
	RequireStackmap = "stackmap"
	RequireNone     = "none"
)

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

	Started time.Time // on the host: the guest's clock may read 1970
	Suite   string    // the suite's repository and commit (git describe)
	Plans   []string  // the boots the run was to make, in order
	// Required says whether UNSUPPORTED stackmap specs fail this run, and
	// RequiredWhy who decided it (REQUIRE=, or the kernel's origin).
	Required    bool
	RequiredWhy string
	// NoVerdict is why the run gave no trustworthy verdict, "" when it did.
	NoVerdict string
}

// KernelLog is what one boot's kernel log showed wrong: a failed test of
// its own in the KTAP and the JUnit, and in the closing line, so that no
// report reads as a pass of a run that failed on it.
type KernelLog struct {
	Boot  string
	Lines []string
}

// KernelLogs groups the kernel's problems by boot, in the order seen.
func (r *Result) KernelLogs() []KernelLog {
	var out []KernelLog
	for _, p := range r.KernelProblems {
		boot, line := "default", p
		if rest, ok := strings.CutPrefix(p, "boot "); ok {
			if b, l, ok := strings.Cut(rest, ": "); ok {
				boot, line = b, l
			}
		}
		if len(out) == 0 || out[len(out)-1].Boot != boot {
			out = append(out, KernelLog{Boot: boot})
		}
		out[len(out)-1].Lines = append(out[len(out)-1].Lines, line)
	}
	return out
}

// KernelLogTest names a boot's kernel-log test: beside its specs'.
func KernelLogTest(boot string) string { return boot + ".kernel-log" }

// Totals are the closing line's numbers: the specs', and a failure for
// each boot whose kernel logged problems.
func (r *Result) Totals() (passed, failed, skipped int) {
	p, f, k := r.Summary.Totals()
	if d := r.Decoder; d != nil && d.Agrees() {
		p++
	} else if d != nil {
		f++
	}
	return p, f + len(r.KernelLogs()), k
}

// DecoderTest names the test of the tree's own decoder, which reads the
// export the default boot captured.
const DecoderTest = "default.decoder"

// ClosingLine is the last line of the run.
func (r *Result) ClosingLine() string {
	p, f, k := r.Totals()
	return fmt.Sprintf("%d passed, %d failed, %d skipped", p, f, k)
}

// ExitCode is the run's exit status: the summary's, or 1 when a kernel log
// shows a problem and nothing worse happened.
func (r *Result) ExitCode() int {
	if r.NoVerdict != "" {
		return 2
	}
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
	if r.NoVerdict != "" {
		return "NO VERDICT: " + r.NoVerdict
	}
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
		n, why := s.required()
		switch other := s.Count(contract.Fail) - n; {
		case n == 0:
			return "FAIL"
		case other == 0:
			return fmt.Sprintf("FAIL: %d stackmap specs UNSUPPORTED, and this run requires stackmap (%s): %s", n, r.RequiredWhy, why)
		default:
			return fmt.Sprintf("FAIL: %d specs failed, and %d stackmap specs UNSUPPORTED while this run requires stackmap (%s): %s", other, n, r.RequiredWhy, why)
		}
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

// Exit status conventions (-exit-codes=).
const (
	ExitCodesSmct      = "smct"      // 0 no spec failed, 1 a spec failed, 2 no verdict
	ExitCodesKselftest = "kselftest" // kselftest.h's, for kselftest-style runners
)

// KselftestNoVerdict is the status of a run without a verdict under
// -exit-codes=kselftest. kselftest.h has no code for it and gives 2 to
// XFAIL, 3 to XPASS and 4 to SKIP; its runner reports any status other
// than 0 and 4 as "not ok", so 5 reads as a failure, not as one of those.
const KselftestNoVerdict = 5

// Kselftest turns an smct status (0, 1, 2) into kselftest's: 0 passed
// (KSFT_PASS), 1 failed (KSFT_FAIL), 4 when every spec was skipped
// (KSFT_SKIP), KselftestNoVerdict without a verdict.
func Kselftest(code int, s Summary) int {
	switch code {
	case 0:
		if p, f, k := s.Totals(); p == 0 && f == 0 && k > 0 {
			return 4
		}
		return 0
	case 1:
		return 1
	}
	return KselftestNoVerdict
}

// ExitCodeAs is the run's exit status in a convention: "" or "smct", or
// "kselftest".
func (r *Result) ExitCodeAs(convention string) int {
	if convention == ExitCodesKselftest {
		return Kselftest(r.ExitCode(), r.Summary)
	}
	return r.ExitCode()
}
