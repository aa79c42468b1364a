// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"golang.org/x/sys/unix"

	fmtx "github.com/ftrace-stackmap/conformance/internal/stackmapfmt"
)

// A Twin is the ground truth of which stack each id names. Instances have
// no stackmap (SM-INST-01), so an instance that records the same events
// with the same stack source keeps the full stack of every hit whose
// stack the top level stores as an id. Both buffers use the counter
// clock, one global sequence, so the two records of each hit can be
// paired (fmtx.PairHits); sym-addr gives the twin's frames their
// addresses, to hold stack_map_bin's records to.
type Twin struct {
	Inst *TraceFS
	dir  string
}

// TwinName is the twin's instance.
const TwinName = "smct-twin"

// counterClock is trace_clock's global sequence.
const counterClock = "counter"

// A TwinSource is what the twin records: trace events, each with its
// stack from options/stacktrace or from a stacktrace trigger, or the
// function tracer on some functions, each call with its stack.
type TwinSource struct {
	Events    []string
	Trigger   bool
	Functions []string
}

// ErrNoTwin marks a kernel that cannot have a twin: no instances/, no
// counter clock.
var ErrNoTwin = errors.New("no twin instance")

// ArmTwin makes the twin of the running spec (OpenTwin), which its end
// removes. A kernel that cannot have one gives an error Is ErrNoTwin.
func ArmTwin(top *TraceFS, src TwinSource) (*Twin, error) {
	t, undo, err := OpenTwin(top, src)
	DeferCleanup(undo)
	if errors.Is(err, ErrNoTwin) {
		return nil, err
	}
	Must(err, "making the twin instance %s", TwinName)
	return t, nil
}

// OpenTwin makes the twin for callers outside a spec: the instance, on
// the counter clock with sym-addr, recording src; the top level is put
// on the counter clock too. Events record from now on; the function
// tracer only between On and Off, since it records the suite's own calls
// too. undo removes the instance and puts the top level's clock back,
// also after an error.
func OpenTwin(top *TraceFS, src TwinSource) (t *Twin, undo func(), err error) {
	var undos []func()
	undo = func() {
		for i := len(undos) - 1; i >= 0; i-- {
			undos[i]()
		}
	}
	if !top.Exists("instances") {
		return nil, undo, fmt.Errorf("%w: no instances/", ErrNoTwin)
	}
	clocks, err := top.Read("trace_clock")
	if err != nil || !strings.Contains(" "+strings.NewReplacer("[", "", "]", "").Replace(clocks)+" ", " "+counterClock+" ") {
		return nil, undo, fmt.Errorf("%w: trace_clock offers no %s clock (%q, %v)", ErrNoTwin, counterClock, strings.TrimSpace(clocks), err)
	}
	if err := top.Write("trace_clock", counterClock); err != nil {
		return nil, undo, err
	}
	undos = append(undos, func() { top.Write("trace_clock", ClockInUse(clocks)) })
	t = &Twin{Inst: top.Instance(TwinName), dir: top.Path("instances/" + TwinName)}
	removeDir(t.dir) // one an interrupted run left
	if err := os.Mkdir(t.dir, 0o755); err != nil {
		return nil, undo, err
	}
	undos = append(undos, func() { removeDir(t.dir) })
	// Frames with their addresses and offsets: the addresses to hold the
	// binary export to, the offsets to tell whose fault a difference is.
	steps := [][2]string{{"trace_clock", counterClock}, {"options/sym-addr", "1"}, {"options/sym-offset", "1"}}
	switch {
	case len(src.Functions) > 0:
		steps = append(steps, [2]string{"tracing_on", "0"})
	case !src.Trigger:
		steps = append(steps, [2]string{"options/stacktrace", "1"})
	}
	for _, s := range steps {
		if err := t.Inst.Write(s[0], s[1]); err != nil {
			return nil, undo, fmt.Errorf("writing %q to the twin's %s: %w", s[1], s[0], err)
		}
	}
	if len(src.Functions) > 0 {
		return t, undo, t.traceFunctions(src.Functions)
	}
	for _, e := range src.Events {
		if src.Trigger {
			if err := t.Inst.Append("events/"+e+"/trigger", "stacktrace"); err != nil {
				return nil, undo, fmt.Errorf("setting a stacktrace trigger on %s in the twin: %w", e, err)
			}
		}
		if err := t.Inst.Write("events/"+e+"/enable", "1"); err != nil {
			return nil, undo, fmt.Errorf("enabling %s in the twin: %w", e, err)
		}
	}
	return t, undo, t.Inst.Write("tracing_on", "1")
}

// traceFunctions puts the twin's function tracer on functions, each call
// with its stack. The stack callback is chosen from func_stack_trace when
// the tracer starts, which the top level has already set.
func (t *Twin) traceFunctions(functions []string) error {
	traced := 0
	for _, f := range functions {
		if t.Inst.Append("set_ftrace_filter", f) == nil {
			traced++
		}
	}
	if traced == 0 {
		return fmt.Errorf("the twin can trace none of %v", functions)
	}
	if err := t.Inst.Write("current_tracer", "function"); err != nil {
		return fmt.Errorf("setting the twin's function tracer: %w", err)
	}
	return t.Inst.Write("options/func_stack_trace", "1")
}

// On turns the twin's tracing on, before the top level's.
func (t *Twin) On() { Must(t.Inst.Write("tracing_on", "1"), "turning the twin's tracing on") }

// Off turns the twin's tracing off, after the top level's.
func (t *Twin) Off() { Must(t.Inst.Write("tracing_on", "0"), "turning the twin's tracing off") }

// Clear empties the twin's buffer, as a reset empties the top level's: an
// id is held only to the hits since the map's last reset.
func (t *Twin) Clear() error { return t.Inst.Write("trace", "") }

// Hits reads the twin's trace.
func (t *Twin) Hits() ([]fmtx.Hit, error) {
	text, err := t.Inst.Read("trace")
	return fmtx.ParseHits(text), err
}

// Identity holds the ids of the top level's hits to the stacks the twin
// recorded for the same hits (twinHits, read with Hits), by the records
// of stack_map_bin and the blocks of stack_map (fmtx.CheckIdentity), and
// the ids of function tracer events to the call their own fields name
// (fmtx.CheckCalls); it counts the ids it judged for the run's report. An
// error that is a *fmtx.BinError blames the binary export, not the id.
func Identity(topHits, twinHits []fmtx.Hit, bin fmtx.Bin, blocks []fmtx.Block) (judged int, err error) {
	judged, err = fmtx.CheckIdentity(fmtx.PairHits(topHits, twinHits), bin, blocks)
	calls, callErr := fmtx.CheckCalls(topHits, twinHits, blocks)
	var binErr *fmtx.BinError
	if err == nil || (callErr != nil && errors.As(err, &binErr)) {
		err = callErr
	}
	invariants.mu.Lock()
	invariants.idsHeld += judged + calls
	invariants.mu.Unlock()
	return judged + calls, err
}

// removeDir removes an instance if it is there. The kernel refuses with
// EBUSY while the instance is referenced: a refusal is retried for two
// seconds; the suite's restore removes one that stays.
func removeDir(dir string) {
	for range 10 {
		if err := unix.Rmdir(dir); err != unix.EBUSY {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// ClockInUse is the clock trace_clock marks in use ("[local] global ...").
func ClockInUse(listing string) string {
	_, rest, ok := strings.Cut(listing, "[")
	if !ok {
		return strings.TrimSpace(listing)
	}
	clock, _, _ := strings.Cut(rest, "]")
	return clock
}
