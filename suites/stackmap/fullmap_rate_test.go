// SPDX-License-Identifier: GPL-2.0-only

package stackmap

import (
	"testing"

	fmtx "github.com/ftrace-stackmap/conformance/internal/stackmapfmt"
)

// TestReadsToSeparate lands the predicted counters inside the window where
// the rate separates, for a stack the map holds and one it drops.
func TestReadsToSeparate(t *testing.T) {
	for _, c := range []struct {
		name          string
		before, after fmtx.Stat
		reads         int
	}{
		{"successes", fmtx.Stat{Successes: 15980, Drops: 249}, fmtx.Stat{Successes: 16000, Drops: 249}, 10},
		{"drops", fmtx.Stat{Successes: 16000, Drops: 229}, fmtx.Stat{Successes: 16000, Drops: 249}, 10},
	} {
		k := readsToSeparate(c.before, c.after, c.reads)
		perS := (c.after.Successes - c.before.Successes) / int64(c.reads)
		perD := (c.after.Drops - c.before.Drops) / int64(c.reads)
		got := fmtx.Stat{Successes: c.after.Successes + perS*int64(k), Drops: c.after.Drops + perD*int64(k)}
		if c.after.RateSeparates() || !got.RateSeparates() {
			t.Errorf("%s: %d reads more give S=%d D=%d, which does not separate", c.name, k, got.Successes, got.Drops)
		}
		for _, off := range []int{-k / 10, k / 10} { // the middle: a tenth either way still separates
			near := fmtx.Stat{Successes: got.Successes + perS*int64(off), Drops: got.Drops + perD*int64(off)}
			if !near.RateSeparates() {
				t.Errorf("%s: %d reads are at the window's edge (%+d reads leave it)", c.name, k, off)
			}
		}
	}
	if k := readsToSeparate(fmtx.Stat{Successes: 5, Drops: 5}, fmtx.Stat{Successes: 5, Drops: 5}, 10); k != 10 {
		t.Errorf("counters that did not move: %d reads, want the last batch's 10", k)
	}
}
