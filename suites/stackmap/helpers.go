// SPDX-License-Identifier: GPL-2.0-only

package stackmap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/sys/unix"

	"github.com/ftrace-stackmap/conformance/harness"
	fmtx "github.com/ftrace-stackmap/conformance/internal/stackmapfmt"
)

// The stack source: the workload's runs, each one fork, one exec and one
// exit, each event with a stack. Its counts are exact, it needs no function
// tracer (slow to switch on under emulation), and its three call paths give
// the map several distinct stacks, so their order can be checked.
const (
	execEvent    = "sched/sched_process_exec"
	execEnable   = "events/" + execEvent + "/enable"
	workloadRuns = 5
	// maxWorkloadRuns bounds a workload kept going until something happens.
	maxWorkloadRuns = 500
)

var stackEvents = []string{execEvent, "sched/sched_process_fork", "sched/sched_process_exit"}

// quiet puts the top level in a known state for one spec: nop tracer,
// tracing off, plain trace output. Everything is put back when it ends.
func quiet(tfs *harness.TraceFS) {
	harness.Require(tfs, harness.Event(execEvent))
	harness.Set(tfs, "tracing_on", "0")
	harness.Set(tfs, "current_tracer", "nop")
	for _, o := range []string{"options/raw", "options/hex", "options/bin"} {
		if tfs.Exists(o) {
			harness.Set(tfs, o, "0")
		}
	}
}

// resetMap empties the map as a precondition. Whether reset itself behaves
// is the SM-RESET specs' question: a refused reset is SM-RESET-02's, and
// UNRESOLVED for every other spec.
func resetMap(tfs *harness.TraceFS) {
	resetAsSetup(tfs, "0")
	harness.Must(tfs.Write("trace", ""), "clearing trace")
}

// twin is the running spec's ground truth of which stack each id names
// (harness.Twin), nil when the spec has none.
var twin *harness.Twin

// armTwin gives the running spec a twin that records events with their
// full stacks, from now until the spec ends. A kernel that cannot have
// one (no instances) has its ids held to blocks only, as the note says.
func armTwin(tfs *harness.TraceFS, events []string) {
	useTwin(harness.ArmTwin(tfs, harness.TwinSource{Events: events}))
}

// useTwin makes t the running spec's twin.
func useTwin(t *harness.Twin, err error) {
	if err != nil {
		harness.Note("ids held to blocks but not to their stacks: no twin instance (%v)", err)
		return
	}
	twin = t
	DeferCleanup(func() { twin = nil })
}

// resetAsSetup resets the map as a step of a spec about what a reset
// leaves: a refused reset is SM-RESET-02's failure, not this spec's.
func resetAsSetup(tfs *harness.TraceFS, input string) {
	if err := tfs.Write(mapNode, input); err != nil {
		harness.Prerequisite("SM-RESET-02", fmt.Errorf("writing %q to stack_map with tracing off: %w", input, err))
	}
	if twin != nil {
		// An id is held to the hits since the map's last reset.
		harness.Must(twin.Clear(), "clearing the twin's trace")
	}
}

// record empties the map, runs the workload n times with stackmap and a
// stack on every sched_process_exec, and returns with tracing off.
func record(tfs *harness.TraceFS, n int) {
	armRecording(tfs)
	traceWorkload(tfs, n)
	requireStackIDs(tfs, n)
}

// armRecording sets up what record traces with: nop tracer, stackmap on,
// an empty map, stacktrace and the workload's events on, tracing off, and
// the twin that records the same events with their full stacks.
func armRecording(tfs *harness.TraceFS) {
	quiet(tfs)
	harness.Set(tfs, optionNode, "1")
	resetMap(tfs)
	harness.Set(tfs, "options/stacktrace", "1")
	var events []string
	for _, e := range stackEvents {
		if tfs.Exists("events/" + e + "/enable") {
			harness.Set(tfs, "events/"+e+"/enable", "1")
			events = append(events, e)
		}
	}
	armTwin(tfs, events)
}

// requireStackIDs checks that a recorded workload put <stack_id N> lines in
// trace: without them SM-OPT-03 is broken, and every spec built on a
// recorded map is UNRESOLVED.
func requireStackIDs(tfs *harness.TraceFS, n int) {
	if ids := fmtx.ParseTrace(readTrace(tfs)).IDs; len(ids) == 0 {
		harness.Prerequisite("SM-OPT-03", fmt.Errorf("no line of trace ends in <stack_id N> after %d stack-traced sched_process_exec events with stackmap on", n))
	}
}

// traceWorkload runs the workload n times with tracing on, then turns
// tracing off.
func traceWorkload(tfs *harness.TraceFS, n int) {
	traceWorkloadUntil(tfs, n, func() bool { return true })
}

// traceWorkloadUntil runs the workload with tracing on, n times and then
// until done (at most maxWorkloadRuns times), then turns tracing off.
func traceWorkloadUntil(tfs *harness.TraceFS, n int, done func() bool) {
	By("running the workload with tracing on")
	harness.Must(tfs.Write("tracing_on", "1"), "turning tracing on")
	err := harness.RunWorkload(n)
	for runs := n; err == nil && runs < maxWorkloadRuns && !done(); runs++ {
		err = harness.RunWorkload(1)
	}
	harness.Must(tfs.Write("tracing_on", "0"), "turning tracing off")
	harness.Must(err, "running the workload")
}

// parseBlocks reads and parses stack_map. A read that fails, a block that
// is not well-formed or out of order is SM-TEXT-01's.
func parseBlocks(tfs *harness.TraceFS) ([]fmtx.Block, error) {
	text, err := tfs.Read(mapNode)
	if err != nil {
		return nil, wrap(err, "reading stack_map")
	}
	blocks, err := fmtx.ParseText(text)
	if err == nil {
		err = fmtx.CheckOrder(blocks)
	}
	return blocks, err
}

// mapBlocks is parseBlocks for a spec that needs the blocks: a text
// export that does not parse, or out of order, breaks SM-TEXT-01 in the
// state this spec reached.
func mapBlocks(tfs *harness.TraceFS) []fmtx.Block {
	text, err := tfs.Read(mapNode)
	broken("reading stack_map", harness.Clause("SM-TEXT-01.1", "reading stack_map"), err)
	blocks, err := fmtx.ParseText(text)
	broken("reading stack_map", harness.Clause("SM-TEXT-01.1", "stack_map"), err)
	broken("reading stack_map", harness.Clause("SM-TEXT-01.2", "stack_map"), fmtx.CheckOrder(blocks))
	return blocks
}

// readBlocks is mapBlocks for a spec that looks blocks up by id: an id
// heading two blocks is SM-TEXT-02's.
func readBlocks(tfs *harness.TraceFS) []fmtx.Block {
	blocks := mapBlocks(tfs)
	broken("reading stack_map", harness.Clause("SM-TEXT-02.1", "stack_map"), fmtx.CheckUnique(blocks))
	return blocks
}

// parseStat reads and parses stack_map_stat. What is wrong with it is
// SM-STAT-01's: that requirement's specs judge the error (judgeStat),
// every other spec is UNRESOLVED for it (readStat).
func parseStat(tfs *harness.TraceFS) (fmtx.Stat, error) {
	text, err := tfs.Read(statNode)
	if err != nil {
		return fmtx.Stat{}, wrap(err, "reading stack_map_stat")
	}
	st, err := fmtx.ParseStat(text)
	return st, wrap(err, "stack_map_stat:\n"+text)
}

// judgeStat is SM-STAT-01's judgement of what parseStat gave: the keys,
// when success_rate is shown, and its value. where says which reading it
// was ("round 3"), or "".
func judgeStat(st fmtx.Stat, err error, where string) {
	harness.FailOn(err, harness.Clause("SM-STAT-01.1", "%s", where))
	harness.FailOn(st.CheckRateShown(), harness.Clause("SM-STAT-01.2", "%s", where))
	harness.FailOn(st.CheckRateValue(), harness.Clause("SM-STAT-01.3", "%s", where))
}

// judgeCapacity is SM-STAT-02's judgement of the sizes: B a power of two
// in range, T = 2B, A <= B.
func judgeCapacity(st fmtx.Stat, where string) {
	harness.FailOn(st.CheckBounds(), harness.Clause("SM-STAT-02.1", "%s", where))
	harness.FailOn(st.CheckTableSize(), harness.Clause("SM-STAT-02.2", "%s", where))
	harness.FailOn(st.CheckEntries(), harness.Clause("SM-STAT-02.3", "%s", where))
}

// checkCounters is SM-STAT-03's check of the counters against the blocks:
// A is the number of blocks, and their ref counts add up to S.
func checkCounters(blocks []fmtx.Block, st fmtx.Stat, where string) {
	Expect(st.Entries).To(Equal(int64(len(blocks))), harness.Clause("SM-STAT-03.2", "%sentries %d, stack_map has %d blocks", at(where), st.Entries, len(blocks)))
	refs := fmtx.RefSum(blocks)
	Expect(refs).To(Equal(st.Successes), harness.Clause("SM-STAT-03.3", "%sref counts add up to %d, successes %d", at(where), refs, st.Successes))
}

// at is where as the head of a message.
func at(where string) string {
	if where == "" {
		return ""
	}
	return where + ": "
}

// readStat is parseStat for a spec that needs the statistics: what is
// wrong with them, success_rate included, is SM-STAT-01's.
func readStat(tfs *harness.TraceFS) fmtx.Stat {
	st, err := parseStat(tfs)
	broken("reading stack_map_stat", harness.Clause("SM-STAT-01.1", ""), err)
	broken("reading stack_map_stat", harness.Clause("SM-STAT-01.2", ""), st.CheckRateShown())
	broken("reading stack_map_stat", harness.Clause("SM-STAT-01.3", ""), st.CheckRateValue())
	return st
}

// binData reads stack_map_bin whole; ENOMEM at open is allowed by the
// contract, and makes the spec UNSUPPORTED.
func binData(tfs *harness.TraceFS) ([]byte, error) {
	return binRead(os.ReadFile(tfs.Path(binNode)))
}

// binRead is binData for a read already made.
func binRead(data []byte, err error) ([]byte, error) {
	if errors.Is(err, fs.ErrNotExist) {
		harness.Prerequisite("SM-NODE-02", err) // a missing export is SM-NODE-02's
	}
	if harness.Errno(err) == unix.ENOMEM {
		harness.Unsupported("stack_map_bin open() gave ENOMEM: the snapshot of a map this large does not fit")
	}
	return data, wrap(err, "reading stack_map_bin")
}

// readBinFile is binData for a spec that needs the file: a read that fails
// is SM-BIN-02's (the records fill the file).
func readBinFile(tfs *harness.TraceFS) []byte {
	data, err := binData(tfs)
	harness.Prerequisite("SM-BIN-02", err)
	return data
}

// readBin reads stack_map_bin's records. Which header it has is SM-BIN-01's
// question alone: records are read whatever the magic says, unless the
// header is in the wrong byte order (SM-BIN-01); records that do not parse
// are SM-BIN-02's.
func readBin(tfs *harness.TraceFS) fmtx.Bin {
	return parseBin(readBinFile(tfs))
}

// parseBin is readBin for bytes already read.
func parseBin(data []byte) fmtx.Bin {
	bin, err := binRecords(data)
	harness.Prerequisite("SM-BIN-02", err)
	return bin
}

// binRecords parses stack_map_bin's records: SM-BIN-02's check, whose
// error says what is wrong. A header in the wrong byte order is SM-BIN-01's.
func binRecords(data []byte) (fmtx.Bin, error) {
	bin, err := fmtx.ParseBin(data, binary.NativeEndian)
	var header *fmtx.HeaderError
	if errors.As(err, &header) {
		harness.Prerequisite("SM-BIN-01", err)
	}
	return bin, err
}

// statExport returns an export's mode, owner and size. A stat that fails
// is SM-NODE-02's: the export is missing, or cannot be looked at.
func statExport(tfs *harness.TraceFS, node string) harness.NodeInfo {
	info, err := tfs.Stat(node)
	harness.Prerequisite("SM-NODE-02", err)
	return info
}

// readTrace returns trace's text; reading it is a setup step. A line of
// no shape the contract defines breaks the requirement that owns that
// shape (fmtx.CheckTrace): this spec cannot go on, UNRESOLVED, naming it.
func readTrace(tfs *harness.TraceFS) string {
	text, _ := readTraceOf(tfs, "")
	return text
}

// readTraceOf is readTrace in the spec of requirement own: it returns the
// first shape problem that own owns, for that spec to judge, before any
// other owner's.
func readTraceOf(tfs *harness.TraceFS, own string) (string, error) {
	tr, err := readTraceAnalysed(tfs)
	harness.Must(err, "reading trace")
	text, problems := tr.text, tr.shapes
	for _, p := range problems {
		if p.Owner == own {
			return text, p
		}
	}
	if len(problems) > 0 {
		broken("reading trace", shapeClause(problems[0].Owner), problems[0])
	}
	return text, nil
}

// wrap adds what was being done to an error, keeping nil nil.
func wrap(err error, what string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// errText names an error for a report: "success" rather than Go's <nil>.
func errText(err error) string {
	if err == nil {
		return "success"
	}
	return err.Error()
}
