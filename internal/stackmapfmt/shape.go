// SPDX-License-Identifier: GPL-2.0-only

package stackmapfmt

import (
	"fmt"
	"regexp"
	"strings"
)

// The requirements that own the stack shapes of trace: an id line is
// SM-TRACE-01's, a full stack (and an event's one stack) SM-OPT-03's.
const (
	OwnerIDLine    = "SM-TRACE-01"
	OwnerFullStack = "SM-OPT-03"
)

// ShapeError is a line of trace that is none of the shapes the contract
// defines, with the requirement that owns the shape it comes nearest to.
type ShapeError struct {
	Line  int // 1-based
	Text  string
	Owner string
	Why   string
}

func (e *ShapeError) Error() string {
	return fmt.Sprintf("trace line %d: %s: %q", e.Line, e.Why, e.Text)
}

var (
	// A well-formed id: decimal, no sign, no leading zero.
	idLineRE = regexp.MustCompile(`^<stack_id (0|[1-9]\d*)>$`)
	// Lines the kernel writes between entries.
	markerRE = regexp.MustCompile(`^(CPU:\d+ \[LOST \d+ EVENTS\]|##### CPU \d+ buffer started ####)$`)
)

// CheckTrace judges every line of a stackmap-era trace in text form and
// returns those that fit no shape the contract defines: comments, blank
// lines, the kernel's markers, event lines, "<stack_id N>" with N a
// decimal without sign or leading zero, and "<stack trace>" followed by
// at least one " => " frame. It also finds an event given two stacks:
// two stack entries in a row on one CPU, in one context (the same flags),
// with no event between. The first entry a CPU shows may be a stack whose
// event the buffer overwrote.
//
// Events nest (a synthetic event recorded from another's hist trigger):
// the inner events' stacks come first, back to back, each level at a
// deeper preempt depth. trace shows that depth only up to 15, so at "f"
// the flags cannot tell levels apart, and a run of stacks there may be
// as long as the events with those flags before it.
func CheckTrace(text string) []*ShapeError {
	var out []*ShapeError
	bad := func(n int, line, owner, why string) {
		out = append(out, &ShapeError{Line: n, Text: line, Owner: owner, Why: why})
	}
	// onCPU is what one CPU showed last: its last entry when that entry
	// was a stack (its line is named in a report so the pair can be read
	// together), how many stacks in a row had its flags, and the events
	// at depth "f" since the CPU's last stack, by flags (the only ones a
	// run of stacks is held to; counting no others keeps the many lines
	// of a full map's trace cheap).
	type onCPU struct {
		flags, text string
		n, run      int
		deepEvents  map[string]int
	}
	cpus := map[string]*onCPU{}
	inStack, frames, stackLine, stackText := false, 0, 0, ""
	endStack := func() {
		if inStack && frames == 0 {
			bad(stackLine, stackText, OwnerFullStack, "a <stack trace> with no frame")
		}
		inStack = false
	}
	for i, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		n := i + 1
		trimmed := strings.TrimRight(line, " \r")
		if strings.HasPrefix(trimmed, " => ") && len(trimmed) > 4 {
			if !inStack {
				bad(n, trimmed, OwnerFullStack, "a frame line outside a <stack trace>")
			}
			frames++
			continue
		}
		endStack()
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "#") || markerRE.MatchString(strings.TrimSpace(trimmed)):
			if strings.HasPrefix(strings.TrimSpace(trimmed), "CPU:") {
				clear(cpus) // events were lost: a stack may have lost its event
			}
			continue
		}
		e, ok := cutEntry(trimmed)
		if !ok {
			bad(n, trimmed, OwnerFullStack, "a line of no shape trace has")
			continue
		}
		cpu, flags, body := e.cpu, e.flags, e.body
		isStack := true
		switch {
		case strings.HasPrefix(body, "<stack_id"):
			if !idLineRE.MatchString(body) {
				bad(n, trimmed, OwnerIDLine, "an id line that is not <stack_id N> with N a decimal without sign or leading zero")
			}
		case body == "<stack trace>":
			inStack, frames, stackLine, stackText = true, 0, n, trimmed
		default:
			isStack = false
		}
		c := cpus[cpu]
		if c == nil {
			c = &onCPU{}
			cpus[cpu] = c
		}
		if !isStack {
			if c.n != 0 {
				clear(c.deepEvents)
			}
			if depthSaturated(flags) {
				if c.deepEvents == nil {
					c.deepEvents = map[string]int{}
				}
				c.deepEvents[flags]++
			}
			c.flags, c.text, c.n, c.run = "", "", 0, 0
			continue
		}
		if c.n == 0 || c.flags != flags {
			c.run = 0
		}
		c.run++
		if c.run > 1 && !(depthSaturated(flags) && c.run <= c.deepEvents[flags]) {
			bad(n, trimmed, OwnerFullStack, fmt.Sprintf("a second stack for one event (a stack right after a stack, same CPU and context; the first: line %d %q)", c.n, c.text))
		}
		c.flags, c.text, c.n = flags, trimmed, n
	}
	endStack()
	return out
}

// depthSaturated is whether an entry's flags show the deepest preempt
// depth trace prints, 15 ("f"), which deeper levels show too.
func depthSaturated(flags string) bool {
	const depthColumn = 3 // irqs-off, need-resched, hardirq/softirq, depth
	return len(flags) > depthColumn && flags[depthColumn] == 'f'
}
