// SPDX-License-Identifier: GPL-2.0-only

package stackmap

import (
	"encoding/binary"
	"errors"
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

// stressFunctions are traced with a stack each: hot, on every arch, and
// called from enough places to fill the small map the stress boot asks for.
var stressFunctions = []string{"schedule", "vfs_*", "do_filp_open", "*alloc*", "*page*", "*free*"}

const stressDuration = 30 * time.Second

// The stress run: the function tracer with a stack on every call of
// stressFunctions, on every CPU, readers of every node and a reset every
// round. One run serves the specs below; each judges what its own
// requirement owns, so a broken counter fails the requirement of that
// counter once.

// round is what one round left, read with tracing off. Its errors are kept
// for the spec whose requirement owns them.
type round struct {
	stat      fmtx.Stat
	statErr   error // stack_map_stat does not parse: SM-STAT-01's
	blocks    []fmtx.Block
	blocksErr error // stack_map is not well-formed: SM-TEXT-01's
	// The round's ids held to the stacks their twin recorded: how many,
	// and the first that names another stack (SM-TRACE-01.4's); binErr
	// when stack_map_bin could not be read to hold them (SM-BIN-02's).
	idsHeld    int
	idErr      error
	binErr     error
	binDiffers error // the binary export differs from the text: SM-BIN-03's
}

// stressRun is the whole run.
type stressRun struct {
	rounds              []round
	problems            []string // reads under load that were not well-formed
	bothCPUs            int      // rounds in which more than one CPU recorded
	ids, drops, fullest int64    // over all rounds
	twinned             bool     // a twin held the rounds' ids to their stacks
}

// stress is the boot's run, made by whichever stress spec runs first; a run
// that could not be made is tried again by the next spec.
var stress *stressRun

func stressed(ctx SpecContext) *stressRun {
	if stress == nil {
		stress = runStress(ctx)
	}
	stress.requireStressed()
	return stress
}

func runStress(ctx SpecContext) *stressRun {
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
	armFunctionTwin(tfs)

	r := &stressRun{twinned: twin != nil}
	r.problems, _ = harness.ReadUnderLoad(ctx, tfs, runtime.NumCPU()+1, true, allNodes, wellFormed, func(func() int) {
		deadline := time.Now().Add(stressDuration)
		for time.Now().Before(deadline) && ctx.Err() == nil {
			if twin != nil {
				twin.On()
			}
			harness.Must(tfs.Write("tracing_on", "1"), "turning tracing on")
			time.Sleep(2 * time.Second)
			harness.Must(tfs.Write("tracing_on", "0"), "turning tracing off")
			if twin != nil {
				twin.Off()
			}
			var rd round
			rd.stat, rd.statErr = parseStat(tfs)
			rd.blocks, rd.blocksErr = parseBlocks(tfs)
			rd.holdIDs(tfs)
			r.rounds = append(r.rounds, rd)
			recording := 0
			for _, cpu := range harness.CPUStats(tfs) {
				// The function tracer empties the buffer when tracing goes
				// on, so the entries are this round's.
				if cpu.Entries > 0 {
					recording++
				}
			}
			if recording > 1 {
				r.bothCPUs++
			}
			r.ids, r.drops, r.fullest = r.ids+rd.stat.Successes, r.drops+rd.stat.Drops, max(r.fullest, rd.stat.Entries)
			resetAsSetup(tfs, "0") // a refused reset is SM-RESET-02's
		}
	})
	AddReportEntry(contract.LabelStress, map[string]any{"resets": len(r.rounds), "ids": r.ids, "drops": r.drops, "fullest": r.fullest,
		"rounds where more than one CPU recorded": r.bothCPUs})
	return r
}

// holdIDs holds the round's ids to the stacks the twin recorded for the
// same calls, by stack_map_bin's records, when there is a twin.
func (rd *round) holdIDs(tfs *harness.TraceFS) {
	if twin == nil {
		return
	}
	text, err := tfs.Read("trace")
	harness.Must(err, "reading trace")
	data, err := os.ReadFile(tfs.Path(binNode))
	var bin fmtx.Bin
	if err == nil {
		bin, err = fmtx.ParseBin(data, binary.NativeEndian)
	}
	if rd.binErr = err; err != nil {
		return
	}
	hits, err := twin.Hits()
	harness.Must(err, "reading the twin's trace")
	rd.idsHeld, rd.idErr = harness.Identity(fmtx.ParseHits(text), hits, bin, rd.blocks)
	if errors.As(rd.idErr, new(*fmtx.BinError)) {
		rd.binDiffers, rd.idErr = rd.idErr, nil
	}
}

// requireStressed ends a spec whose run put the map under no load worth
// judging.
func (r *stressRun) requireStressed() {
	switch {
	case len(r.rounds) <= 3:
		harness.Unresolved("%d rounds in %v: the kernel was too slow to stress", len(r.rounds), stressDuration)
	case runtime.NumCPU() > 1 && r.bothCPUs == 0:
		harness.Unresolved("in %d rounds no two CPUs recorded in the same round: the writers never ran side by side", len(r.rounds))
	case r.ids == 0:
		harness.Unresolved("the map handed out no id under load: nothing was stressed")
	}
	if r.drops == 0 {
		harness.Note("judged only partly: the map never filled (at most %d entries), so its full-pool fallback was not exercised", r.fullest)
	}
}

var _ = describe("the stackmap under load", Label(contract.LabelStress), Serial, func() {
	harness.ReqIt("SM-ROBUST-01", "gives well-formed data from every node under the function tracer with stacks on every CPU, with resets in between", harness.Case("stress"), func(ctx SpecContext) {
		r := stressed(ctx)
		if len(r.problems) > 0 {
			atRest(harness.Root())
		}
		Expect(r.problems).To(BeEmpty(), harness.Clause("SM-ROBUST-01.1", "reading the nodes under load"))
	}, SpecTimeout(5*time.Minute))

	harness.ReqIt("SM-TRACE-01", "names in every id of every round under load the stack captured for its call", harness.Case("stress"), func(ctx SpecContext) {
		r := stressed(ctx)
		if !r.twinned {
			harness.Unsupported("no twin instance to hold the ids to their stacks")
		}
		held := 0
		for i, rd := range r.rounds {
			harness.Prerequisite("SM-BIN-02", rd.binErr)
			harness.Prerequisite("SM-BIN-03", rd.binDiffers)
			harness.FailOn(rd.idErr, harness.Clause("SM-TRACE-01.4", "round %d", i))
			held += rd.idsHeld
		}
		if held == 0 {
			harness.Unresolved("no id of %d rounds could be paired with the twin instance's record of the same call", len(r.rounds))
		}
	}, SpecTimeout(5*time.Minute))

	harness.ReqIt("SM-STAT-01", "gives the success rate its counters make after every round under load", harness.Case("stress"), func(ctx SpecContext) {
		for i, rd := range stressed(ctx).rounds {
			judgeStat(rd.stat, rd.statErr, fmt.Sprintf("round %d", i))
		}
	}, SpecTimeout(5*time.Minute))

	harness.ReqIt("SM-STAT-02", "never shows more entries than its capacity after a round under load", harness.Case("stress"), func(ctx SpecContext) {
		for i, rd := range stressed(ctx).rounds {
			harness.Prerequisite("SM-STAT-01", rd.statErr)
			judgeCapacity(rd.stat, fmt.Sprintf("round %d", i))
		}
	}, SpecTimeout(5*time.Minute))

	harness.ReqIt("SM-STAT-03", "counts exactly what the map holds after every round under load, however many CPUs wrote", harness.Case("stress"), func(ctx SpecContext) {
		for i, rd := range stressed(ctx).rounds {
			harness.Prerequisite("SM-STAT-01", rd.statErr)
			harness.Prerequisite("SM-TEXT-01", rd.blocksErr)
			checkCounters(rd.blocks, rd.stat, fmt.Sprintf("round %d", i))
		}
	}, SpecTimeout(5*time.Minute))
})

// traceStressFunctions sets the function tracer's filter to the
// stressFunctions this kernel has, and empties it when the spec ends (the
// suite's snapshot puts back any earlier filter after that).
func traceStressFunctions(tfs *harness.TraceFS) {
	if filterFunctions(tfs, stressFunctions) == 0 {
		harness.Unresolved("none of %v can be traced", stressFunctions)
	}
}

// filterFunctions sets the function tracer's filter to the functions of
// names this kernel can trace (one it lacks, or notrace, is refused and
// skipped), empties it when the spec ends, and says how many it took.
func filterFunctions(tfs *harness.TraceFS, names []string) (traced int) {
	DeferCleanup(tfs.Write, "set_ftrace_filter", "")
	for _, f := range names {
		if tfs.Append("set_ftrace_filter", f) == nil {
			traced++
		}
	}
	return traced
}
