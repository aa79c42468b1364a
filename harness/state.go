// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Snapshot holds every setting the suite may change, read before it changes
// any, so Restore can put them back: on success, failure or interruption.
type Snapshot struct {
	mu        sync.Mutex // one Restore at a time
	tfs       *TraceFS
	values    map[string]string // node -> content, for single-value nodes
	clock     string            // trace_clock's clock in use, "" without the file
	options   map[string]string // options/<name> -> "0" or "1"
	events    []string          // lines of set_event
	filter    []string          // lines of set_ftrace_filter, nil when unfiltered
	instances []string          // names under instances/
}

// Nodes whose whole value is one line to be written back as it was read.
var valueNodes = []string{"current_tracer", "buffer_size_kb", "tracing_on"}

// Save reads every setting the suite may change.
func (t *TraceFS) Save() (*Snapshot, error) {
	s := &Snapshot{tfs: t, values: map[string]string{}, options: map[string]string{}}
	for _, n := range valueNodes {
		if !t.Exists(n) {
			continue
		}
		v, err := t.ReadTrimmed(n)
		if err != nil {
			return nil, fmt.Errorf("save %s: %w", n, err)
		}
		s.values[n] = v
	}
	if t.Exists("trace_clock") {
		clocks, err := t.Read("trace_clock")
		if err != nil {
			return nil, fmt.Errorf("save trace_clock: %w", err)
		}
		s.clock = ClockInUse(clocks)
	}
	opts, err := os.ReadDir(t.Path("options"))
	if err != nil {
		return nil, fmt.Errorf("save options: %w", err)
	}
	for _, o := range opts {
		v, err := t.ReadTrimmed("options/" + o.Name())
		if err != nil {
			return nil, fmt.Errorf("save options/%s: %w", o.Name(), err)
		}
		s.options[o.Name()] = v
	}
	if s.events, err = t.lines("set_event"); err != nil {
		return nil, err
	}
	if t.filterReadable() {
		if s.filter, err = t.ftraceFilter(); err != nil {
			return nil, err
		}
	}
	if s.instances, err = t.Instances(); err != nil {
		return nil, err
	}
	return s, nil
}

// Instances lists the names under instances/.
func (t *TraceFS) Instances() ([]string, error) {
	if !t.Exists("instances") {
		return nil, nil
	}
	entries, err := os.ReadDir(t.Path("instances"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names, nil
}

func (t *TraceFS) lines(node string) ([]string, error) {
	text, err := t.Read(node)
	if err != nil {
		return nil, fmt.Errorf("save %s: %w", node, err)
	}
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out, nil
}

// filterReadable says whether set_ftrace_filter exists and may be read: a
// kernel whose function tracing is locked down refuses it with EPERM, and
// then the suite cannot change it either.
func (t *TraceFS) filterReadable() bool {
	f, err := os.Open(t.Path("set_ftrace_filter"))
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// ftraceFilter returns the function filter, nil meaning "all functions".
func (t *TraceFS) ftraceFilter() ([]string, error) {
	l, err := t.lines("set_ftrace_filter")
	if len(l) == 0 {
		return nil, err
	}
	return l, err
}

// Restore writes back every setting that differs from the snapshot and
// removes instances made since. It keeps going past errors and returns
// them all. It may run again, or beside an abandoned run of itself.
func (s *Snapshot) Restore() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := &TraceFS{Root: s.tfs.Root, restorer: true}
	var errs []error
	try := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	// Quiet the buffer while settings move; tracing_on is put back last.
	try(t.Write("tracing_on", "0"))
	if now, _ := t.ReadTrimmed("current_tracer"); now != s.values["current_tracer"] {
		try(t.Write("current_tracer", s.values["current_tracer"]))
	}
	if now, err := t.Read("trace_clock"); err == nil && ClockInUse(now) != s.clock {
		try(t.Write("trace_clock", s.clock))
	}
	for name, want := range s.options {
		if now, err := t.ReadTrimmed("options/" + name); err == nil && now != want {
			try(t.Write("options/"+name, want))
		}
	}
	if now, err := t.lines("set_event"); err == nil && !slices.Equal(now, s.events) {
		try(t.Write("set_event", ""))
		for _, e := range s.events {
			try(t.Append("set_event", e))
		}
	}
	if t.filterReadable() {
		if now, err := t.ftraceFilter(); err == nil && !slices.Equal(now, s.filter) {
			try(t.Write("set_ftrace_filter", ""))
			for _, f := range s.filter {
				try(t.Append("set_ftrace_filter", f))
			}
		}
	}
	if now, err := t.Instances(); err == nil {
		for _, name := range now {
			if !slices.Contains(s.instances, name) {
				try(os.Remove(t.Path("instances/" + name)))
			}
		}
	}
	if now, _ := t.ReadTrimmed("buffer_size_kb"); !SameBufferSize(now, s.values["buffer_size_kb"]) {
		try(t.Write("buffer_size_kb", bufferKB(s.values["buffer_size_kb"])))
	}
	try(t.Write("tracing_on", s.values["tracing_on"]))
	return errors.Join(errs...)
}

// Drift lists the settings that differ from the snapshot, as
// "node: got X, want Y". Empty means everything is as it was.
func (s *Snapshot) Drift() []string {
	now, err := s.tfs.Save()
	if err != nil {
		return []string{err.Error()}
	}
	var d []string
	differ := func(node, got, want string) {
		if got != want {
			d = append(d, fmt.Sprintf("%s: got %q, want %q", node, got, want))
		}
	}
	for _, n := range valueNodes {
		if n == "buffer_size_kb" {
			if !SameBufferSize(now.values[n], s.values[n]) {
				differ(n, bufferKB(now.values[n]), bufferKB(s.values[n]))
			}
		} else {
			differ(n, now.values[n], s.values[n])
		}
	}
	differ("trace_clock", now.clock, s.clock)
	for name, want := range s.options {
		differ("options/"+name, now.options[name], want)
	}
	differ("set_event", strings.Join(now.events, ","), strings.Join(s.events, ","))
	differ("set_ftrace_filter", strings.Join(now.filter, ","), strings.Join(s.filter, ","))
	differ("instances/", strings.Join(now.instances, ","), strings.Join(s.instances, ","))
	return d
}

// bufferKB is the per-CPU buffer size a buffer_size_kb reading stands for. A
// buffer not yet in use reads "7 (expanded: 1408)" and grows to 1408 on first
// use, so the expanded figure is the one to compare and to write back.
func bufferKB(v string) string {
	if _, after, ok := strings.Cut(v, "(expanded: "); ok {
		return strings.TrimSuffix(after, ")")
	}
	return strings.TrimSpace(v)
}

// SameBufferSize compares two buffer_size_kb readings, in either form. The
// kernel rounds a size to whole buffer pages (1408 reads back as 1410), so
// sizes closer than a 4 KiB page are the same setting.
func SameBufferSize(a, b string) bool {
	x, errA := strconv.Atoi(bufferKB(a))
	y, errB := strconv.Atoi(bufferKB(b))
	if errA != nil || errB != nil {
		return bufferKB(a) == bufferKB(b)
	}
	return x-y < 4 && y-x < 4
}

// InUse says how tracefs is being used by someone else, or "" when it is
// idle: a tracer other than nop, enabled events, or instances.
func (s *Snapshot) InUse() string {
	var use []string
	if t := s.values["current_tracer"]; t != "" && t != "nop" {
		use = append(use, "current_tracer="+t)
	}
	if len(s.events) > 0 {
		use = append(use, fmt.Sprintf("%d events enabled", len(s.events)))
	}
	if len(s.instances) > 0 {
		use = append(use, "instances "+strings.Join(s.instances, ","))
	}
	return strings.Join(use, ", ")
}
