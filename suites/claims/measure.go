// SPDX-License-Identifier: GPL-2.0-only

// Package claims takes the measurements behind the series' claims in the
// guest (or on a device, in live mode): the suite binary runs it instead
// of the specs when -smct.claims names parts (see internal/claims). It
// judges nothing: a part it cannot measure says why, and the host decides.
// Every tracefs setting it changes is put back before it returns.
package claims

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/ftrace-stackmap/conformance/harness"
	"github.com/ftrace-stackmap/conformance/internal/claims"
)

// BufferKB is the per-CPU buffer every retention round records into:
// small enough to wrap within a second of emulated work, large enough
// that page-sized rounding does not move a ratio by more than a percent.
const BufferKB = 128

// wraps is how many times over a round fills the buffer.
const wraps = 3

// Measure takes the parts named and returns what it measured. Setup
// errors (no tracefs, a setting it cannot save) are returned; a part
// that cannot be measured is in Sample.Missing.
func Measure(parts []string) (claims.Sample, error) {
	s := claims.Sample{CPUs: runtime.NumCPU(), Missing: map[string]string{}}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		s.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	t, err := harness.OpenTraceFS()
	if err != nil {
		return s, err
	}
	snap, err := t.Save()
	if err != nil {
		return s, fmt.Errorf("cannot save tracefs settings: %v", err)
	}
	cpumask, err := t.ReadTrimmed("tracing_cpumask")
	if err != nil {
		return s, fmt.Errorf("cannot save tracing_cpumask: %v", err)
	}
	defer func() {
		t.Write("tracing_cpumask", cpumask)
		if err := snap.Restore(); err != nil {
			fmt.Fprintf(os.Stderr, "claims: restoring tracefs: %v\n", err)
		}
	}()
	m := &meter{t: t, s: &s, allCPUs: cpumask}
	if !t.Exists("options/stackmap") || !t.Exists("stack_map") {
		for _, p := range parts {
			s.Missing[p] = "the kernel has no stackmap (no options/stackmap or no stack_map)"
		}
		return s, nil
	}
	// One thread on CPU 0: the workload's children inherit it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, p := range parts {
		var err error
		switch p {
		case claims.PartPool:
			err = m.pool()
		case claims.PartRetention:
			m.retention()
		case claims.PartHotPath:
			err = m.hotPath()
		case claims.PartDedup:
			err = m.dedup()
		default:
			err = fmt.Errorf("unknown part %q", p)
		}
		if err != nil {
			s.Missing[p] = err.Error()
		}
	}
	return s, nil
}

// meter takes one sample.
type meter struct {
	t       *harness.TraceFS
	s       *claims.Sample
	allCPUs string // tracing_cpumask as found: every CPU on a fresh boot
}

// pool reads the map's memory before anything has set the option.
func (m *meter) pool() error {
	st, err := m.stat()
	if err != nil {
		return err
	}
	on, err := m.t.ReadTrimmed("options/stackmap")
	if err != nil {
		return err
	}
	vi, err := os.ReadFile("/proc/vmallocinfo")
	if err != nil {
		return fmt.Errorf("reading /proc/vmallocinfo: %v", err)
	}
	mi, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return err
	}
	used, err := claims.MeminfoKB(string(mi), "VmallocUsed")
	if err != nil {
		return err
	}
	bytes, callers := claims.VmallocBytes(string(vi))
	m.s.Pool = &claims.Pool{Capacity: st.Capacity, Bytes: bytes, Callers: callers, VmallocUsedKB: used, OptionOn: on == "1"}
	return nil
}

// set writes each node's value in order, stopping at the first error.
func (m *meter) set(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if err := m.t.Write(pairs[i], pairs[i+1]); err != nil {
			return fmt.Errorf("writing %q to %s: %v", pairs[i+1], pairs[i], err)
		}
	}
	return nil
}

// arm makes a recording of event in mode start empty: tracing off, the
// map reset, the buffer cleared, the options the mode asks for, only
// event enabled (none for off), on the CPUs of cpumask.
func (m *meter) arm(event, mode, cpumask string) error {
	stack, stackmap := "0", "0"
	switch mode {
	case claims.ModeFullStack:
		stack = "1"
	case claims.ModeStackmap:
		stack, stackmap = "1", "1"
	}
	enable := "1"
	if mode == claims.ModeOff {
		enable = "0"
	}
	return m.set("tracing_on", "0", "set_event", "", "options/stackmap", "0", "stack_map", "0", "trace", "",
		"tracing_cpumask", cpumask, "options/stacktrace", stack, "options/stackmap", stackmap,
		"events/"+event+"/enable", enable, "tracing_on", "1")
}

func (m *meter) stat() (statLike, error) {
	text, err := m.t.Read("stack_map_stat")
	if err != nil {
		return statLike{}, err
	}
	return parseCapacity(text)
}

// statLike is the part of stack_map_stat the claims read: lenient, since
// the stat's format is the conformance specs' business.
type statLike struct{ Capacity int64 }

func parseCapacity(text string) (statLike, error) {
	for _, line := range strings.Split(text, "\n") {
		var a, b int64
		if _, err := fmt.Sscanf(strings.TrimSpace(line), "entries: %d / %d", &a, &b); err == nil {
			return statLike{Capacity: b}, nil
		}
	}
	return statLike{}, errors.New("stack_map_stat has no \"entries: A / B\" line")
}

// pinTo binds the calling (locked) thread to one CPU.
func pinTo(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	return unix.SchedSetaffinity(0, &set)
}

// cpuStats reads per_cpu/cpuN/stats.
func (m *meter) cpuStats(cpu int) (claims.CPUStats, error) {
	text, err := m.t.Read(fmt.Sprintf("per_cpu/cpu%d/stats", cpu))
	if err != nil {
		return claims.CPUStats{}, err
	}
	return claims.ParseCPUStats(text)
}
