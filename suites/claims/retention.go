// SPDX-License-Identifier: GPL-2.0-only

package claims

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ftrace-stackmap/conformance/harness"
	"github.com/ftrace-stackmap/conformance/internal/claims"
	"github.com/ftrace-stackmap/conformance/internal/stackmapfmt"
)

// A workload is what makes one event's stacks: run makes a few.
type workload struct {
	name  string
	event string // events/<event>
	run   func() error
	// setUp readies it, and its undo removes what it made.
	setUp func() (undo func(), err error)
}

// maxRound bounds one round's recording, whatever the kernel does.
const maxRound = 20 * time.Second

// retention records each workload in each mode into the same buffer on
// CPU 0 until it has wrapped, then counts what it kept.
func (m *meter) retention() {
	if err := m.set("buffer_size_kb", fmt.Sprint(BufferKB)); err != nil {
		m.s.Missing[claims.PartRetention] = err.Error()
		return
	}
	if err := pinTo(0); err != nil {
		m.s.Missing[claims.PartRetention] = fmt.Sprintf("cannot pin to CPU 0: %v", err)
		return
	}
	var deep *harness.DeepSender
	defer func() {
		if deep != nil {
			deep.Close()
		}
	}()
	send := func() error {
		if deep == nil {
			return errors.New("no deep sender")
		}
		for range 4 {
			if err := deep.Send(); err != nil {
				return err
			}
		}
		return nil
	}
	openDeep := func() (func(), error) {
		var err error
		if deep == nil {
			deep, err = harness.OpenDeepSender()
		}
		return func() {}, err
	}
	chain := func() (func(), error) {
		if _, err := openDeep(); err != nil {
			return func() {}, err
		}
		return harness.DeepChain(m.t)
	}
	workloads := []workload{
		{name: claims.WorkloadSlab, event: "kmem/kmem_cache_alloc", run: func() error { return harness.RunWorkload(2) }},
		{name: claims.WorkloadDeep, event: "net/net_dev_start_xmit", run: send, setUp: openDeep},
		{name: claims.WorkloadTooDeep, event: "synthetic/" + harness.DeepChainEvents[len(harness.DeepChainEvents)-1], run: send, setUp: chain},
	}
	for _, w := range workloads {
		key := claims.PartRetention + "/" + w.name
		r, err := m.retain(w)
		if err != nil {
			m.s.Missing[key] = err.Error()
			continue
		}
		m.s.Retention = append(m.s.Retention, r)
	}
}

// retain records one workload in each mode.
func (m *meter) retain(w workload) (claims.Retention, error) {
	r := claims.Retention{Workload: w.name, Event: w.event, BufferKB: BufferKB}
	if w.setUp != nil {
		undo, err := w.setUp()
		defer undo()
		if err != nil {
			return r, err
		}
	}
	if !m.t.Exists("events/" + w.event + "/enable") {
		return r, fmt.Errorf("the kernel has no event %s", w.event)
	}
	for _, mode := range []string{claims.ModeEvent, claims.ModeFullStack, claims.ModeStackmap} {
		rd, err := m.round(w, mode)
		if err != nil {
			return r, fmt.Errorf("%s, %s: %v", w.name, mode, err)
		}
		r.Rounds = append(r.Rounds, rd)
	}
	return r, nil
}

// round records until CPU 0's buffer has been overwritten wraps times
// over, then reads its stats and counts its trace.
func (m *meter) round(w workload, mode string) (claims.Round, error) {
	rd := claims.Round{Mode: mode}
	if err := m.arm(w.event, mode, "1"); err != nil {
		return rd, err
	}
	start := time.Now()
	for {
		if err := w.run(); err != nil {
			m.t.Write("tracing_on", "0")
			return rd, fmt.Errorf("workload: %v", err)
		}
		rd.Runs++
		st, err := m.cpuStats(0)
		if err != nil {
			m.t.Write("tracing_on", "0")
			return rd, err
		}
		if st.Entries > 0 && st.Overrun >= wraps*st.Entries {
			break
		}
		if time.Since(start) > maxRound {
			break // the host sees the overrun and judges
		}
	}
	if err := m.set("tracing_on", "0"); err != nil {
		return rd, err
	}
	var err error
	if rd.Stats, err = m.cpuStats(0); err != nil {
		return rd, err
	}
	text, err := m.t.Read("trace")
	if err != nil {
		return rd, err
	}
	name := w.event[strings.LastIndex(w.event, "/")+1:]
	rd.Trace = claims.CountTrace(text, name)
	if mode == claims.ModeStackmap {
		// Which ids name a stack deeper than the map may hold.
		text, err := m.t.Read("stack_map")
		if err != nil {
			return rd, err
		}
		blocks, err := stackmapfmt.ParseText(text)
		if err != nil {
			return rd, fmt.Errorf("reading stack_map: %v", err)
		}
		rd.Trace.IDsDeeper(blocks)
	}
	return rd, nil
}
