// SPDX-License-Identifier: GPL-2.0-only

package stackmap

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"golang.org/x/sys/unix"

	"github.com/ftrace-stackmap/conformance/harness"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	fmtx "github.com/ftrace-stackmap/conformance/internal/stackmapfmt"
)

// After every stackmap spec, before its cleanups put tracefs back, the
// state it left is a checkpoint: whatever the spec did (a fill, a drop, a
// reset, a tracer switch, an instance made and removed), the clauses that
// hold in every state must hold there too.
// A spec that failed is judged too: what its state breaks is put down to
// that failure, and a later spec that finds it still broken is not blamed.
var _ = AfterEach(func() {
	spec := CurrentSpecReport()
	if !slices.Contains(spec.Labels(), contract.LabelStackmap) || spec.State.Is(types.SpecStateSkipped) ||
		(spec.State.Is(types.SpecStateFailureStates) && !spec.State.Is(types.SpecStateFailed)) {
		return // skipped, or cut short: no state to judge
	}
	tfs := harness.Root()
	if featureErr(tfs) != nil {
		return
	}
	judge(tfs, true, "after the spec's last action")
})

// checkpoint judges the always-true clauses in the state the kernel shows
// now, after action, for the running spec to go on with.
func checkpoint(tfs *harness.TraceFS, action string, args ...any) {
	judge(tfs, false, action, args...)
}

// judge judges the always-true clauses in the state the kernel shows now,
// after action: at the end of a spec's body (ended) or for the spec to go
// on with. It turns tracing off to read the exports at one moment (the
// spec's cleanups restore it).
func judge(tfs *harness.TraceFS, ended bool, action string, args ...any) {
	cp := harness.NewCheckpoint(action, args...)
	cp.Whole()
	if ended {
		cp.AfterSpec()
	}
	defer cp.Done()
	if on, err := tfs.ReadTrimmed("tracing_on"); err != nil || on != "0" {
		harness.Set(tfs, "tracing_on", "0")
	}
	tr, err := readTraceAnalysed(tfs)
	harness.Must(err, "reading trace at a checkpoint")
	if problems := tr.shapes; len(problems) > 0 {
		// A shape broken once says it; the rest would repeat it.
		cp.Hold(shapeClause(problems[0].Owner), problems[0])
		keepTraceAround(tr.text, problems[0].Line)
	}

	// The binary export first: when it is what the last checkpoint read,
	// the map is as it was then, and so is its text (mapText).
	binData, binErr := os.ReadFile(tfs.Path(binNode))
	text, err := mapText(tfs, binData, binErr)
	harness.Must(err, "reading stack_map at a checkpoint")
	blocks, textErr := fmtx.ParseText(text)
	cp.Hold(harness.Clause("SM-TEXT-01.1", "stack_map"), textErr)
	if textErr == nil {
		textErr = fmtx.CheckOrder(blocks)
		cp.Hold(harness.Clause("SM-TEXT-01.2", "stack_map"), textErr)
	}
	if textErr == nil {
		textErr = fmtx.CheckUnique(blocks)
		cp.Hold(harness.Clause("SM-TEXT-02.1", "stack_map"), textErr)
	}

	statText, err := tfs.Read(statNode)
	harness.Must(err, "reading stack_map_stat at a checkpoint")
	st, statErr := fmtx.ParseStat(statText)
	cp.Hold(harness.Clause("SM-STAT-01.1", "stack_map_stat"), statErr)
	if statErr == nil {
		cp.Hold(harness.Clause("SM-STAT-01.2", ""), st.CheckRateShown())
		cp.Hold(harness.Clause("SM-STAT-01.3", ""), st.CheckRateValue())
		holdBootSize(cp, st)
	}
	// A count or a size the kernel already shows wrong is judged once: the
	// clauses that compare it with something else wait for it.
	sizeErr, entriesErr := statErr, statErr
	if statErr == nil {
		sizeErr, entriesErr = st.CheckTableSize(), st.CheckEntries()
		cp.Hold(harness.Clause("SM-STAT-02.2", ""), sizeErr)
		cp.Hold(harness.Clause("SM-STAT-02.3", ""), entriesErr)
	}
	if entriesErr == nil && textErr == nil {
		cp.Hold(harness.Clause("SM-STAT-03.2", ""), equal("entries", st.Entries, "blocks in stack_map", int64(len(blocks))))
	}
	if statErr == nil && textErr == nil {
		cp.Hold(harness.Clause("SM-STAT-03.3", ""), equal("the blocks' ref counts add up to", int64(fmtx.RefSum(blocks)), "successes", st.Successes))
		holdIDs(cp, tr.ids, blocks, st, sizeErr == nil)
	}
	if textErr == nil {
		if bin, ok := holdBinary(cp, binData, binErr, blocks); ok && twin != nil {
			_, err := identity(tr, bin, blocks)
			if errors.As(err, new(*fmtx.BinError)) {
				err = nil // the binary export's fault, which SM-BIN-03's specs judge
			}
			cp.Hold(harness.Clause("SM-TRACE-01.4", ""), err)
		}
	}
}

// brokenTrace is the file that keeps, for the host, the lines of trace
// around the first broken shape a checkpoint found in the boot.
const brokenTrace = "trace-at-broken-shape.txt"

var keptTrace bool

// keepTraceAround keeps the lines of text before and after line (1-based),
// once per boot: the checkpoint's message quotes one line, and a reader
// needs what came before it to tell a kernel's fault from a reading of it.
func keepTraceAround(text string, line int) {
	if keptTrace || !harness.Capturing() {
		return
	}
	keptTrace = true
	lines := strings.Split(text, "\n")
	from, to := max(0, line-300), min(len(lines), line+50)
	harness.Capture(brokenTrace, []byte(fmt.Sprintf("# trace, lines %d to %d of %d; the broken shape is at line %d\n%s\n",
		from+1, to, len(lines), line, strings.Join(lines[from:to], "\n"))))
}

// identity holds every id of trace that the running spec's twin recorded
// too to the stack the twin recorded for that hit (SM-TRACE-01.4). A state
// judged already (the same trace, twin and records) is not judged again:
// a full map's trace is megabytes, slow to pair under emulation.
func identity(tr *analysedTrace, bin fmtx.Bin, blocks []fmtx.Block) (judged int, err error) {
	hits := twinHits()
	if twinRecordsIDs(hits) != nil {
		return 0, nil // no stack to judge by: SM-INST-01's, which its specs judge
	}
	if tr.hits == nil {
		tr.hits = fmtx.ParseHits(tr.text)
	}
	if c := &lastIdentity; c.trace == tr && c.twinKey == lastTwin.key && lastTwin.key != "" &&
		slices.EqualFunc(c.records, bin.Records, sameRecord) && slices.EqualFunc(c.blocks, blocks, sameBlock) {
		return c.judged, c.err
	}
	judged, err = harness.Identity(tr.hits, hits, bin, blocks)
	lastIdentity = identityResult{tr, lastTwin.key, bin.Records, blocks, judged, err}
	return judged, err
}

// identityResult is the last state identity judged, and what it found.
type identityResult struct {
	trace   *analysedTrace
	twinKey string
	records []fmtx.Record
	blocks  []fmtx.Block
	judged  int
	err     error
}

var lastIdentity identityResult

// sameRecord says whether two records of stack_map_bin are the same.
func sameRecord(a, b fmtx.Record) bool {
	return a.ID == b.ID && a.Ref == b.Ref && slices.Equal(a.Addrs, b.Addrs)
}

// sameBlock says whether two blocks of stack_map are the same.
func sameBlock(a, b fmtx.Block) bool {
	return a.ID == b.ID && a.Ref == b.Ref && slices.Equal(a.Frames, b.Frames)
}

// lastTwin is the twin's trace read last, parsed, and what it was made of
// (traceKey).
var lastTwin struct {
	key  string
	hits []fmtx.Hit
}

// twinHits reads the twin's trace, or gives back the hits read last when
// nothing that makes them has changed since.
func twinHits() []fmtx.Hit {
	key := traceKey(twin.Inst)
	if key == "" || key != lastTwin.key {
		hits, err := twin.Hits()
		harness.Must(err, "reading the twin's trace")
		lastTwin.key, lastTwin.hits = key, hits
	}
	return lastTwin.hits
}

// shapeClause is the clause a line of trace of no defined shape breaks,
// by the requirement that owns the shape it comes nearest to.
func shapeClause(owner string) func() string {
	if owner == fmtx.OwnerIDLine {
		return harness.Clause("SM-TRACE-01.3", "trace")
	}
	return harness.Clause("SM-OPT-03.3", "trace")
}

// broken judges, in the state the running spec reached, an always-true
// clause that a step of it found broken (err): like a checkpoint's, the
// clause fails its own requirement and leaves any other spec UNRESOLVED.
func broken(step string, clause func() string, err error) {
	if err == nil {
		return
	}
	cp := harness.NewCheckpoint("%s", step)
	cp.Hold(clause, err)
	cp.Done()
}

// holdBootSize holds the capacity to what this boot's command line asks
// for: 2^14 without ftrace_stackmap.bits, the default with a bare one,
// and the clamped value given.
func holdBootSize(cp *harness.Checkpoint, st fmtx.Stat) {
	value, set, bare := harness.KernelParam(bitsParam)
	switch {
	case set:
		bits := expectedBits(value)
		cp.Hold(harness.Clause("SM-BOOT-02.1", "booted with %s=%s", bitsParam, value), equal("capacity", st.Capacity, fmt.Sprintf("2^%d", bits), int64(1)<<bits))
	case bare:
		cp.Hold(harness.Clause("SM-BOOT-03.1", "booted with a bare %s", bitsParam), equal("capacity", st.Capacity, "the default", int64(1)<<defaultBits))
	default:
		cp.Hold(harness.Clause("SM-STAT-02.1", "booted without %s", bitsParam), equal("capacity", st.Capacity, "the default", int64(1)<<defaultBits))
	}
}

// holdIDs holds every <stack_id N> of trace to the map: a block N, and N
// below table_size when table_size itself is right (sized). Under v3 a
// reset keeps the ring buffer, and ids from before it name nothing
// (SM-RESET-05): there only the bound is held.
func holdIDs(cp *harness.Checkpoint, ids []int, blocks []fmtx.Block, st fmtx.Stat, sized bool) {
	has := map[int]bool{}
	for _, b := range blocks {
		has[b.ID] = true
	}
	for _, id := range ids {
		if sized && int64(id) >= st.TableSize {
			cp.Hold(harness.Clause("SM-TRACE-01.2", "<stack_id %d>", id), fmt.Errorf("not below table_size %d", st.TableSize))
			return
		}
		if !has[id] && harness.Profile() != contract.ProfileV3 {
			cp.Hold(harness.Clause("SM-TRACE-01.1", "trace has <stack_id %d>", id), errors.New("stack_map has no such block"))
			return
		}
	}
}

// lastMap is the binary export a checkpoint read last, and the text of
// stack_map read with it.
var lastMap struct {
	bin  []byte
	text string
}

// mapText reads stack_map, or gives back the text read last when the
// binary export read just before is byte for byte the one read with it:
// tracing is off at a checkpoint, so the map is the one that text was
// printed from. Printing a full map symbolizes a thousand stacks, seconds
// under emulation, and a checkpoint follows every spec; the text of each
// state the map reaches is still read, and judged, once.
func mapText(tfs *harness.TraceFS, bin []byte, binErr error) (string, error) {
	if binErr == nil && len(bin) > 0 && lastMap.bin != nil && bytes.Equal(bin, lastMap.bin) {
		return lastMap.text, nil
	}
	text, err := tfs.Read(mapNode)
	if err == nil && binErr == nil {
		lastMap.bin, lastMap.text = bin, text
	}
	return text, err
}

// holdBinary holds stack_map_bin, read just before the text, to its
// header, its records and the text's blocks; it returns the records when
// they could be walked and agree with the text.
func holdBinary(cp *harness.Checkpoint, data []byte, err error, blocks []fmtx.Block) (fmtx.Bin, bool) {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		cp.Hold(harness.Clause("SM-NODE-02.1", "stack_map_bin"), err)
		return fmtx.Bin{}, false
	case harness.Errno(err) == unix.ENOMEM:
		return fmtx.Bin{}, false // allowed at open for a map too large to snapshot
	}
	harness.Must(err, "reading stack_map_bin at a checkpoint")
	_, err = fmtx.CheckHeader(data, harness.Profile(), binary.NativeEndian)
	cp.Hold(harness.Clause("SM-BIN-01.1", "stack_map_bin"), err)
	if err != nil {
		return fmtx.Bin{}, false // a header not ours: its records cannot be walked
	}
	bin, err := fmtx.ParseBin(data, binary.NativeEndian)
	cp.Hold(harness.Clause("SM-BIN-02.1", "stack_map_bin"), err)
	if err != nil {
		return fmtx.Bin{}, false
	}
	err = agree(bin, blocks)
	cp.Hold(harness.Clause("SM-BIN-03.1", "stack_map_bin against stack_map"), err)
	return bin, err == nil
}

// agree says how the binary's records differ from the text's blocks, or
// nil: ids, depths and ref counts, record for record.
func agree(bin fmtx.Bin, blocks []fmtx.Block) error {
	if len(bin.Records) != len(blocks) {
		return fmt.Errorf("%d records, stack_map has %d blocks", len(bin.Records), len(blocks))
	}
	for i, r := range bin.Records {
		if b := blocks[i]; int(r.ID) != b.ID || int(r.Nr) != b.Depth || int(r.Ref) != b.Ref {
			return fmt.Errorf("record %d: id %d depth %d ref %d, the text's block: id %d depth %d ref %d", i, r.ID, r.Nr, r.Ref, b.ID, b.Depth, b.Ref)
		}
	}
	return nil
}

// equal is nil when two counts agree, else says both.
func equal(what string, got int64, want string, wantN int64) error {
	if got == wantN {
		return nil
	}
	return fmt.Errorf("%s %d, %s %d", what, got, want, wantN)
}

// analysedTrace is a text of trace with what the checks find in it.
type analysedTrace struct {
	text   string
	shapes []*fmtx.ShapeError
	ids    []int
	hits   []fmtx.Hit // its events with their stacks, once identity needs them
}

// lastTrace is the text of trace read last, what it was read from, and
// its analysis once made: a full map's trace is megabytes, which under
// emulation take seconds to check.
var lastTrace struct {
	key, text string
	analysed  *analysedTrace
}

// readTraceAnalysed is traceText with its shape problems and ids, worked
// out once per text read.
func readTraceAnalysed(tfs *harness.TraceFS) (*analysedTrace, error) {
	text, err := traceText(tfs)
	if err != nil {
		return nil, err
	}
	if a := lastTrace.analysed; a != nil && len(a.text) == len(text) && a.text == text {
		return a, nil
	}
	a := &analysedTrace{text: text, shapes: fmtx.CheckTrace(text), ids: fmtx.ParseTrace(text).IDs}
	lastTrace.analysed = a
	return a, nil
}

// traceText reads trace, or gives back the text read last when nothing
// that makes it has changed since: every CPU's ring-buffer counts (its
// clock aside) and the output options. Under emulation a full map's trace
// takes seconds to print, and a checkpoint after every spec would print
// the same one again and again.
func traceText(tfs *harness.TraceFS) (string, error) {
	key := traceKey(tfs)
	if key != "" && key == lastTrace.key {
		return lastTrace.text, nil
	}
	text, err := tfs.Read("trace")
	if err == nil {
		lastTrace.key, lastTrace.text = key, text
	}
	return text, err
}

// traceKey is what trace's text is made of, or "" when it cannot be told.
func traceKey(tfs *harness.TraceFS) string {
	var b strings.Builder
	for cpu := 0; ; cpu++ {
		text, err := tfs.Read(fmt.Sprintf("per_cpu/cpu%d/stats", cpu))
		if errors.Is(err, fs.ErrNotExist) && cpu > 0 {
			break
		}
		if err != nil {
			return ""
		}
		for _, l := range harness.Lines(text) {
			if !strings.HasPrefix(l, "now ts:") {
				b.WriteString(l + "\n")
			}
		}
	}
	opts, err := tfs.Read("trace_options")
	if err != nil {
		return ""
	}
	return b.String() + opts
}
