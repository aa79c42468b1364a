// SPDX-License-Identifier: GPL-2.0-only

package stackmapfmt

import (
	"strings"
)

// TraceStacks is what trace says about stacks.
type TraceStacks struct {
	IDs        []int // every <stack_id N>, in order
	FullStacks int   // "<stack trace>" blocks
	// FullDepths are the frame counts of the "<stack trace>" blocks, in order.
	FullDepths []int
	// Order is every stack of trace, ids and full stacks, as trace lists them.
	Order []TraceStack
}

// TraceStack is one stack of trace: an id, or a full stack of Depth frames.
type TraceStack struct {
	ID    int // -1 for a full stack
	Depth int // frames of a full stack
}

// Deepest returns the frame count of the deepest full stack, or 0.
func (t TraceStacks) Deepest() int {
	d := 0
	for _, n := range t.FullDepths {
		d = max(d, n)
	}
	return d
}

// trailingStackID is the id of the `<stack_id N>` a line ends with.
func trailingStackID(line string) (string, bool) {
	body, ok := strings.CutSuffix(line, ">")
	i := strings.LastIndex(body, "<stack_id ")
	if !ok || i < 0 {
		return "", false
	}
	digits := body[i+len("<stack_id "):]
	return digits, digits != "" && strings.Trim(digits, "0123456789") == ""
}

// ParseTrace collects the stack ids and full stacks of trace's text.
func ParseTrace(text string) TraceStacks {
	var t TraceStacks
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, " \r")
		if id, ok := trailingStackID(line); ok {
			t.IDs = append(t.IDs, atoi(id))
			t.Order = append(t.Order, TraceStack{ID: atoi(id)})
		} else if strings.HasSuffix(line, "<stack trace>") {
			t.FullStacks++
			t.FullDepths = append(t.FullDepths, 0)
			t.Order = append(t.Order, TraceStack{ID: -1})
		} else if strings.HasPrefix(strings.TrimSpace(line), "=>") && len(t.FullDepths) > 0 {
			t.FullDepths[len(t.FullDepths)-1]++
			t.Order[len(t.Order)-1].Depth++
		}
	}
	return t
}

// Events counts the event lines of trace: lines that are not comments,
// not blank and not part of a stack.
func Events(text string) int {
	n := 0
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "=>") {
			continue
		}
		n++
	}
	return n
}

// FirstDrop looks for the first full stack of at most MaxDepth frames, one
// the map could have held, and returns how many distinct ids trace had
// shown before it; found is false when there is none. Deeper stacks are
// left out: they are never stored, full map or not.
func (t TraceStacks) FirstDrop() (distinct int, found bool) {
	seen := map[int]bool{}
	for _, s := range t.Order {
		switch {
		case s.ID >= 0:
			seen[s.ID] = true
		case s.Depth <= MaxDepth:
			return len(seen), true
		}
	}
	return len(seen), false
}

// SmallFullStacks counts the full stacks of at most MaxDepth frames.
func (t TraceStacks) SmallFullStacks() int {
	n := 0
	for _, d := range t.FullDepths {
		if d <= MaxDepth {
			n++
		}
	}
	return n
}
