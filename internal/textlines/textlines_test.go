// SPDX-License-Identifier: GPL-2.0-only

package textlines

import (
	"slices"
	"testing"
)

func TestFirst(t *testing.T) {
	for in, want := range map[string]string{"": "", "\n\n  one  \ntwo\n": "one", "only": "only"} {
		if got := First(in); got != want {
			t.Errorf("First(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLast(t *testing.T) {
	out := "a\n\n  b \r\nc\n   \n"
	for _, tc := range []struct {
		n    int
		want []string
	}{{0, []string{}}, {1, []string{"c"}}, {2, []string{"  b", "c"}}, {9, []string{"a", "  b", "c"}}} {
		if got := Last(out, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("Last(%q, %d) = %q, want %q", out, tc.n, got, tc.want)
		}
	}
	if got := Tail(out, 2); got != "  b\nc" {
		t.Errorf("Tail = %q", got)
	}
	if got := Last("", 3); len(got) != 0 {
		t.Errorf("Last of nothing = %q", got)
	}
}
