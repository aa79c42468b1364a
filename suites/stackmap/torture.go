// SPDX-License-Identifier: GPL-2.0-only

package stackmap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"golang.org/x/sys/unix"

	"github.com/ftrace-stackmap/conformance/harness"
	"github.com/ftrace-stackmap/conformance/initramfs/guest"
	"github.com/ftrace-stackmap/conformance/internal/contract"
)

// The torture run (make torture): the series' operating model, for as long
// as -smct.torture says. The torture boot turns stackmap and stacks on
// from the kernel's command line, with an event enabled there, as the
// series is meant to be used. Actors then run side by side on every CPU:
// workloads with shallow and deeper-than-64 stacks, readers of every
// export that hold their files open across resets, refused resets, option
// toggles, instance churn, under the function tracer, which runs the small
// map to saturation again and again. Every round the always-true clauses
// are judged at a checkpoint, as after every spec, kmemleak scans, and the
// map is reset between tracing off and on.

// tortureRound is how long the actors run between two checkpoints.
const tortureRound = 5 * time.Second

// tortureBufferKB is each CPU's ring buffer in the torture: what fills in
// a round under the function tracer, kept small enough to read whole.
const tortureBufferKB = "2048"

// actor is one kind of work of the torture and what it saw.
type actor struct {
	name      string
	ops, errs atomic.Int64
	mu        sync.Mutex
	first     func() string // the first failure of a clause
	setup     string        // the first error of its own making
	absent    string        // why it did not run
}

// fail counts a failure, a clause's (harness.Clause), and keeps the first.
func (a *actor) fail(clause func() string) {
	a.errs.Add(1)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.first == nil {
		a.first = clause
	}
}

// broke counts an error of the actor's own making (the workload, a setup
// step): not the kernel's, and it leaves the run UNRESOLVED.
func (a *actor) broke(format string, args ...any) {
	a.errs.Add(1)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.setup == "" {
		a.setup = fmt.Sprintf(format, args...)
	}
}

// firstFailure is the actor's first failure, a clause's or its own, or "".
func (a *actor) firstFailure() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.first != nil:
		return a.first()
	case a.setup != "":
		return "(setup) " + a.setup
	}
	return ""
}

// torture is one torture run: its actors and the gate they pass for each
// piece of work, which a round's checkpoint closes.
type torture struct {
	tfs         *harness.TraceFS
	gate        sync.RWMutex
	actors      []*actor
	rounds      *actor // the checkpoints, an actor of the table too
	full, leaks int
}

func (t *torture) actor(name string) *actor {
	a := &actor{name: name}
	t.actors = append(t.actors, a)
	return a
}

// pass runs one piece of an actor's work through the gate: every actor
// stops there while a round judges, so the checkpoint reads one state and
// gets the CPUs to itself. A failed assertion in f still opens it.
func (t *torture) pass(f func()) {
	t.gate.RLock()
	defer t.gate.RUnlock()
	f()
}

// table is the actor table, in the spirit of rcutorture's summary.
func (t *torture) table() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "actor\toperations\terrors\tfirst failure")
	for _, a := range t.actors {
		first := a.firstFailure()
		switch {
		case a.absent != "":
			first = "did not run: " + a.absent
		case first == "":
			first = "-"
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%s\n", a.name, a.ops.Load(), a.errs.Load(), first)
	}
	w.Flush()
	fmt.Fprintf(&b, "%d rounds, the map full in %d; kmemleak listed %d objects", t.roundsDone(), t.full, t.leaks)
	return b.String()
}

var _ = describe("the torture", Label(contract.LabelTorture), Serial, func() {
	harness.ReqIt("SM-ROBUST-01 SM-RESET-01 SM-INST-01 SM-INST-02", "holds under the operating model for the whole run: stackmap on from boot, every export read across resets, toggles, instances and a saturated map, the invariants at every round", harness.Case("torture"), func(ctx SpecContext) {
		tfs := harness.Root()
		t := &torture{tfs: tfs}
		fromBoot(tfs)
		t.start(ctx)
	}, NodeTimeout(24*time.Hour))
})

// fromBoot requires what the torture boot's command line turned on: the
// option, stacks and the exec event, and ids in trace already.
func fromBoot(tfs *harness.TraceFS) {
	for node, want := range map[string]string{optionNode: "1", "options/stacktrace": "1", "events/" + execEvent + "/enable": "1"} {
		if got, err := tfs.ReadTrimmed(node); err != nil || got != want {
			harness.Prerequisite("SM-BOOT-01", fmt.Errorf("the torture boot's command line did not leave %s at %s (got %q, %v)", node, want, got, err))
		}
	}
	harness.Set(tfs, "tracing_on", "0")
	tr, err := readTraceAnalysed(tfs)
	harness.Must(err, "reading trace")
	if len(tr.ids) == 0 {
		harness.Prerequisite("SM-BOOT-01", errors.New("no <stack_id N> in trace after a boot with stackmap on from its command line"))
	}
	harness.Set(tfs, "tracing_on", "1")
}

// start runs the actors for the run's duration, a checkpoint every round,
// and ends with the actor table, noted however the spec ends.
func (t *torture) start(ctx SpecContext) {
	work, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	run := func(a *actor, f func(context.Context, *actor)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer GinkgoRecover()
			for work.Err() == nil {
				t.pass(func() { f(work, a) })
			}
		}()
	}
	DeferCleanup(func() {
		stop()
		wg.Wait()
		// A note per line: the table reaches every report, KTAP's too.
		for _, line := range strings.Split(t.table(), "\n") {
			harness.Note("%s", line)
		}
	})

	t.saturate()
	// The exec events' ids are held to their stacks at every round.
	armTwin(t.tfs, []string{execEvent})
	for i := range runtime.NumCPU() {
		run(t.actor(fmt.Sprintf("workload-%d", i)), t.workload)
	}
	t.deep(run)
	for _, node := range allNodes {
		run(t.actor("reader "+node), t.reader(node))
	}
	run(t.actor("refused reset"), t.refusedReset)
	run(t.actor("option toggle"), t.optionToggle)
	run(t.actor("instances"), t.instances)
	t.rounds = t.actor("round")

	deadline := time.Now().Add(harness.TortureDuration())
	By(fmt.Sprintf("running the actors for %s, a checkpoint every %s", harness.TortureDuration(), tortureRound))
	for time.Now().Before(deadline) && ctx.Err() == nil {
		select {
		case <-ctx.Done():
			continue // interrupted: no round after it
		case <-time.After(min(tortureRound, time.Until(deadline))):
		}
		t.round()
	}
	stop()
	wg.Wait()
	if t.roundsDone() == 0 {
		harness.Unresolved("no round ended in %s: nothing was judged", harness.TortureDuration())
	}
	// The first clause an actor found broken fails the spec, in its words;
	// an actor that broke on its own leaves the run UNRESOLVED.
	for _, a := range t.actors {
		a.mu.Lock()
		first, setup := a.first, a.setup
		a.mu.Unlock()
		if first != nil {
			harness.Violated(func() string { return first() + " (actor " + a.name + ")" })
		}
		if setup != "" {
			harness.Unresolved("the torture's actor %s could not work: %s", a.name, setup)
		}
	}
}

// roundsDone is how many rounds ended, none before the actors started.
func (t *torture) roundsDone() int64 {
	if t.rounds == nil {
		return 0
	}
	return t.rounds.ops.Load()
}

// round closes the gate, judges the state at a checkpoint, has kmemleak
// scan, resets the map and turns tracing on again.
func (t *torture) round() {
	t.gate.Lock()
	defer t.gate.Unlock()
	tfs := t.tfs
	before := len(harness.Violations())
	a, n := t.rounds, t.roundsDone()+1
	checkpoint(tfs, "round %d of the torture", n)
	if v := harness.Violations(); len(v) > before {
		// Failed already, as its requirement's result; counted here.
		a.errs.Add(int64(len(v) - before))
	}
	st, err := parseStat(tfs)
	if err == nil && (st.Drops > 0 || st.Entries >= smallestMap(st)) {
		t.full++
	}
	fmt.Fprintf(GinkgoWriter, "round %d: %d entries, %d ids, %d drops; %d always-true clauses found broken so far\n",
		n, st.Entries, st.Successes, st.Drops, len(harness.Violations()))
	if n, err := guest.ScanLeaks(); err == nil {
		t.leaks += n
	}
	resetAsSetup(tfs, "0")
	harness.Must(tfs.Write("tracing_on", "1"), "turning tracing on")
	a.ops.Add(1)
}

func (t *torture) workload(_ context.Context, a *actor) {
	if err := harness.RunWorkload(1); err != nil {
		a.broke("running the workload: %v", err)
		time.Sleep(time.Second)
		return
	}
	a.ops.Add(1)
}

// deep sends datagrams through a stacked device chain whose last event
// fires deeper than 64 frames; a kernel that cannot build it runs without.
func (t *torture) deep(run func(*actor, func(context.Context, *actor))) {
	a := t.actor("deep stacks")
	undo, err := harness.DeepChain(t.tfs)
	DeferCleanup(undo)
	if err != nil {
		a.absent = err.Error()
		return
	}
	sender, err := harness.OpenDeepSender()
	if err != nil {
		a.absent = err.Error()
		return
	}
	DeferCleanup(sender.Close)
	// The deepest alone, as SM-DEPTH-01 has it: the triggers fire the rest.
	harness.Set(t.tfs, "events/synthetic/"+harness.DeepChainEvents[len(harness.DeepChainEvents)-1]+"/enable", "1")
	run(a, func(_ context.Context, a *actor) {
		if err := sender.Send(); err != nil {
			a.broke("sending through the deep chain: %v", err)
			time.Sleep(time.Second)
			return
		}
		a.ops.Add(1)
	})
}

// reader reads node over and over through one open file that it keeps
// across resets for a while, each read well-formed.
func (t *torture) reader(node string) func(context.Context, *actor) {
	return func(ctx context.Context, a *actor) {
		f, err := os.Open(t.tfs.Path(node))
		if err != nil {
			a.fail(harness.Clause("SM-ROBUST-01.1", "opening %s: %v", node, err))
			time.Sleep(time.Second)
			return
		}
		defer f.Close()
		for range 20 {
			if ctx.Err() != nil {
				return
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				a.fail(harness.Clause("SM-ROBUST-01.1", "seeking %s to 0: %v", node, err))
				return
			}
			data, err := io.ReadAll(f)
			switch {
			case errors.Is(err, unix.EINTR):
				continue
			case err != nil:
				a.fail(harness.Clause("SM-ROBUST-01.1", "reading %s: %v", node, err))
				return
			}
			if err := wellFormed(node, data); err != nil {
				a.fail(harness.Clause("SM-ROBUST-01.1", "%v", err))
			}
			a.ops.Add(1)
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// refusedReset asks for a reset while tracing is on: EBUSY, every time.
func (t *torture) refusedReset(_ context.Context, a *actor) {
	_, err := t.tfs.WriteBytes(mapNode, []byte("0"), 0)
	if harness.Errno(err) != unix.EBUSY {
		a.fail(harness.Clause("SM-RESET-01.1", "writing 0 to stack_map with tracing_on=1: got %s, want EBUSY", errText(err)))
	}
	a.ops.Add(1)
	time.Sleep(100 * time.Millisecond)
}

// optionToggle turns the stackmap option off and on again.
func (t *torture) optionToggle(_ context.Context, a *actor) {
	for _, v := range []string{"0", "1"} {
		if err := t.tfs.Write(optionNode, v); err != nil {
			a.broke("writing %s to options/stackmap: %v", v, err)
		}
	}
	a.ops.Add(1)
	time.Sleep(500 * time.Millisecond)
}

// saturate runs the function tracer with a stack on every call of the
// stress functions for the whole run, which fills the small map again
// after every round's reset. It is set once, before the actors start:
// switched while they ran, on two emulated CPUs, the kernel's patching of
// its own text took an int3 oops in a function another CPU was running.
func (t *torture) saturate() {
	if !t.tfs.Exists("options/func_stack_trace") || !strings.Contains(readOr(t.tfs, "available_tracers"), "function") {
		harness.Note("the map is filled by the workloads alone: no function tracer with func_stack_trace")
		return
	}
	// A round's trace is what its checkpoint reads, on a guest of 512 MB.
	harness.Set(t.tfs, "buffer_size_kb", tortureBufferKB)
	traceStressFunctions(t.tfs)
	harness.Set(t.tfs, "current_tracer", "function")
	harness.Set(t.tfs, "options/func_stack_trace", "1")
}

// instances makes an instance, finds neither the option nor a way to set
// it there, and removes it.
func (t *torture) instances(_ context.Context, a *actor) {
	dir := "instances/smct-torture"
	if err := os.Mkdir(t.tfs.Path(dir), 0o755); err != nil {
		a.broke("making %s: %v", dir, err)
		time.Sleep(time.Second)
		return
	}
	defer t.removeInstance(a, dir)
	if t.tfs.Exists(dir + "/" + optionNode) {
		a.fail(harness.Clause("SM-INST-01.1", "a fresh instance has %s", optionNode))
	}
	if err := t.tfs.Write(dir+"/trace_options", "stackmap"); harness.Errno(err) != unix.EINVAL && harness.Profile() == contract.ProfileV4 {
		a.fail(harness.Clause("SM-INST-02.1", "writing stackmap to an instance's trace_options: got %s, want EINVAL", errText(err)))
	}
	a.ops.Add(1)
	time.Sleep(200 * time.Millisecond)
}

// removeInstance removes the instances actor's instance. The kernel refuses
// with EBUSY while the instance is referenced, and once in a 10-minute
// sanitized run it refused after the actor's files were closed: a refusal
// is retried for two seconds and said in the log; one that lasts is the
// actor's error, with its errno.
func (t *torture) removeInstance(a *actor, dir string) {
	var err error
	for try := range 10 {
		if err = unix.Rmdir(t.tfs.Path(dir)); err == nil {
			if try > 0 {
				fmt.Fprintf(GinkgoWriter, "removing %s: refused %d times (%v) before it went\n", dir, try, unix.EBUSY)
			}
			return
		}
		if err != unix.EBUSY {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	a.broke("removing %s: %v", dir, err)
}

// readOr is a node's content, or "" when it cannot be read.
func readOr(tfs *harness.TraceFS, node string) string {
	s, _ := tfs.Read(node)
	return s
}
