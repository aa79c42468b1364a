// SPDX-License-Identifier: GPL-2.0-only

package claims

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ftrace-stackmap/conformance/harness"
	"github.com/ftrace-stackmap/conformance/internal/claims"
	"github.com/ftrace-stackmap/conformance/internal/stackmapfmt"
)

// Hot-path timing: repetitions of each mode, taken in turn so that a
// slow moment of the machine spreads over all of them, and workload runs
// per repetition.
const (
	hotReps    = 7
	hotRuns    = 400
	slabEvent  = "kmem/kmem_cache_alloc"
	dedupRound = 6
)

// hotWorkload is the hot path's workload: an open and a close, which
// allocate from the slab (the file) a few times and do little else, so
// that the events' cost is most of what is timed.
const hotWorkload = "open and close /proc/self/stat"

func openClose(n int) error {
	for range n {
		fd, err := unix.Open("/proc/self/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		unix.Close(fd)
	}
	return nil
}

// hotPath times the slab workload on CPU 0 with tracing off, the event
// alone, the full stack and the stackmap, and counts the events each
// recorded.
func (m *meter) hotPath() error {
	if err := pinTo(0); err != nil {
		return fmt.Errorf("cannot pin to CPU 0: %v", err)
	}
	if err := m.set("buffer_size_kb", fmt.Sprint(BufferKB)); err != nil {
		return err
	}
	modes := []string{claims.ModeOff, claims.ModeEvent, claims.ModeFullStack, claims.ModeStackmap}
	h := &claims.HotPath{Workload: hotWorkload, RunsPerRep: hotRuns}
	for _, mode := range modes {
		h.Timings = append(h.Timings, claims.Timing{Mode: mode})
	}
	for range hotReps {
		for i, mode := range modes {
			if err := m.arm(slabEvent, mode, "1"); err != nil {
				return err
			}
			start := time.Now()
			err := openClose(hotRuns)
			took := time.Since(start)
			m.t.Write("tracing_on", "0")
			if err != nil {
				return err
			}
			st, err := m.cpuStats(0)
			if err != nil {
				return err
			}
			// An event with a stack is two entries: the event and its
			// stack or id.
			per := int64(2)
			if mode == claims.ModeEvent || mode == claims.ModeOff {
				per = 1
			}
			h.Timings[i].Nanos = append(h.Timings[i].Nanos, took.Nanoseconds())
			h.Timings[i].Events = append(h.Timings[i].Events, (st.Entries+st.Overrun)/per)
		}
	}
	m.s.HotPath = h
	return nil
}

// dedup runs the same workload on every CPU at the same moment into an
// empty map, round after round, and counts the stacks that got more than
// one id.
func (m *meter) dedup() error {
	cpus := runtime.NumCPU()
	if cpus < 2 {
		return fmt.Errorf("one CPU: no contention to measure (the claims boot has %d)", cpus)
	}
	d := &claims.Dedup{CPUs: cpus}
	// The twin records each event's full stack: which stack each id
	// names is held to it, the conformance suite's SM-TRACE-01.4.
	twin, undo, err := harness.OpenTwin(m.t, harness.TwinSource{Events: []string{slabEvent}})
	defer undo()
	if err != nil {
		return fmt.Errorf("the twin instance, to hold ids to their stacks: %w", err)
	}
	for range dedupRound {
		if err := m.arm(slabEvent, claims.ModeStackmap, m.allCPUs); err != nil {
			return err
		}
		if err := twin.Clear(); err != nil {
			return err
		}
		if err := together(cpus, func() error { return harness.RunWorkload(2) }); err != nil {
			m.t.Write("tracing_on", "0")
			return err
		}
		if err := m.set("tracing_on", "0"); err != nil {
			return err
		}
		text, err := m.t.Read("stack_map")
		if err != nil {
			return err
		}
		blocks, err := stackmapfmt.ParseText(text)
		if err != nil {
			return fmt.Errorf("reading stack_map: %v", err)
		}
		stacks, split, extra := claims.Duplicates(blocks)
		d.Rounds++
		d.Entries += len(blocks)
		d.Stacks += stacks
		d.SplitStacks += split
		d.DuplicateIDs += extra
		if err := m.consistent(d, blocks, cpus, twin); err != nil {
			return err
		}
	}
	m.s.Dedup = d
	return nil
}

// consistent holds a round's entries to the <stack_id N> of trace, and
// each id to the stack the twin recorded for its event: what the series
// says of a duplicate ("a self-consistent entry with its own stack_id")
// is checkable of every entry.
func (m *meter) consistent(d *claims.Dedup, blocks []stackmapfmt.Block, cpus int, twin *harness.Twin) error {
	text, err := m.t.Read("trace")
	if err != nil {
		return err
	}
	lost := false
	for cpu := range cpus {
		st, err := m.cpuStats(cpu)
		if err != nil {
			return err
		}
		lost = lost || st.Overrun > 0
	}
	if lost {
		d.LostRounds++
	}
	problems, n := claims.SelfConsistent(blocks, stackmapfmt.ParseTrace(text).IDs, lost)
	data, err := os.ReadFile(m.t.Path("stack_map_bin"))
	if err != nil {
		return err
	}
	bin, err := stackmapfmt.ParseBin(data, binary.NativeEndian)
	if err != nil {
		return fmt.Errorf("stack_map_bin: %v", err)
	}
	theirs, err := twin.Hits()
	if err != nil {
		return err
	}
	held, err := harness.Identity(stackmapfmt.ParseHits(text), theirs, bin, blocks)
	d.IDsHeld += held
	if err != nil && !errors.As(err, new(*stackmapfmt.BinError)) { // the binary export's own fault is no lookup's
		n++
		problems = append(problems, "an id names another stack: "+err.Error())
	}
	d.Checked += len(blocks)
	d.Faults += n
	for _, p := range problems {
		if len(d.Inconsistent) < 3 {
			d.Inconsistent = append(d.Inconsistent, fmt.Sprintf("round %d: %s", d.Rounds, p))
		}
	}
	return nil
}

// together runs work once on each CPU, on threads pinned there, started
// at the same moment.
func together(cpus int, work func() error) error {
	var (
		ready, wg sync.WaitGroup
		start     = make(chan struct{})
		errs      = make([]error, cpus)
	)
	for cpu := range cpus {
		ready.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // the thread ends with the goroutine, pinned
			errs[cpu] = pinTo(cpu)
			ready.Done()
			<-start
			if errs[cpu] == nil {
				errs[cpu] = work()
			}
		}()
	}
	ready.Wait()
	close(start)
	wg.Wait()
	for cpu, err := range errs {
		if err != nil {
			return fmt.Errorf("CPU %d: %v", cpu, err)
		}
	}
	return nil
}
