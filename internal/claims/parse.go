// SPDX-License-Identifier: GPL-2.0-only

package claims

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/stackmapfmt"
)

// CPUStats are the numbers of a per_cpu/cpuN/stats file that retention
// rests on.
type CPUStats struct {
	Entries  int64   `json:"entries"` // ring-buffer entries held: an event and its stack are two
	Overrun  int64   `json:"overrun"` // entries lost to the buffer wrapping
	Bytes    int64   `json:"bytes"`   // bytes the held entries take
	OldestTS float64 `json:"oldest_ts"`
	NowTS    float64 `json:"now_ts"`
}

// ParseCPUStats reads a per_cpu/cpuN/stats file; every field above must
// be there.
func ParseCPUStats(text string) (CPUStats, error) {
	var s CPUStats
	ints := map[string]*int64{"entries": &s.Entries, "overrun": &s.Overrun, "bytes": &s.Bytes}
	floats := map[string]*float64{"oldest event ts": &s.OldestTS, "now ts": &s.NowTS}
	seen := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		var err error
		if p := ints[key]; p != nil {
			*p, err = strconv.ParseInt(value, 10, 64)
		} else if p := floats[key]; p != nil {
			*p, err = strconv.ParseFloat(value, 64)
		} else {
			continue
		}
		if err != nil {
			return s, fmt.Errorf("stats: %q: %v", line, err)
		}
		seen[key] = true
	}
	for _, k := range []string{"entries", "overrun", "bytes", "oldest event ts", "now ts"} {
		if !seen[k] {
			return s, fmt.Errorf("stats: no %q line in %q", k, text)
		}
	}
	return s, nil
}

// Count is what trace holds of one event.
type Count struct {
	Events     int `json:"events"`      // lines of the event
	IDs        int `json:"ids"`         // <stack_id N> lines
	FullStacks int `json:"full_stacks"` // <stack trace> blocks
	Deepest    int `json:"deepest"`     // frames of the deepest full stack
	// DeepFullStacks are the full stacks deeper than the map stores, and
	// DeepIDs the ids whose stack in stack_map is (IDsDeeper fills them in).
	DeepFullStacks int     `json:"deep_full_stacks"`
	DeepIDs        int     `json:"deep_ids"`
	FirstTS        float64 `json:"first_ts"` // the oldest event's timestamp
	LastTS         float64 `json:"last_ts"`  // the newest event's
	ids            []int
}

// IDsDeeper counts the ids CountTrace saw whose block in blocks (the
// map's, read after trace) is deeper than the map may store.
func (c *Count) IDsDeeper(blocks []stackmapfmt.Block) {
	byID := stackmapfmt.IDs(blocks)
	c.DeepIDs = 0
	for _, id := range c.ids {
		if b, ok := byID[id]; ok && b.Depth > stackmapfmt.MaxDepth {
			c.DeepIDs++
		}
	}
}

// Span is the time the retained events cover.
func (c Count) Span() float64 { return c.LastTS - c.FirstTS }

// tsRE finds a trace line's timestamp: "... [000] ..... 12.345678: name:".
var tsRE = regexp.MustCompile(`\s(\d+\.\d+):\s`)

// CountTrace counts event's lines in trace's text (event is the name the
// line shows, "kmem_cache_alloc") with their stacks, and the time from
// the oldest to the newest.
func CountTrace(text, event string) Count {
	var c Count
	st := stackmapfmt.ParseTrace(text)
	c.IDs, c.FullStacks, c.Deepest = len(st.IDs), st.FullStacks, st.Deepest()
	c.DeepFullStacks = st.FullStacks - st.SmallFullStacks()
	c.ids = st.IDs
	mark := " " + event + ":"
	first := true
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "#") || !strings.Contains(line, mark) {
			continue
		}
		c.Events++
		m := tsRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		ts, _ := strconv.ParseFloat(m[1], 64)
		if first {
			c.FirstTS, first = ts, false
		}
		c.LastTS = ts
	}
	return c
}

// VmallocBytes sums /proc/vmallocinfo's allocations whose caller names
// the stackmap, and returns those callers (without their offsets).
func VmallocBytes(vmallocinfo string) (bytes int64, callers []string) {
	seen := map[string]bool{}
	for _, line := range strings.Split(vmallocinfo, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		caller, _, _ := strings.Cut(f[2], "+")
		low := strings.ToLower(caller)
		if !strings.Contains(low, "stackmap") && !strings.Contains(low, "stack_map") {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		bytes += n
		if !seen[caller] {
			seen[caller] = true
			callers = append(callers, caller)
		}
	}
	return bytes, callers
}

// MeminfoKB reads one field of /proc/meminfo, in kB.
func MeminfoKB(meminfo, field string) (int64, error) {
	for _, line := range strings.Split(meminfo, "\n") {
		key, value, ok := strings.Cut(line, ":")
		if !ok || key != field {
			continue
		}
		return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(value), "kB")), 10, 64)
	}
	return 0, fmt.Errorf("/proc/meminfo has no %s", field)
}

// Duplicates counts, among a map's blocks, the distinct stacks (by their
// frames), those under more than one id, and the ids beyond each one's
// first.
func Duplicates(blocks []stackmapfmt.Block) (stacks, split, extraIDs int) {
	ids := map[string]int{}
	for _, b := range blocks {
		ids[strings.Join(b.Frames, "\n")]++
	}
	for _, n := range ids {
		if n > 1 {
			split++
			extraIDs += n - 1
		}
	}
	return len(ids), split, extraIDs
}

// SelfConsistent checks what the series says of a map's entries, duplicates
// or not: each is an entry of its own, whose id resolves and whose ref
// count is the number of events trace shows under that id (so the ids of
// a stack split over several add up to its events). ids are the
// <stack_id N> of trace, in order; lost says the ring buffer lost events,
// so that a ref count may exceed what trace still shows, never fall short.
// It returns what it found wrong, at most a few, and how many it found.
func SelfConsistent(blocks []stackmapfmt.Block, ids []int, lost bool) (problems []string, n int) {
	events := map[int]int{}
	for _, id := range ids {
		events[id]++
	}
	known := map[int]bool{}
	for _, b := range blocks {
		known[b.ID] = true
	}
	bad := func(format string, args ...any) {
		if n++; len(problems) < 3 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(events)) {
		if !known[id] {
			bad("<stack_id %d> appears %d times in trace and names no block of stack_map", id, events[id])
		}
	}
	// A stack split over several ids adds up to its events once each of
	// its ids counts its own.
	for _, b := range blocks {
		if e := events[b.ID]; b.Ref < e || !lost && b.Ref != e {
			bad("stack_id %d: ref %d, but trace shows %d events under it", b.ID, b.Ref, e)
		}
	}
	return problems, n
}
