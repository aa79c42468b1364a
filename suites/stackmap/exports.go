package stackmap

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ftrace-stackmap/conformance/harness"
	fmtx "github.com/ftrace-stackmap/conformance/harness/stackmapfmt"
)

var _ = describe("the text export and the statistics", func() {
	harness.ReqIt("SM-TRACE-01", "names in every <stack_id N> of trace a block of stack_map, with N below table_size", func() {
		tfs := harness.Root()
		record(tfs, workloadRuns)
		ids := fmtx.ParseTrace(readTrace(tfs)).IDs
		Expect(ids).NotTo(BeEmpty(), "no <stack_id N> in trace to check")
		blocks := fmtx.IDs(readBlocks(tfs))
		st := readStat(tfs)
		for _, id := range ids {
			_, ok := blocks[id]
			Expect(ok).To(BeTrue(), "trace has <stack_id %d>, stack_map has no block %d", id, id)
			Expect(int64(id)).To(BeNumerically("<", st.TableSize), "<stack_id %d> is not below table_size %d", id, st.TableSize)
		}
	})

	harness.ReqIt("SM-TEXT-01", "reads as well-formed blocks in ascending id order, and empty when the map is", func() {
		tfs := harness.Root()
		record(tfs, workloadRuns)
		blocks := readBlocks(tfs)
		Expect(blocks).NotTo(BeEmpty(), "stack_map is empty after a traced workload")
		Expect(fmtx.OrderError(blocks)).To(BeEmpty())
		By("reading an empty map as an empty file")
		resetMap(tfs)
		Expect(tfs.Read(mapNode)).To(BeEmpty(), "stack_map after a reset")
	})

	harness.ReqIt("SM-TEXT-02", "never heads two blocks with the same id", func() {
		tfs := harness.Root()
		record(tfs, workloadRuns)
		Expect(fmtx.DuplicateError(readBlocks(tfs))).To(BeEmpty())
	})

	harness.ReqIt("SM-STAT-01", "has exactly the stat keys, and success_rate only once something was counted", func() {
		tfs := harness.Root()
		quiet(tfs)
		resetMap(tfs)
		st := readStat(tfs)
		Expect(st.RateError()).To(BeEmpty(), "on an empty map")
		record(tfs, workloadRuns)
		st = readStat(tfs)
		Expect(st.RateError()).To(BeEmpty(), "after a traced workload")
	})

	harness.ReqIt("SM-STAT-02", "sizes the table as a power of two in range, table_size twice the capacity", func() {
		st := readStat(harness.Root())
		Expect(st.CapacityError()).To(BeEmpty())
	})

	harness.ReqIt("SM-STAT-03", "counts what the map holds after a workload", func() {
		tfs := harness.Root()
		record(tfs, workloadRuns)
		blocks := readBlocks(tfs)
		st := readStat(tfs)
		Expect(st.Successes).To(BeNumerically(">", 0), "successes after %d stack-traced events (drops %d)", workloadRuns, st.Drops)
		Expect(st.Entries).To(Equal(int64(len(blocks))), "entries %d, stack_map has %d blocks", st.Entries, len(blocks))
		refs := int64(0)
		for _, b := range blocks {
			refs += int64(b.Ref)
		}
		Expect(refs).To(Equal(st.Successes), "ref counts add up to %d, successes %d", refs, st.Successes)
		if harness.Profile() == harness.ProfileV3 {
			Expect(st.Drops).To(BeZero(), "drops under the v3 profile")
		}
	})
})
