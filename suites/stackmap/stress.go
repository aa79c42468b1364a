// SPDX-License-Identifier: GPL-2.0-only

package stackmap

import (
	"runtime"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/contract"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ftrace-stackmap/conformance/harness"
)

// stressFunctions are traced with a stack each: hot, on every arch, and
// called from enough places to fill the small map the stress boot asks for.
var stressFunctions = []string{"schedule", "vfs_*", "do_filp_open", "*alloc*", "*page*", "*free*"}

var _ = describe("the stackmap under load", Label(contract.LabelStress), Serial, func() {
	It("survives the function tracer with stacks on every CPU, with resets in between", func(ctx SpecContext) {
		tfs := harness.Root()
		quiet(tfs)
		harness.Require(tfs, harness.Tracer("function"), harness.Event("sched/sched_switch"))
		resetMap(tfs)
		// The suite's snapshot puts back any earlier filter at the end.
		DeferCleanup(tfs.Write, "set_ftrace_filter", "")
		traced := 0
		for _, f := range stressFunctions {
			if tfs.Append("set_ftrace_filter", f) == nil { // one this kernel lacks is skipped
				traced++
			}
		}
		if traced == 0 {
			harness.Unresolved("none of %v can be traced", stressFunctions)
		}
		harness.Set(tfs, "current_tracer", "function")
		harness.Set(tfs, "options/func_stack_trace", "1")
		harness.Set(tfs, "options/stacktrace", "1")
		harness.Set(tfs, optionNode, "1")
		harness.Set(tfs, "events/sched/sched_switch/enable", "1")
		harness.Set(tfs, "events/sched/sched_process_exec/enable", "1")

		var resets int
		var ids, drops, fullest int64 // over all rounds, read before each reset
		problems, _ := harness.ReadUnderLoad(ctx, tfs, runtime.NumCPU()+1, true, allNodes, wellFormed, func(func() int) {
			deadline := time.Now().Add(stressDuration)
			for time.Now().Before(deadline) && ctx.Err() == nil {
				harness.Must(tfs.Write("tracing_on", "1"), "turning tracing on")
				time.Sleep(2 * time.Second)
				harness.Must(tfs.Write("tracing_on", "0"), "turning tracing off")
				st := readStat(tfs)
				ids, drops, fullest = ids+st.Successes, drops+st.Drops, max(fullest, st.Entries)
				resetAsSetup(tfs, "0") // a refused reset is SM-RESET-02's
				resets++
			}
		})
		Expect(problems).To(BeEmpty(), "reading the nodes under load")
		AddReportEntry(contract.LabelStress, map[string]any{"resets": resets, "ids": ids, "drops": drops, "fullest": fullest})
		Expect(resets).To(BeNumerically(">", 3))
		Expect(ids).To(BeNumerically(">", 0), "the map handed out no id under load: nothing was stressed")
		if drops == 0 {
			harness.Warn("the map never filled (at most %d entries): its full-pool fallback was not exercised", fullest)
		}
	}, SpecTimeout(5*time.Minute))
})

const stressDuration = 30 * time.Second
