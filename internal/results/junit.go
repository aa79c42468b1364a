// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"strings"

	"github.com/onsi/ginkgo/v2/reporters"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// JUnitFile is the run's JUnit XML, for CI systems' test views.
const JUnitFile = "junit.xml"

// JUnit is the run as JUnit XML (report.Run.JUnit), with the cases of a
// QEMU run's own after the specs': a boot whose kernel logged problems
// fails a testcase "kernel-log" of its class (an error when its log did
// not arrive), and the tree's decoder is a
// testcase "decoder" of the default boot's.
func JUnit(res *Result) ([]byte, error) {
	arch := res.Request.Arch.Name
	var more []report.JUnitCase
	for _, l := range res.KernelLogs {
		c := report.JUnitCase{Name: "kernel-log", Classname: arch + "." + l.Boot, Time: "0"}
		if l.Missing {
			c.Error = &reporters.JUnitError{Message: KernelLogMissing, Type: string(contract.Unresolved), Description: KernelLogMissing}
		} else {
			c.Failure = &reporters.JUnitFailure{Message: report.Plain(l.Lines[0]), Type: "KERNEL", Description: report.Plain(strings.Join(l.Lines, "\n"))}
		}
		more = append(more, c)
	}
	if d := res.Decoder; d != nil {
		c := report.JUnitCase{Name: "decoder", Classname: arch + ".default", Time: "0"}
		if !d.Agrees() {
			c.Failure = &reporters.JUnitFailure{Message: report.Plain(d.Problems[0]), Type: "FAIL", Description: report.Plain(strings.Join(d.Problems, "\n"))}
		}
		more = append(more, c)
	}
	return res.run().JUnit(more...)
}
