// SPDX-License-Identifier: GPL-2.0-only

package stackmap

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ftrace-stackmap/conformance/harness"
	fmtx "github.com/ftrace-stackmap/conformance/internal/stackmapfmt"
)

var _ = describe("the text export and the statistics", func() {
	harness.ReqIt("SM-TRACE-01", "names in every <stack_id N> of trace a block of stack_map, with N below table_size", func() {
		// clause SM-TRACE-01.1 SM-TRACE-01.2 SM-TRACE-01.3
		tfs := harness.Root()
		armRecording(tfs)
		traceWorkload(tfs, workloadRuns)
		ids := fmtx.ParseTrace(readTraceOf(tfs, "SM-TRACE-01")).IDs
		if len(ids) == 0 {
			harness.Prerequisite("SM-OPT-03", fmt.Errorf("no line of trace ends in <stack_id N> after %d stack-traced sched_process_exec events with stackmap on", workloadRuns))
		}
		blocks := fmtx.IDs(readBlocks(tfs))
		st := readStat(tfs)
		harness.Prerequisite("SM-STAT-02", st.CheckCapacity())
		for _, id := range ids {
			Expect(blocks).To(HaveKey(id), "trace has <stack_id %d>, stack_map has no block %d", id, id)
			Expect(int64(id)).To(BeNumerically("<", st.TableSize), "<stack_id %d> is not below table_size %d", id, st.TableSize)
		}
	})

	harness.ReqIt("SM-TEXT-01", "reads as well-formed blocks in ascending id order, and empty when the map is", func() {
		// clause SM-TEXT-01.1 SM-TEXT-01.2 SM-TEXT-01.3
		tfs := harness.Root()
		record(tfs, workloadRuns)
		text, err := tfs.Read(mapNode)
		Expect(err).NotTo(HaveOccurred(), "reading stack_map")
		blocks, err := fmtx.ParseText(text)
		failOn(err)
		Expect(blocks).NotTo(BeEmpty(), "stack_map is empty after a traced workload")
		failOn(fmtx.CheckOrder(blocks))
		By("reading an empty map as an empty file")
		resetMap(tfs)
		Expect(tfs.Read(mapNode)).To(BeEmpty(), "stack_map after a reset")
	})

	harness.ReqIt("SM-TEXT-02", "never heads two blocks with the same id", func() {
		// clause SM-TEXT-02.1
		tfs := harness.Root()
		record(tfs, workloadRuns)
		failOn(fmtx.CheckUnique(mapBlocks(tfs)))
	})

	harness.ReqIt("SM-STAT-01", "has exactly the stat keys, and success_rate only once something was counted", func() {
		// clause SM-STAT-01.1 SM-STAT-01.2
		tfs := harness.Root()
		quiet(tfs)
		harness.Set(tfs, optionNode, "1")
		resetMap(tfs)
		By("reading the statistics of an empty map")
		_, err := statOf(tfs)
		failOn(err)
		record(tfs, workloadRuns)
		By("reading the statistics after a traced workload")
		_, err = statOf(tfs)
		failOn(err)
	})

	harness.ReqIt("SM-STAT-02", "sizes the table as a power of two in range, table_size twice the capacity", func() {
		// clause SM-STAT-02.1 SM-STAT-02.2 SM-STAT-02.3
		st := readStat(harness.Root())
		failOn(st.CheckCapacity())
		if _, set, _ := harness.KernelParam(bitsParam); !set {
			Expect(st.Capacity).To(Equal(int64(1)<<defaultBits), "[SM-STAT-02.1] booted without %s: capacity %d, want the default 2^%d", bitsParam, st.Capacity, defaultBits)
		} else {
			harness.Note("booted with %s: the default size is judged in a boot without it", bitsParam)
		}
	})

	harness.ReqIt("SM-STAT-03", "counts what the map holds after a workload", func() {
		tfs := harness.Root()
		armRecording(tfs)
		// Counters that a reset did not zero are SM-RESET-04's to report.
		if st := readStat(tfs); st.Entries != 0 || st.Successes != 0 || st.Drops != 0 {
			harness.Prerequisite("SM-RESET-04", fmt.Errorf("after a reset: entries %d, successes %d, drops %d, want 0", st.Entries, st.Successes, st.Drops))
		}
		traceWorkload(tfs, workloadRuns)
		requireStackIDs(tfs, workloadRuns)
		blocks := readBlocks(tfs)
		st := readStat(tfs)
		// clause SM-STAT-03.1
		Expect(st.Successes).To(BeNumerically(">", 0), "[SM-STAT-03.1] successes after %d stack-traced events (drops %d)", workloadRuns, st.Drops)
		// clause SM-STAT-03.2 SM-STAT-03.3
		checkCounters(blocks, st)
	})
})
