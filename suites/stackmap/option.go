// SPDX-License-Identifier: GPL-2.0-only

package stackmap

import (
	"fmt"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ftrace-stackmap/conformance/harness"
	fmtx "github.com/ftrace-stackmap/conformance/internal/stackmapfmt"
)

var _ = describe("the stackmap option", func() {
	harness.ReqIt("SM-OPT-01", "reads 0 or 1, round-trips 1 and 0, and trace_options agrees", func() {
		tfs := harness.Root()
		quiet(tfs)
		Expect(tfs.ReadTrimmed(optionNode)).To(BeElementOf("0", "1"), harness.Clause("SM-OPT-01.1", "options/stackmap"))
		harness.Set(tfs, optionNode, "0")
		for _, tc := range []struct{ value, token string }{{"1", "stackmap"}, {"0", "nostackmap"}} {
			Expect(tfs.Write(optionNode, tc.value)).To(Succeed(), harness.Clause("SM-OPT-01.1", "writing %s to options/stackmap", tc.value))
			Expect(tfs.ReadTrimmed(optionNode)).To(Equal(tc.value), harness.Clause("SM-OPT-01.1", "options/stackmap after writing %s", tc.value))
			opts, err := tfs.Read("trace_options")
			harness.Must(err, "reading trace_options")
			Expect(harness.HasLine(opts, tc.token)).To(BeTrue(), harness.Clause("SM-OPT-01.2", "trace_options has no line %q after writing %s to options/stackmap", tc.token, tc.value))
		}
	})

	harness.ReqIt("SM-OPT-02", "lists stackmap right after stacktrace in trace_options", func() {
		opts, err := harness.Root().Read("trace_options")
		harness.Must(err, "reading trace_options")
		names := []string{}
		for _, l := range harness.Lines(opts) {
			names = append(names, strings.TrimPrefix(strings.TrimSpace(l), "no"))
		}
		i := slices.Index(names, "stacktrace")
		if i < 0 || i+1 >= len(names) || names[i+1] != "stackmap" {
			harness.Warn(harness.Clause("SM-OPT-02.1", "stackmap does not follow stacktrace in trace_options:\n%s", opts))
		}
	})

	harness.ReqIt("SM-OPT-03", "puts <stack_id N> in trace with a stack source on, and no stacks without one", harness.Case("events"), func() {
		tfs := harness.Root()
		armRecording(tfs)
		traceWorkload(tfs, workloadRuns)
		trace, shape := readTraceOf(tfs, fmtx.OwnerFullStack)
		harness.FailOn(shape, harness.Clause("SM-OPT-03.3", ""))
		stacks := fmtx.ParseTrace(trace)
		Expect(stacks.IDs).NotTo(BeEmpty(), harness.Clause("SM-OPT-03.1", "no line ends in <stack_id N> after %d stack-traced sched_process_exec events:\n%s", workloadRuns, trace))

		By("running the workload again with stacktrace off")
		resetMap(tfs)
		harness.Must(tfs.Write("options/stacktrace", "0"), "turning stacktrace off")
		traceWorkload(tfs, workloadRuns)
		trace, shape = readTraceOf(tfs, fmtx.OwnerFullStack)
		harness.FailOn(shape, harness.Clause("SM-OPT-03.3", ""))
		stacks = fmtx.ParseTrace(trace)
		// No stacks prove nothing without their events.
		Expect(strings.Count(trace, "sched_process_exec:")).To(Equal(workloadRuns), harness.Clause("SM-OPT-03.2", "the events themselves are missing:\n%s", trace))
		Expect(stacks.IDs).To(BeEmpty(), harness.Clause("SM-OPT-03.2", "<stack_id> lines with no stack source on:\n%s", trace))
		Expect(stacks.FullStacks).To(BeZero(), harness.Clause("SM-OPT-03.2", "<stack trace> blocks with no stack source on:\n%s", trace))
	})

	harness.ReqIt("SM-OPT-03", "puts <stack_id N> in trace for the stacks of a stacktrace trigger", harness.Case("trigger"), func() {
		tfs := harness.Root()
		quiet(tfs)
		trigger := "events/" + execEvent + "/trigger"
		harness.Require(tfs, harness.Node(trigger))
		harness.Set(tfs, optionNode, "1")
		resetMap(tfs)
		harness.Set(tfs, "options/stacktrace", "0")
		// Enabled first: with a trigger on it, enable reads "0*", no value to write back.
		harness.Set(tfs, execEnable, "1")
		harness.Must(tfs.Append(trigger, "stacktrace"), "setting a stacktrace trigger on %s", execEvent)
		DeferCleanup(tfs.Append, trigger, "!stacktrace")
		useTwin(harness.ArmTwin(tfs, harness.TwinSource{Events: []string{execEvent}, Trigger: true}))
		traceWorkload(tfs, workloadRuns)
		trace, shape := readTraceOf(tfs, fmtx.OwnerFullStack)
		harness.FailOn(shape, harness.Clause("SM-OPT-03.3", ""))
		Expect(fmtx.ParseTrace(trace).IDs).NotTo(BeEmpty(), harness.Clause("SM-OPT-03.1",
			"a stacktrace trigger on %s, stackmap on: no line ends in <stack_id N> after %d runs:\n%s", execEvent, workloadRuns, trace))
	})

	harness.ReqIt("SM-OPT-04", "keeps the map when the option is turned off and the tracer set back to nop", harness.Case("switch"), func() {
		tfs := harness.Root()
		armRecording(tfs)
		underFunctionTracer(tfs)
		traceWorkload(tfs, workloadRuns)
		requireStackIDs(tfs, workloadRuns)
		blocks := readBlocks(tfs)
		entries := readStat(tfs).Entries
		ids := fmtx.ParseTrace(readTrace(tfs)).IDs
		for _, id := range ids {
			if _, ok := fmtx.IDs(blocks)[id]; !ok {
				harness.Prerequisite("SM-TRACE-01", fmt.Errorf("trace has <stack_id %d>, stack_map has no block %d, before the option went off", id, id))
			}
		}

		By("turning stackmap off and switching the tracer to nop")
		harness.Must(tfs.Write(optionNode, "0"), "turning stackmap off")
		harness.Must(tfs.Write("current_tracer", "nop"), "setting the nop tracer")
		Expect(readBlocks(tfs)).To(Equal(blocks), harness.Clause("SM-OPT-04.1", "stack_map changed when the option went off"))
		Expect(readStat(tfs).Entries).To(Equal(entries), harness.Clause("SM-OPT-04.1", "stack_map_stat entries changed when the option went off"))
		after := fmtx.IDs(readBlocks(tfs))
		for _, id := range ids {
			Expect(after).To(HaveKey(id), harness.Clause("SM-OPT-04.1", "<stack_id %d> in trace no longer resolves once the option is off", id))
		}
	})
})

// underFunctionTracer records the next workload under the function tracer
// (one cheap function filtered in), so that setting nop afterwards is a
// switch of tracer: a kernel that empties the map on any switch shows it.
// Without the function tracer the spec goes on under nop and says it was
// judged only partly.
func underFunctionTracer(tfs *harness.TraceFS) {
	if err := harness.Probe(tfs, harness.Tracer("function"), harness.Node("set_ftrace_filter")); err != nil {
		harness.Note("judged only partly: no switch of tracer (%v)", err)
		return
	}
	DeferCleanup(tfs.Write, "set_ftrace_filter", "")
	if err := tfs.Write("set_ftrace_filter", "vfs_read"); err != nil {
		harness.Note("judged only partly: no switch of tracer (filtering the function tracer to vfs_read: %v)", err)
		return
	}
	harness.Set(tfs, "current_tracer", "function")
}
