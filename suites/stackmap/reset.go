package stackmap

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/sys/unix"

	"github.com/ftrace-stackmap/conformance/harness"
	fmtx "github.com/ftrace-stackmap/conformance/harness/stackmapfmt"
)

// marker is written to trace_marker so a spec can tell whether trace was cleared.
const marker = "smct-reset-marker"

// populate leaves a map with entries and a trace holding events and the
// marker, tracing off. It returns the entry count.
func populate(tfs *harness.TraceFS) int64 {
	record(tfs, workloadRuns)
	harness.Set(tfs, "tracing_on", "1")
	if err := tfs.Write("trace_marker", marker); err != nil {
		harness.Unresolved("cannot write trace_marker: %v", err)
	}
	Expect(tfs.Write("tracing_on", "0")).To(Succeed())
	st := readStat(tfs)
	if st.Entries == 0 {
		harness.Unresolved("the map is still empty after a traced workload: nothing to check a reset against")
	}
	return st.Entries
}

// unchanged checks that a refused reset touched neither the map nor trace.
func unchanged(tfs *harness.TraceFS, entries int64, what string) {
	Expect(readStat(tfs).Entries).To(Equal(entries), "entries changed after %s", what)
	Expect(readTrace(tfs)).To(ContainSubstring(marker), "trace was cleared by %s", what)
}

var _ = describe("resetting the map", func() {
	harness.ReqIt("SM-RESET-01", "refuses a reset with EBUSY while tracing is on, and changes nothing", func() {
		tfs := harness.Root()
		entries := populate(tfs)
		Expect(tfs.Write("options/stacktrace", "0")).To(Succeed(), "turning the stack source off")
		Expect(tfs.ReadTrimmed("current_tracer")).To(Equal("nop"))
		Expect(tfs.Write("tracing_on", "1")).To(Succeed())
		err := tfs.Write(mapNode, "0")
		Expect(tfs.Write("tracing_on", "0")).To(Succeed())
		Expect(harness.Errno(err)).To(Equal(unix.EBUSY), "writing 0 to stack_map with tracing_on=1: got %v, want EBUSY", err)
		unchanged(tfs, entries, "a refused reset")
	})

	harness.ReqIt("SM-RESET-02", "accepts 0 and reset, with or without a newline, and reports every byte written", func() {
		tfs := harness.Root()
		quiet(tfs)
		for _, in := range []string{"0", "0\n", "reset", "reset\n"} {
			n, err := tfs.WriteBytes(mapNode, []byte(in), 0)
			Expect(err).NotTo(HaveOccurred(), "writing %q to stack_map with tracing off", in)
			Expect(n).To(Equal(len(in)), "write(%q) returned %d, want %d", in, n, len(in))
		}
	})

	harness.ReqIt("SM-RESET-03", "refuses every other write with EINVAL, even while tracing, and changes nothing", func() {
		tfs := harness.Root()
		entries := populate(tfs)
		Expect(tfs.Write("options/stacktrace", "0")).To(Succeed(), "turning the stack source off")
		bad := []string{"1", "foo", "00", "0 ", " 0", "0\n\n", "reset\r\n", "resetx", "reset\n\n\n", "00000000", ""}
		var wrong []string
		for _, tracing := range []string{"0", "1"} {
			Expect(tfs.Write("tracing_on", tracing)).To(Succeed())
			for _, in := range bad {
				_, err := tfs.WriteBytes(mapNode, []byte(in), 0)
				if harness.Errno(err) != unix.EINVAL {
					wrong = append(wrong, fmt.Sprintf("%q with tracing_on=%s: got %v, want EINVAL", in, tracing, err))
				}
			}
			Expect(tfs.Write("tracing_on", "0")).To(Succeed())
		}
		Expect(wrong).To(BeEmpty(), "stack_map writes: %s", strings.Join(wrong, "; "))
		unchanged(tfs, entries, "refused writes")
	})

	harness.ReqIt("SM-RESET-04", "empties the map, its counters and the binary export", func() {
		tfs := harness.Root()
		populate(tfs)
		Expect(tfs.Write(mapNode, "reset")).To(Succeed())
		st := readStat(tfs)
		Expect([]int64{st.Entries, st.Successes, st.Drops}).To(Equal([]int64{0, 0, 0}),
			"after a reset: entries %d, successes %d, drops %d, want 0", st.Entries, st.Successes, st.Drops)
		Expect(st.HasSuccessRate).To(BeFalse(), "success_rate line after a reset")
		Expect(st.Capacity).To(BeNumerically(">", 0))
		Expect(readBlocks(tfs)).To(BeEmpty(), "stack_map blocks after a reset")
		Expect(readBin(tfs).Records).To(BeEmpty(), "stack_map_bin records after a reset")
	})

	harness.ReqIt("SM-RESET-05", "clears the whole top-level ring buffer with the map (v3: keeps it)", func() {
		tfs := harness.Root()
		populate(tfs)
		// Taking a snapshot swaps the buffers: trace the workload again so
		// both hold events.
		snapshot := takeSnapshot(tfs)
		if snapshot {
			traceWorkload(tfs, workloadRuns)
		}
		before := fmtx.ParseTrace(readTrace(tfs)).IDs
		Expect(before).NotTo(BeEmpty(), "no <stack_id> in trace before the reset")
		Expect(tfs.Write(mapNode, "0")).To(Succeed())
		after := readTrace(tfs)
		if harness.Profile() == harness.ProfileV3 {
			Expect(fmtx.ParseTrace(after).IDs).To(HaveLen(len(before)), "v3 keeps the ring buffer: stale <stack_id> lines, before and after the reset")
			return
		}
		Expect(fmtx.Events(after)).To(BeZero(), "trace still holds events after a reset:\n%s", after)
		if snapshot {
			text, err := tfs.Read("snapshot")
			Expect(err).NotTo(HaveOccurred())
			Expect(fmtx.Events(text)).To(BeZero(), "the snapshot buffer still holds events after a reset:\n%s", text)
		}
	})
})

// takeSnapshot copies the buffer into the snapshot buffer, when the kernel
// has one and it is not in use, and frees it when the spec ends.
func takeSnapshot(tfs *harness.TraceFS) bool {
	if !tfs.Exists("snapshot") {
		return false
	}
	text, err := tfs.Read("snapshot")
	if err != nil || !strings.Contains(text, "NOT ALLOCATED") {
		return false // someone else's snapshot: leave it alone
	}
	if err := tfs.Write("snapshot", "1"); err != nil {
		harness.Unresolved("cannot take a snapshot: %v", err)
	}
	DeferCleanup(tfs.Write, "snapshot", "0")
	text, _ = tfs.Read("snapshot")
	if !strings.Contains(text, marker) {
		harness.Unresolved("the snapshot does not hold the events it was taken of")
	}
	return true
}
