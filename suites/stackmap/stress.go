// SPDX-License-Identifier: GPL-2.0-only

package stackmap

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/contract"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ftrace-stackmap/conformance/harness"
	fmtx "github.com/ftrace-stackmap/conformance/internal/stackmapfmt"
)

// stressFunctions are traced with a stack each: hot, on every arch, and
// called from enough places to fill the small map the stress boot asks for.
var stressFunctions = []string{"schedule", "vfs_*", "do_filp_open", "*alloc*", "*page*", "*free*"}

var _ = describe("the stackmap under load", Label(contract.LabelStress), Serial, func() {
	harness.ReqIt("SM-STAT-01 SM-STAT-02 SM-STAT-03 SM-ROBUST-01", "survives the function tracer with stacks on every CPU, with resets in between, its counters exact", func(ctx SpecContext) {
		tfs := harness.Root()
		quiet(tfs)
		harness.Require(tfs, harness.Tracer("function"), harness.Event("sched/sched_switch"))
		resetMap(tfs)
		traceStressFunctions(tfs)
		harness.Set(tfs, "current_tracer", "function")
		harness.Set(tfs, "options/func_stack_trace", "1")
		harness.Set(tfs, "options/stacktrace", "1")
		harness.Set(tfs, optionNode, "1")
		harness.Set(tfs, "events/sched/sched_switch/enable", "1")
		harness.Set(tfs, "events/sched/sched_process_exec/enable", "1")

		var resets, bothCPUs int
		var ids, drops, fullest int64 // over all rounds, read before each reset
		var wrong []string            // counters that broke a rule, by round
		problems, _ := harness.ReadUnderLoad(ctx, tfs, runtime.NumCPU()+1, true, allNodes, wellFormed, func(func() int) {
			deadline := time.Now().Add(stressDuration)
			for time.Now().Before(deadline) && ctx.Err() == nil {
				harness.Must(tfs.Write("tracing_on", "1"), "turning tracing on")
				time.Sleep(2 * time.Second)
				harness.Must(tfs.Write("tracing_on", "0"), "turning tracing off")
				st, err := statOf(tfs)
				// clause SM-STAT-01.3 SM-STAT-02.3 SM-STAT-03.2 SM-STAT-03.3
				wrong = append(wrong, roundProblems(tfs, resets, st, err)...)
				if cpusRecording(tfs) > 1 {
					bothCPUs++
				}
				ids, drops, fullest = ids+st.Successes, drops+st.Drops, max(fullest, st.Entries)
				resetAsSetup(tfs, "0") // a refused reset is SM-RESET-02's
				resets++
			}
		})
		// clause SM-ROBUST-01.1
		Expect(problems).To(BeEmpty(), "reading the nodes under load")
		AddReportEntry(contract.LabelStress, map[string]any{"resets": resets, "ids": ids, "drops": drops, "fullest": fullest,
			"rounds where more than one CPU recorded": bothCPUs})
		Expect(wrong).To(BeEmpty(), "counters read with tracing off after each round")
		if runtime.NumCPU() > 1 && bothCPUs == 0 {
			harness.Unresolved("in %d rounds no two CPUs recorded in the same round: the writers never ran side by side", resets)
		}
		Expect(resets).To(BeNumerically(">", 3))
		Expect(ids).To(BeNumerically(">", 0), "the map handed out no id under load: nothing was stressed")
		if drops == 0 {
			harness.Warn("the map never filled (at most %d entries): its full-pool fallback was not exercised", fullest)
		}
	}, SpecTimeout(5*time.Minute))
})

const stressDuration = 30 * time.Second

// traceStressFunctions sets the function tracer's filter to the
// stressFunctions this kernel has, and empties it when the spec ends (the
// suite's snapshot puts back any earlier filter after that).
func traceStressFunctions(tfs *harness.TraceFS) {
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
}

// roundProblems checks the counters of one stress round, read with tracing
// off: the rate's rounding, A <= B, and that the counters describe the
// blocks, however many CPUs wrote at once.
func roundProblems(tfs *harness.TraceFS, round int, st fmtx.Stat, err error) []string {
	if err != nil {
		return []string{fmt.Sprintf("round %d: %v", round, err)}
	}
	var out []string
	if err := st.CheckCapacity(); err != nil {
		out = append(out, fmt.Sprintf("round %d: %v", round, err))
	}
	blocks := mapBlocks(tfs)
	refs := int64(0)
	for _, b := range blocks {
		refs += int64(b.Ref)
	}
	if st.Entries != int64(len(blocks)) || refs != st.Successes {
		out = append(out, fmt.Sprintf("round %d: entries %d, %d blocks; successes %d, ref counts add up to %d", round, st.Entries, len(blocks), st.Successes, refs))
	}
	return out
}

// cpusRecording counts the CPUs whose buffer holds events.
func cpusRecording(tfs *harness.TraceFS) int {
	n := 0
	for cpu := 0; ; cpu++ {
		node := fmt.Sprintf("per_cpu/cpu%d/stats", cpu)
		if !tfs.Exists(node) {
			return n
		}
		text, err := tfs.Read(node)
		// The first line is "entries: N"; the function tracer empties the
		// buffer when tracing goes on, so N is this round's.
		if err == nil && strings.HasPrefix(text, "entries: ") && !strings.HasPrefix(text, "entries: 0\n") {
			n++
		}
	}
}
