package stackmapfmt

import (
	"regexp"
	"strings"
)

// TraceStacks is what trace says about stacks.
type TraceStacks struct {
	IDs        []int // every <stack_id N>, in order
	FullStacks int   // "<stack trace>" blocks
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
