// SPDX-License-Identifier: GPL-2.0-only

package stackmapfmt

import (
	"regexp"
	"strings"
)

// TraceStacks is what trace says about stacks.
type TraceStacks struct {
	IDs        []int // every <stack_id N>, in order
	FullStacks int   // "<stack trace>" blocks
	// FullDepths are the frame counts of the "<stack trace>" blocks, in order.
	FullDepths []int
}

// Deepest returns the frame count of the deepest full stack, or 0.
func (t TraceStacks) Deepest() int {
	d := 0
	for _, n := range t.FullDepths {
		d = max(d, n)
	}
	return d
}

var stackIDRE = regexp.MustCompile(`<stack_id (\d+)>$`)

// ParseTrace collects the stack ids and full stacks of trace's text.
func ParseTrace(text string) TraceStacks {
	var t TraceStacks
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, " \r")
		if m := stackIDRE.FindStringSubmatch(line); m != nil {
			t.IDs = append(t.IDs, atoi(m[1]))
		} else if strings.HasSuffix(line, "<stack trace>") {
			t.FullStacks++
			t.FullDepths = append(t.FullDepths, 0)
		} else if strings.HasPrefix(strings.TrimSpace(line), "=>") && len(t.FullDepths) > 0 {
			t.FullDepths[len(t.FullDepths)-1]++
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
