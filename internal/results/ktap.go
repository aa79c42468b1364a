// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/dumpcheck"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// maxTail caps the lines of a failed selftest's log in the KTAP.
const maxTail = 20

// KTAP is the run as KTAP (report.Run.KTAP), with the tests of a QEMU
// run's own after the specs': a boot whose kernel logged problems fails a
// test of its own (UNRESOLVED when its log did not arrive), the tree's decoder is a test, and the tree's ftracetest
// a subtest.
func KTAP(res *Result) string {
	return res.run().KTAP(func(k *report.KTAP) {
		for _, l := range res.KernelLogs {
			if l.Missing {
				k.Class(KernelLogTest(l.Boot), contract.Unresolved, false, KernelLogMissing)
				continue
			}
			for _, line := range l.Lines {
				k.Diag("KERNEL: ", line)
			}
			k.Result(false, KernelLogTest(l.Boot), "")
		}
		if d := res.Decoder; d != nil {
			k.Diag("", "the tree's "+dumpcheck.Tool+" reads the stack_map_bin the kernel wrote as the suite does")
			for _, p := range d.Problems {
				k.Diag("", p)
			}
			k.Result(d.Agrees(), DecoderTest, "")
		}
		if res.Request.FtraceDir != "" {
			ftraceSubtest(k, res)
		}
	})
}

// ftraceSubtest writes the tree's ftracetest verdicts as a subtest, one
// test per .tc file in ftracetest's own terms. It passes when every case
// passed, was an expected failure or was skipped with a reason, and there
// are verdicts for all of them.
func ftraceSubtest(k *report.KTAP, res *Result) {
	var sub report.KTAP
	for _, c := range res.Selftests {
		switch {
		case c.Result == "PASS":
			sub.Result(true, c.File, "")
		case c.Result == "XFAIL":
			sub.Result(true, c.File, "XFAIL")
		case c.Failed():
			sub.Diag("", strings.Join(c.Tail(maxTail), "\n"))
			if c.Hint != "" {
				sub.Diag("why: ", c.Hint)
			}
			dir := "" // a FAIL is a plain "not ok"; KTAP's word for undecided is ERROR
			if c.Result != "FAIL" {
				dir = "ERROR " + c.Result
			}
			sub.Result(false, c.File, dir)
		default:
			sub.Result(true, c.File, "SKIP "+c.Result)
		}
	}
	k.Nest("ftracetest", &sub)
	if res.SelftestsNote != "" {
		k.Diag("ftracetest: ", res.SelftestsNote)
	}
	k.Result(sub.Passed() && res.SelftestsNote == "", "ftracetest", "")
}
