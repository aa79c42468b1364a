// SPDX-License-Identifier: GPL-2.0-only

package stackmap

import (
	"testing"

	"github.com/ftrace-stackmap/conformance/harness"
)

// TestFrameMatchesEveryPrintOfAnAddress holds SM-BIN-03.2's frame check
// to the symbol's address range, whatever print the kernel chose.
func TestFrameMatchesEveryPrintOfAnAddress(t *testing.T) {
	syms := harness.ParseKallsyms("" +
		"ffff800080010000 T do_one\n" +
		"ffff800080010000 t do_one_alias\n" +
		"ffff800080010100 T do_two\n" +
		"ffff800080020000 t mod_fn\t[smct]\n")
	const in = 0xffff800080010010 // do_one+0x10
	for _, c := range []struct {
		text string
		addr uint64
		ok   bool
	}{
		{"do_one+0x10/0x100", in, true},
		{"do_one+0x10", in, true},
		{"do_one", in, true},                        // %ps: the bare symbol
		{"do_one_alias", in, true},                  // any alias
		{"mod_fn [smct]", 0xffff800080020004, true}, // with its module
		{"mod_fn+0x4/0x20 [smct]", 0xffff800080020004, true},
		{"do_one+0x100/0x100", 0xffff800080010100, true}, // %pB: the call that ends do_one
		{"do_one", 0xffff800080010100, true},
		{"0xffff800080010010", in, true},
		{"do_two", in, false},                 // another symbol
		{"do_one+0x14/0x100", in, false},      // the wrong offset
		{"do_two+0x10/0x100", in, false},      // right offset, wrong symbol
		{"do_one", 0xffff800080010104, false}, // past do_one, into do_two
		{"do_one+zz", in, false},
		{"0xffff800080010014", in, false},
	} {
		err := frameMatches(c.text, c.addr, syms)
		if (err == nil) != c.ok {
			t.Errorf("frameMatches(%q, %#x) = %v, want ok %v", c.text, c.addr, err, c.ok)
		}
	}
}
