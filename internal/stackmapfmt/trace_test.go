// SPDX-License-Identifier: GPL-2.0-only

package stackmapfmt

import (
	"fmt"
	"strings"
	"testing"
)

// fullStack is a "<stack trace>" block of n frames, as trace prints it.
func fullStack(n int) string {
	var b strings.Builder
	b.WriteString("  sh-1 [000] d..1.  1.0: <stack trace>\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, " => f%d+0x1/0x10\n", i)
	}
	return b.String()
}

func idLine(id int) string { return fmt.Sprintf("  sh-1 [000] d..1.  1.0: <stack_id %d>\n", id) }

func TestFirstDrop(t *testing.T) {
	for _, c := range []struct {
		name     string
		trace    string
		distinct int
		found    bool
	}{
		{"no drop", idLine(3) + idLine(5) + idLine(3), 2, false},
		{"drop after two ids", idLine(3) + idLine(5) + idLine(3) + fullStack(12) + idLine(9), 2, true},
		{"a deep stack is no drop", idLine(3) + fullStack(MaxDepth+1) + idLine(4) + fullStack(MaxDepth), 2, true},
		{"drop first", fullStack(1) + idLine(1), 0, true},
	} {
		tr := ParseTrace(c.trace)
		distinct, found := tr.FirstDrop()
		if distinct != c.distinct || found != c.found {
			t.Errorf("%s: FirstDrop() = %d, %v, want %d, %v", c.name, distinct, found, c.distinct, c.found)
		}
	}
	tr := ParseTrace(fullStack(3) + idLine(1) + fullStack(MaxDepth+2))
	if got := tr.SmallFullStacks(); got != 1 {
		t.Errorf("SmallFullStacks() = %d, want 1", got)
	}
	if tr.Order[2].Depth != MaxDepth+2 || tr.Order[1].ID != 1 {
		t.Errorf("Order = %+v", tr.Order)
	}
}
