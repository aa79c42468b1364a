// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"fmt"
	"strconv"
	"strings"
)

// BufferStats are one CPU's ring-buffer counts, from per_cpu/cpuN/stats.
type BufferStats struct {
	Entries, Overrun, Dropped int64 // "entries", "overrun", "dropped events"
}

// CPUStats reads per_cpu/cpuN/stats of each CPU, in CPU order. Reading
// them is a setup step.
func CPUStats(t *TraceFS) []BufferStats {
	var all []BufferStats
	for cpu := 0; ; cpu++ {
		node := fmt.Sprintf("per_cpu/cpu%d/stats", cpu)
		if !t.Exists(node) {
			return all
		}
		text, err := t.Read(node)
		Must(err, "reading %s", node)
		all = append(all, parseBufferStats(text))
	}
}

// parseBufferStats reads the "name: N" lines it knows; the rest (times,
// bytes) it leaves.
func parseBufferStats(text string) BufferStats {
	var s BufferStats
	for _, l := range Lines(text) {
		name, value, _ := strings.Cut(l, ":")
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil {
			continue
		}
		switch name {
		case "entries":
			s.Entries = n
		case "overrun":
			s.Overrun = n
		case "dropped events":
			s.Dropped = n
		}
	}
	return s
}
