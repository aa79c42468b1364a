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
	harness.ReqIt("SM-TRACE-01", "names in every <stack_id N> of trace a block of stack_map, with N below table_size, and the stack captured for that event", harness.Case("trace"), func() {
		tfs := harness.Root()
		armRecording(tfs)
		traceWorkload(tfs, workloadRuns)
		trace, err := tfs.Read("trace")
		harness.Must(err, "reading trace")
		judgeReader(tfs, "trace", trace, false)
	})

	harness.ReqIt("SM-TEXT-01", "reads as well-formed blocks in ascending id order, and empty when the map is", func() {
		tfs := harness.Root()
		record(tfs, workloadRuns)
		text, err := tfs.Read(mapNode)
		Expect(err).NotTo(HaveOccurred(), harness.Clause("SM-TEXT-01.1", "reading stack_map"))
		blocks, err := fmtx.ParseText(text)
		harness.FailOn(err, harness.Clause("SM-TEXT-01.1", ""))
		Expect(blocks).NotTo(BeEmpty(), harness.Clause("SM-TEXT-01.1", "stack_map has no block after a workload that put <stack_id N> in trace"))
		harness.FailOn(fmtx.CheckOrder(blocks), harness.Clause("SM-TEXT-01.2", ""))
		By("reading an empty map as an empty file")
		resetMap(tfs)
		Expect(tfs.Read(mapNode)).To(BeEmpty(), harness.Clause("SM-TEXT-01.3", "stack_map after a reset"))
	})

	harness.ReqIt("SM-TEXT-02", "never heads two blocks with the same id", func() {
		tfs := harness.Root()
		record(tfs, workloadRuns)
		harness.FailOn(fmtx.CheckUnique(mapBlocks(tfs)), harness.Clause("SM-TEXT-02.1", ""))
	})

	harness.ReqIt("SM-STAT-01", "has exactly the stat keys, and success_rate only once something was counted", harness.Case("keys"), func() {
		tfs := harness.Root()
		quiet(tfs)
		harness.Set(tfs, optionNode, "1")
		resetMap(tfs)
		By("reading the statistics of an empty map")
		st, err := parseStat(tfs)
		judgeStat(st, err, "an empty map")
		record(tfs, workloadRuns)
		By("reading the statistics after a traced workload")
		st, err = parseStat(tfs)
		judgeStat(st, err, "after a traced workload")
	})

	harness.ReqIt("SM-STAT-02", "sizes the table as a power of two in range, table_size twice the capacity", harness.Case("sizes"), func() {
		st := readStat(harness.Root())
		judgeCapacity(st, "")
		if _, set, _ := harness.KernelParam(bitsParam); !set {
			Expect(st.Capacity).To(Equal(int64(1)<<defaultBits), harness.Clause("SM-STAT-02.1", "booted without %s: capacity %d, want the default 2^%d", bitsParam, st.Capacity, defaultBits))
		} else {
			harness.Note("booted with %s: the default size is judged in a boot without it", bitsParam)
		}
	})

	harness.ReqIt("SM-STAT-03", "counts what the map holds after a workload", harness.Case("workload"), func() {
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
		Expect(st.Successes).To(BeNumerically(">", 0), harness.Clause("SM-STAT-03.1", "successes after %d stack-traced events (drops %d)", workloadRuns, st.Drops))
		checkCounters(blocks, st, "")
	})
})
