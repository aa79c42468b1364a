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

// The full map: in a boot with the smallest map (ftrace_stackmap.bits=10,
// 1024 stacks) and one CPU, the function tracer with a stack on every call
// of a few hundred functions (stressFunctions) gives far more distinct
// stacks than the map holds: one run of the workload alone gives several
// hundred. A fill records from an empty map, in one tracing session, until
// the map stops taking stacks, and keeps what the kernel then shows. The
// specs below judge that one fill; the reset spec makes a second.

const (
	// fillBudget bounds a fill: a map that has not filled by then is
	// reported as such, never passed.
	fillBudget = 90 * time.Second
	// runsAfterFull keep the workload going once the map is full, so that
	// stacks are dropped and stacks it holds are met again.
	runsAfterFull = 2
	// fillBufferKB is the ring buffer per CPU during a fill: room for the
	// whole session, so trace can be counted against the counters.
	fillBufferKB = "16384"
	// stillRuns of the workload in a row that add no entry and drop
	// nothing, the map not full, end the wait for a full map: the kernel
	// stopped taking stacks without saying so, and the specs judge what it
	// shows at once (a run of a workload that gives hundreds of stacks
	// always adds some to a map with room).
	stillRuns = 3
)

// fill is what one fill showed, read with tracing off.
type fill struct {
	capacity int64
	runs     int
	// still is set when the map stopped growing below its capacity
	// without a drop (stillRuns), and the wait gave up.
	still bool
	// rateSteps are moveRate's reads, when the workload's rate did not
	// separate floor from nearest.
	rateSteps int
	stat      fmtx.Stat        // at the end
	statErr   error            // stack_map_stat did not parse: SM-STAT-01's, for each spec to judge
	trace     fmtx.TraceStacks // the whole session
	blocks    []fmtx.Block
	bin       []byte // stack_map_bin as read, for SM-BIN-03's spec alone
	binErr    error
}

// full says whether the map stopped taking stacks: it dropped some that
// were not too deep, or reached its capacity.
func (f *fill) full() bool {
	return f.stat.Entries >= f.capacity || f.trace.SmallFullStacks() > 0
}

// requireFull ends a spec that needs a full map when the fill gave none.
func (f *fill) requireFull() {
	switch {
	case f.full():
	case f.still:
		harness.Unresolved("the map stopped taking stacks at %d of %d entries with no drop and no full stack in trace: %d runs of the workload in a row added none",
			f.stat.Entries, f.capacity, stillRuns)
	default:
		harness.Unresolved("the map never filled: %d runs of the workload in %v gave %d distinct stacks, the map holds %d",
			f.runs, fillBudget, f.stat.Entries, f.capacity)
	}
}

// statNow reads stack_map_stat, a setup step, and parses it; a fill
// whose stat does not parse keeps the error and stops.
func (f *fill) statNow(tfs *harness.TraceFS) (fmtx.Stat, bool) {
	st, err := fmtx.ParseStat(readStatText(tfs))
	if err != nil {
		f.statErr = wrap(err, "stack_map_stat")
	}
	return st, err == nil
}

// firstFill is the boot's first fill, made by whichever full-map spec runs
// first; a fill that could not be made is tried again by the next spec.
var firstFill *fill

func fullMap(tfs *harness.TraceFS) *fill {
	if firstFill == nil {
		firstFill = fillMap(tfs)
	}
	return firstFill
}

// smallestMap ends the spec unless the map is the smallest the contract
// allows: a kernel booted with bits=10 that has another size is
// SM-BOOT-02's failure.
func smallestMap(st fmtx.Stat) int64 {
	if value, set, _ := harness.KernelParam(bitsParam); set && expectedBits(value) == minBits {
		if st.Capacity != 1<<minBits {
			harness.Prerequisite("SM-BOOT-02", fmt.Errorf("booted with %s=%s, capacity %d", bitsParam, value, st.Capacity))
		}
		return st.Capacity
	}
	if st.Capacity != 1<<minBits {
		harness.Unsupported("needs the smallest map (a boot with %s=%d); this one holds %d stacks", bitsParam, minBits, st.Capacity)
	}
	return st.Capacity
}

// fillMap empties the map and records with the function tracer until the
// map is full and a few runs more, or the budget is spent.
func fillMap(tfs *harness.TraceFS) *fill {
	f := &fill{}
	st, ok := f.statNow(tfs)
	if !ok {
		return f
	}
	f.capacity = smallestMap(st)
	quiet(tfs)
	harness.Require(tfs, harness.Tracer("function"), harness.Node("options/func_stack_trace"), harness.Node("set_ftrace_filter"))
	harness.Set(tfs, "buffer_size_kb", fillBufferKB)
	traceStressFunctions(tfs)
	harness.Set(tfs, optionNode, "1")
	// The boot's first fill takes the map as the boot left it, empty and
	// never reset, so that what a reset does is SM-RESET-04's alone; a
	// later fill resets it first.
	if st, ok := f.statNow(tfs); !ok {
		return f
	} else if st.Entries != 0 || st.Successes != 0 || st.Drops != 0 {
		resetMap(tfs)
	} else {
		harness.Must(tfs.Write("trace", ""), "clearing trace")
	}
	harness.Set(tfs, "current_tracer", "function")
	harness.Set(tfs, funcStacks, "1")
	armFunctionTwin(tfs)

	By(fmt.Sprintf("filling the map of %d stacks with the function tracer", f.capacity))
	// Turning tracing on under the function tracer clears the buffer: trace
	// holds this session alone.
	if twin != nil {
		twin.On()
	}
	harness.Must(tfs.Write("tracing_on", "1"), "turning tracing on")
	deadline, after, still := time.Now().Add(fillBudget), -1, 0
	var err error
	var last fmtx.Stat
	// Once full, a few runs more; then moveRate brings the success rate
	// to where rounding down and rounding to nearest differ (SM-STAT-01.3).
	// A stat that no longer parses, or a map that stopped growing, ends the
	// wait: the specs judge what the kernel showed, not the budget.
	for time.Now().Before(deadline) && after < runsAfterFull && still < stillRuns {
		if err = harness.RunWorkload(1); err != nil {
			break
		}
		f.runs++
		st, serr := fmtx.ParseStat(readStatText(tfs))
		switch {
		case serr != nil:
			still = stillRuns // judged below, by SM-STAT-01's specs
		case after >= 0:
			after++
		case st.Entries >= f.capacity || st.Drops > 0:
			after = 0
		case st.Entries == last.Entries:
			still++
		default:
			still = 0
		}
		last = st
	}
	f.still = still >= stillRuns && after < 0
	if err == nil && after >= 0 {
		f.rateSteps = moveRate(tfs)
	}
	harness.Must(tfs.Write("tracing_on", "0"), "turning tracing off")
	if twin != nil {
		twin.Off()
	}
	harness.Must(err, "running the workload")
	// Everything is read before the tracer changes: that clears trace.

	if lost := lostEvents(tfs); lost != 0 {
		harness.Unresolved("the ring buffer lost %d events of the fill: trace cannot be counted against the map", lost)
	}
	if f.stat, ok = f.statNow(tfs); !ok {
		return f
	}
	f.trace = fmtx.ParseTrace(readTrace(tfs))
	f.blocks = readBlocks(tfs)
	f.bin, f.binErr = os.ReadFile(tfs.Path(binNode))
	AddReportEntry("fill", map[string]any{"runs": f.runs, "stopped growing": f.still, "rate steps": f.rateSteps, "entries": f.stat.Entries, "successes": f.stat.Successes,
		"drops": f.stat.Drops, "ids in trace": len(f.trace.IDs), "full stacks in trace": f.trace.FullStacks})
	checkpoint(tfs, "after the map filled (%d runs, %d drops)", f.runs, f.stat.Drops)
	return f
}

// funcStacks records a stack with each function the function tracer traces.
const funcStacks = "options/func_stack_trace"

// twinFunctions are the functions of stressFunctions the full map's twin
// records too, its stacks exactly: few calls, since the twin's trace is
// read at every checkpoint and each of its frames printed with address and
// offset. The ids of every other traced function are held to the call
// their own event names (fmtx.CheckCalls).
var twinFunctions = []string{"do_filp_open"}

// armFunctionTwin gives a fill under the function tracer its twin
// (armTwin), recording twinFunctions with their stacks.
func armFunctionTwin(tfs *harness.TraceFS) {
	useTwin(harness.ArmTwin(tfs, harness.TwinSource{Functions: twinFunctions}))
}

// maxRateSteps bound moveRate's batches; maxRateReads bound one batch. A
// batch after the first is sized to land in the middle of the next window
// where the rate separates, so two or three are the rule.
const (
	maxRateSteps = 12
	maxRateReads = 20000
)

// moveRate moves the success rate of a full map until its fraction of a
// percent is at least one half (RateSeparates), and returns the batches of
// reads it took; 0 when the workload's runs got there. Those settle at a
// rate of their own, which on some arches never gets there.
//
// Reading stack_map_stat is traced too, so the counters are read with
// vfs_read left out of the trace (set_ftrace_notrace), the function tracer
// on: turning tracing back on would clear the buffer the specs count. A
// batch traces vfs_read alone while stack_map_stat is read: one call path,
// the same stack each time, a success when the map holds it, a drop when
// it does not. Either way the rate moves one way only, and by what the
// previous batch moved it per read. Each change of set_ftrace_notrace
// patches the kernel's text, which is slow under emulation: the batches
// are few and large rather than many and small.
func moveRate(tfs *harness.TraceFS) (steps int) {
	if harness.Probe(tfs, harness.Node("set_ftrace_notrace")) != nil {
		return 0 // the rate as the runs left it: judged only partly if it agrees
	}
	DeferCleanup(tfs.Write, "set_ftrace_notrace", "")
	harness.Must(tfs.Write("set_ftrace_filter", "vfs_read"), "tracing vfs_read alone")
	harness.Must(tfs.Write("set_ftrace_notrace", "vfs_read"), "leaving vfs_read out of the trace")
	before, err := fmtx.ParseStat(readStatText(tfs))
	if err != nil || before.RateSeparates() {
		return 0
	}
	reads := 10
	for steps < maxRateSteps {
		harness.Must(tfs.Write("set_ftrace_notrace", ""), "tracing vfs_read again")
		for range reads {
			readStatText(tfs)
		}
		harness.Must(tfs.Write("set_ftrace_notrace", "vfs_read"), "leaving vfs_read out of the trace")
		steps++
		after, err := fmtx.ParseStat(readStatText(tfs))
		if err != nil || after.RateSeparates() {
			return steps
		}
		reads = readsToSeparate(before, after, reads)
		before = after
	}
	return steps
}

// readsToSeparate is how many reads more, each moving the counters as the
// last batch's reads did on average, bring the rate to the middle of the
// next window where it separates; the last batch's size again when they did
// not move it.
func readsToSeparate(before, after fmtx.Stat, reads int) int {
	perS := float64(after.Successes-before.Successes) / float64(reads)
	perD := float64(after.Drops-before.Drops) / float64(reads)
	at := func(k int) fmtx.Stat {
		return fmtx.Stat{Successes: after.Successes + int64(perS*float64(k)), Drops: after.Drops + int64(perD*float64(k))}
	}
	first := -1
	for k := 1; k <= maxRateReads; k++ {
		separates := at(k).RateSeparates()
		switch {
		case separates && first < 0:
			first = k
		case !separates && first >= 0:
			return (first + k) / 2
		}
	}
	if first >= 0 {
		return first
	}
	return reads
}

// readStatText reads stack_map_stat; reading it is a setup step.
func readStatText(tfs *harness.TraceFS) string {
	text, err := tfs.Read(statNode)
	harness.Must(err, "reading stack_map_stat")
	return text
}

// lostEvents adds up the per-CPU overruns and dropped events.
func lostEvents(tfs *harness.TraceFS) int64 {
	var lost int64
	for _, cpu := range harness.CPUStats(tfs) {
		lost += cpu.Overrun + cpu.Dropped
	}
	return lost
}

var _ = describe("the full map", Label(contract.LabelNeedsBoot, contract.LabelFullMap), Serial, func() {
	harness.ReqIt("SM-STAT-03", "fills to its capacity before it drops a stack, records each drop in full and counts it", harness.Case("full-map"), func() {
		f := fullMap(harness.Root())
		harness.Prerequisite("SM-STAT-01", f.statErr)
		f.requireFull()
		harness.Prerequisite("SM-STAT-02", f.stat.CheckCapacity())
		if runtime.NumCPU() == 1 {
			if distinct, dropped := f.trace.FirstDrop(); dropped {
				Expect(distinct).To(BeNumerically(">=", f.capacity), harness.Clause("SM-STAT-03.4",
					"a stack of at most %d frames was dropped when trace had shown %d distinct ids, the map holds %d", fmtx.MaxDepth, distinct, f.capacity))
			}
			Expect(f.stat.Entries).To(Equal(f.capacity), harness.Clause("SM-STAT-03.4", "the map stopped taking stacks at entries %d of %d", f.stat.Entries, f.capacity))
		} else {
			harness.Note("%d CPUs: when the map filled was not checked, a race between CPUs may leave pool entries unused", runtime.NumCPU())
		}
		Expect(int64(len(f.trace.IDs))).To(Equal(f.stat.Successes), harness.Clause("SM-STAT-03.5", "trace has %d <stack_id N> from an empty map, successes %d", len(f.trace.IDs), f.stat.Successes))
		// A stack deeper than 64 frames may count as a drop or not (SM-STAT-03.1).
		short := int64(f.trace.SmallFullStacks())
		Expect(f.stat.Drops).To(And(BeNumerically(">=", short), BeNumerically("<=", f.trace.FullStacks)), harness.Clause("SM-STAT-03.5",
			"drops %d from an empty map; trace has %d full stacks, %d of them of at most %d frames", f.stat.Drops, f.trace.FullStacks, short, fmtx.MaxDepth))
		checkCounters(f.blocks, f.stat, "a full map")
	})

	harness.ReqIt("SM-STAT-02", "never shows more entries than its capacity when full", harness.Case("full-map"), func() {
		f := fullMap(harness.Root())
		harness.Prerequisite("SM-STAT-01", f.statErr)
		f.requireFull()
		judgeCapacity(f.stat, "a full map")
	})

	harness.ReqIt("SM-STAT-01", "gives the success rate of a full map rounded down", harness.Case("full-map"), func() {
		f := fullMap(harness.Root())
		harness.FailOn(f.statErr, harness.Clause("SM-STAT-01.1", "filling the map"))
		f.requireFull()
		if f.stat.Drops == 0 {
			harness.Prerequisite("SM-STAT-03", fmt.Errorf("a full map shows drops 0 (%d full stacks in trace)", f.trace.FullStacks))
		}
		judgeStat(f.stat, f.statErr, "a full map")
		if !f.stat.RateSeparates() {
			harness.Note("judged only partly: at %d successes and %d drops rounding down and to nearest agree", f.stat.Successes, f.stat.Drops)
		}
	})

	harness.ReqIt("SM-BIN-03", "agrees with stack_map when the map is full", harness.Case("full-map"), func() {
		f := fullMap(harness.Root())
		harness.Prerequisite("SM-STAT-01", f.statErr)
		f.requireFull()
		data, err := binRead(f.bin, f.binErr)
		harness.Prerequisite("SM-BIN-02", err)
		compareExports(f.blocks, parseBin(data))
	})

	harness.ReqIt("SM-RESET-04", "empties a full map, its drops too, and the map then fills again", harness.Case("full-map"), func() {
		tfs := harness.Root()
		before := fullMap(tfs)
		harness.Prerequisite("SM-STAT-01", before.statErr)
		before.requireFull()
		quiet(tfs)
		resetAsSetup(tfs, "0")
		checkpoint(tfs, "after a reset of a full map")
		st := readStat(tfs)
		Expect([]int64{st.Entries, st.Successes, st.Drops}).To(Equal([]int64{0, 0, 0}), harness.Clause("SM-RESET-04.1",
			"after a reset of a full map: entries %d, successes %d, drops %d, want 0", st.Entries, st.Successes, st.Drops))
		if distinct, dropped := before.trace.FirstDrop(); runtime.NumCPU() == 1 && dropped && int64(distinct) < before.capacity {
			harness.Prerequisite("SM-STAT-03", fmt.Errorf("the first fill dropped a stack when trace had shown %d distinct ids, the map holds %d", distinct, before.capacity))
		}
		again := fillMap(tfs)
		harness.Prerequisite("SM-STAT-01", again.statErr)
		Expect(again.stat.Entries).To(Equal(before.stat.Entries), harness.Clause("SM-RESET-04.4",
			"the map took %d stacks before the reset and %d after it (%d runs, %d drops)", before.stat.Entries, again.stat.Entries, again.runs, again.stat.Drops))
		if runtime.NumCPU() == 1 {
			if distinct, dropped := again.trace.FirstDrop(); dropped {
				Expect(distinct).To(BeNumerically(">=", again.capacity), harness.Clause("SM-RESET-04.4",
					"after the reset a stack of at most %d frames was dropped when trace had shown %d distinct ids, the map holds %d", fmtx.MaxDepth, distinct, again.capacity))
			}
		} else {
			harness.Note("%d CPUs: when the map filled again was not checked", runtime.NumCPU())
		}
	})
})
