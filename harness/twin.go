// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
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
// with a stack source keeps the full stack of every hit whose stack the
// top level stores as an id. Both buffers use the counter clock, one
// global sequence, so the two records of each hit can be paired
// (fmtx.PairHits); sym-addr gives the twin's frames their addresses, to
// hold stack_map_bin's records to.
type Twin struct {
	Inst *TraceFS
	dir  string
}

// TwinName is the twin's instance.
const TwinName = "smct-twin"

// counterClock is trace_clock's global sequence.
const counterClock = "counter"

// ArmTwin makes the twin of the running spec for trace events: the
// instance with events enabled, each with its stack, recording from now
// until the spec ends; the top level is put on the counter clock too. It
// returns an error, having changed nothing, when this kernel cannot have
// one (no instances/, no counter clock).
func ArmTwin(top *TraceFS, events []string) (*Twin, error) {
	return armEventTwin(top, events, "options/stacktrace", "1")
}

// ArmTriggerTwin is ArmTwin for events whose stacks come from a
// stacktrace trigger on each.
func ArmTriggerTwin(top *TraceFS, events []string) (*Twin, error) {
	return armEventTwin(top, events, "", "")
}

// armEventTwin makes an event twin whose stack source is node set to
// value, or a stacktrace trigger on each event when node is "".
func armEventTwin(top *TraceFS, events []string, node, value string) (*Twin, error) {
	t, err := newTwin(top)
	if err != nil {
		return nil, err
	}
	if node != "" {
		Must(t.Inst.Write(node, value), "turning on the twin's %s", node)
	}
	for _, e := range events {
		if node == "" {
			Must(t.Inst.Append("events/"+e+"/trigger", "stacktrace"), "setting a stacktrace trigger on %s in the twin", e)
		}
		Must(t.Inst.Write("events/"+e+"/enable", "1"), "enabling %s in the twin", e)
	}
	Must(t.Inst.Write("tracing_on", "1"), "turning the twin's tracing on")
	return t, nil
}

// ArmFunctionTwin makes the twin of the running spec for the function
// tracer with func_stack_trace, on the functions given (a few of the top
// level's: each doubles the cost of its calls). Its tracing is off until
// On: the function tracer records the suite's own calls as well.
func ArmFunctionTwin(top *TraceFS, functions []string) (*Twin, error) {
	t, err := newTwin(top)
	if err != nil {
		return nil, err
	}
	Must(t.Inst.Write("tracing_on", "0"), "turning the twin's tracing off")
	traced := 0
	for _, f := range functions {
		if t.Inst.Append("set_ftrace_filter", f) == nil {
			traced++
		}
	}
	if traced == 0 {
		Unresolved("the twin can trace none of %v", functions)
	}
	Must(t.Inst.Write("current_tracer", "function"), "setting the twin's function tracer")
	Must(t.Inst.Write("options/func_stack_trace", "1"), "turning on the twin's func_stack_trace")
	return t, nil
}

// newTwin makes the instance, on the counter clock with sym-addr, and the
// top level's counter clock; the spec's end puts both back.
func newTwin(top *TraceFS) (*Twin, error) {
	if !top.Exists("instances") {
		return nil, fmt.Errorf("no instances/")
	}
	clocks, err := top.Read("trace_clock")
	if err != nil || !strings.Contains(" "+strings.NewReplacer("[", "", "]", "").Replace(clocks)+" ", " "+counterClock+" ") {
		return nil, fmt.Errorf("trace_clock offers no %s clock (%q, %v)", counterClock, strings.TrimSpace(clocks), err)
	}
	SetClock(top, counterClock)
	t := &Twin{Inst: top.Instance(TwinName), dir: top.Path("instances/" + TwinName)}
	removeDir(t.dir) // one an interrupted run left
	Must(os.Mkdir(t.dir, 0o755), "making the twin instance %s", TwinName)
	DeferCleanup(func() { removeDir(t.dir) })
	Must(t.Inst.Write("trace_clock", counterClock), "putting the twin on the counter clock")
	Must(t.Inst.Write("options/sym-addr", "1"), "turning on the twin's sym-addr")
	return t, nil
}

// On turns the twin's tracing on, before the top level's.
func (t *Twin) On() { Must(t.Inst.Write("tracing_on", "1"), "turning the twin's tracing on") }

// Off turns the twin's tracing off, after the top level's.
func (t *Twin) Off() { Must(t.Inst.Write("tracing_on", "0"), "turning the twin's tracing off") }

// Clear empties the twin's buffer, as a reset empties the top level's: an
// id is held only to the hits since the map's last reset.
func (t *Twin) Clear() { Must(t.Inst.Write("trace", ""), "clearing the twin's trace") }

// Hits reads the twin's trace.
func (t *Twin) Hits() []fmtx.Hit {
	text, err := t.Inst.Read("trace")
	Must(err, "reading the twin's trace")
	return fmtx.ParseHits(text)
}

// Identity holds the ids of the top level's hits to the stacks the twin
// recorded for the same hits (twinHits, read with Hits), by the records
// of stack_map_bin (fmtx.CheckIdentity), and counts the ids it judged
// for the run's report.
func Identity(topHits, twinHits []fmtx.Hit, bin fmtx.Bin) (judged int, err error) {
	judged, err = fmtx.CheckIdentity(fmtx.PairHits(topHits, twinHits), bin)
	invariants.mu.Lock()
	invariants.idsHeld += judged
	invariants.mu.Unlock()
	return judged, err
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

// SetClock puts a tracefs root on a trace clock for the running spec; its
// end puts back the clock in use before. A change of clock empties the
// buffer.
func SetClock(t *TraceFS, clock string) {
	old, err := t.Read("trace_clock")
	if err != nil {
		Unresolved("cannot read trace_clock: %v", err)
	}
	if err := t.Write("trace_clock", clock); err != nil {
		Unresolved("cannot write %q to trace_clock: %v", clock, err)
	}
	DeferCleanup(t.Write, "trace_clock", ClockInUse(old), Offset(1))
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
