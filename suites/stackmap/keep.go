// SPDX-License-Identifier: GPL-2.0-only

package stackmap

import (
	"fmt"
	"os"
	"runtime"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ftrace-stackmap/conformance/harness"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	fmtx "github.com/ftrace-stackmap/conformance/internal/stackmapfmt"
)

// Only a reset removes what the map holds. A user clears trace, clears one
// CPU's buffer, drains trace_pipe, takes a snapshot or takes a CPU off
// line and back, with a map full of stacks the ids of other buffers (or
// of the ones to come) still need: each must leave the map as it was.

// mapState is what the map holds and counts.
type mapState struct {
	Blocks                    []fmtx.Block
	Entries, Successes, Drops int64
}

// readMapState reads the map's blocks and counters, tracing off.
func readMapState(tfs *harness.TraceFS) mapState {
	st := readStat(tfs)
	return mapState{Blocks: readBlocks(tfs), Entries: st.Entries, Successes: st.Successes, Drops: st.Drops}
}

// keepsMap records the workload, does op to the buffer (what says what it
// did), and holds the map to what it was before (SM-OPT-04.2).
func keepsMap(tfs *harness.TraceFS, what string, op func()) {
	record(tfs, workloadRuns)
	before := readMapState(tfs)
	if len(before.Blocks) == 0 {
		harness.Unresolved("the map is empty after a traced workload: nothing to keep")
	}
	By(what)
	op()
	checkpoint(tfs, "%s", what)
	after := readMapState(tfs)
	Expect(after).To(Equal(before), harness.Clause("SM-OPT-04.2", "the map changed when %s", what))
}

var _ = describe("what only a reset removes", func() {
	harness.ReqIt("SM-OPT-04", "keeps the map when trace is cleared", harness.Case("clear"), func() {
		tfs := harness.Root()
		keepsMap(tfs, "trace was cleared", func() {
			harness.Must(tfs.Write("trace", ""), "clearing trace")
		})
	})

	harness.ReqIt("SM-OPT-04", "keeps the map when one CPU's buffer is cleared", harness.Case("cpu-clear"), func() {
		tfs := harness.Root()
		keepsMap(tfs, "each CPU's buffer was cleared through per_cpu/cpuN/trace", func() {
			for _, cpu := range cpusWithTrace(tfs) {
				harness.Must(tfs.Write(fmt.Sprintf("per_cpu/cpu%d/trace", cpu), ""), "clearing CPU %d's buffer", cpu)
			}
		})
	})

	harness.ReqIt("SM-OPT-04", "keeps the map when trace_pipe and trace_pipe_raw are read", harness.Case("consume"), func() {
		tfs := harness.Root()
		keepsMap(tfs, "CPU 0's trace_pipe, then trace_pipe, were read to their end", func() {
			drain(tfs, "per_cpu/cpu0/trace_pipe")
			drain(tfs, "trace_pipe")
		})
		keepsMap(tfs, "CPU 0's trace_pipe_raw was read to its end", func() {
			drain(tfs, "per_cpu/cpu0/trace_pipe_raw")
		})
	})

	harness.ReqIt("SM-OPT-04", "keeps the map when a snapshot is taken and freed", harness.Case("snapshot"), func() {
		tfs := harness.Root()
		harness.Require(tfs, harness.Node("snapshot"))
		keepsMap(tfs, "a snapshot was taken and freed", func() {
			snapshotOwn(tfs)
			harness.Must(tfs.Write("snapshot", "0"), "freeing the snapshot")
		})
	})
})

var _ = describe("what only a reset removes, with CPUs", Label(contract.LabelNeedsBoot, contract.LabelTwoCPUs), func() {
	harness.ReqIt("SM-OPT-04", "keeps the map when a CPU goes off line and back", harness.Case("hotplug"), func() {
		tfs := harness.Root()
		if runtime.NumCPU() < 2 {
			harness.Unsupported("needs a second CPU to take off line; this boot has %d", runtime.NumCPU())
		}
		const online = "/sys/devices/system/cpu/cpu1/online"
		if _, err := os.Stat(online); err != nil {
			harness.Unsupported("CPU 1 cannot go off line here (%v: CONFIG_HOTPLUG_CPU?)", err)
		}
		DeferCleanup(os.WriteFile, online, []byte("1"), os.FileMode(0))
		keepsMap(tfs, "CPU 1 went off line and back", func() {
			harness.Must(os.WriteFile(online, []byte("0"), 0), "taking CPU 1 off line")
			// What a kernel does when a CPU goes may run after the write
			// returns: give it the time a user would leave.
			time.Sleep(500 * time.Millisecond)
			harness.Must(os.WriteFile(online, []byte("1"), 0), "bringing CPU 1 back")
			time.Sleep(500 * time.Millisecond)
		})
	})
})
