// SPDX-License-Identifier: GPL-2.0-only

// Package baseline checks the parts of ftrace every tracing kernel has. If
// these fail, the stackmap results of the same run mean little.
package baseline

import (
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/u-root/u-root/pkg/cmdline"

	"github.com/ftrace-stackmap/conformance/harness"
	"github.com/ftrace-stackmap/conformance/internal/contract"
)

var _ = Describe("ftrace baseline", Label(contract.LabelBaseline), func() {
	var tfs *harness.TraceFS
	BeforeEach(func() { tfs = harness.Root() })

	harness.ReqIt("BASE-TRACEFS-01", "finds tracefs with a readable trace file and the nop tracer", func() {
		Expect(tfs.Read("trace")).To(ContainSubstring("# tracer:"), harness.Clause("BASE-TRACEFS-01.1", "trace"))
		Expect(tfs.Read("available_tracers")).To(ContainSubstring("nop"), harness.Clause("BASE-TRACEFS-01.1", "available_tracers"))
	})

	harness.ReqIt("BASE-ONOFF-01", "turns tracing_on off and on again", func() {
		harness.Set(tfs, "tracing_on", "1")
		for _, v := range []string{"0", "1", "0", "1"} {
			Expect(tfs.Write("tracing_on", v)).To(Succeed(), harness.Clause("BASE-ONOFF-01.1", "writing %s to tracing_on", v))
			Expect(tfs.ReadTrimmed("tracing_on")).To(Equal(v), harness.Clause("BASE-ONOFF-01.1", "tracing_on after writing %s", v))
		}
	})

	harness.ReqIt("BASE-OPTS-01", "toggles a token through trace_options and options/ agrees", func() {
		harness.Set(tfs, "options/sym-offset", "1")
		for _, tc := range []struct{ token, option string }{{"nosym-offset", "0"}, {"sym-offset", "1"}} {
			Expect(tfs.Write("trace_options", tc.token)).To(Succeed(), harness.Clause("BASE-OPTS-01.1", "writing %s to trace_options", tc.token))
			Expect(tfs.ReadTrimmed("options/sym-offset")).To(Equal(tc.option), harness.Clause("BASE-OPTS-01.1", "options/sym-offset after writing %s to trace_options", tc.token))
			Expect(lines(tfs, "trace_options")).To(ContainElement(tc.token), harness.Clause("BASE-OPTS-01.1", "the trace_options listing after writing %s", tc.token))
		}
	})

	harness.ReqIt("BASE-INST-01", "makes an instance with its own trace files and removes it", func() {
		harness.Require(tfs, harness.Node("instances"))
		dir := tfs.Path("instances/smct-baseline")
		Expect(os.Mkdir(dir, 0o755)).To(Succeed(), harness.Clause("BASE-INST-01.1", "making an instance"))
		DeferCleanup(func() { os.Remove(dir) })
		Expect(tfs.Path("instances/smct-baseline/trace")).To(BeARegularFile(), harness.Clause("BASE-INST-01.1", "the instance's trace file"))
		Expect(tfs.Path("instances/smct-baseline/tracing_on")).To(BeARegularFile(), harness.Clause("BASE-INST-01.1", "the instance's tracing_on file"))
		Expect(os.Remove(dir)).To(Succeed(), harness.Clause("BASE-INST-01.1", "removing the instance"))
		Expect(tfs.Exists("instances/smct-baseline")).To(BeFalse(), harness.Clause("BASE-INST-01.1", "the instance is still there after its rmdir"))
	})

	harness.ReqIt("BASE-EVENT-01", "records each sched_process_exec of a known workload in trace", func() {
		harness.Require(tfs, harness.Event("sched/sched_process_exec"))
		harness.Set(tfs, "tracing_on", "0")
		harness.Must(tfs.Write("trace", ""), "clearing trace")
		harness.Set(tfs, "events/sched/sched_process_exec/enable", "1")
		harness.Must(tfs.Write("tracing_on", "1"), "turning tracing on")
		const runs = 3
		harness.Must(harness.RunWorkload(runs), "running the workload")
		harness.Must(tfs.Write("tracing_on", "0"), "turning tracing off")
		text, err := tfs.Read("trace")
		harness.Must(err, "reading trace")
		Expect(strings.Count(text, "filename="+harness.WorkloadFilename()+" ")).To(Equal(runs),
			harness.Clause("BASE-EVENT-01.1", "sched_process_exec lines for the workload in:\n%s", text))
	})

	harness.ReqIt("BASE-BOOTOPT-01", "reflects trace_options= from the kernel command line at boot", func() {
		value, ok := cmdline.Flag("trace_options")
		if !ok || value == "" {
			harness.Unsupported("the kernel was booted without trace_options=")
		}
		checked := 0
		for _, token := range strings.Split(value, ",") {
			name, want := strings.TrimPrefix(token, "no"), "0"
			if name == token {
				want = "1"
			}
			got, exists := harness.AtStart().Option(name)
			if !exists {
				By("skipping " + token + ": no options/" + name + " on this kernel")
				continue
			}
			Expect(got).To(Equal(want), harness.Clause("BASE-BOOTOPT-01.1", "options/%s at boot with trace_options=%s", name, value))
			checked++
		}
		if checked == 0 {
			harness.Unsupported("no token of trace_options=%s has an options/ file", value)
		}
	})
})

func lines(tfs *harness.TraceFS, node string) []string {
	text, err := tfs.Read(node)
	harness.Must(err, "reading %s", node)
	return strings.Split(strings.TrimSpace(text), "\n")
}
