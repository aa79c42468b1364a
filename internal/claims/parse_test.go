// SPDX-License-Identifier: GPL-2.0-only

package claims

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/stackmapfmt"
)

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The files in testdata were recorded in a claims boot of the reference
// kernel on arm64: per_cpu/cpu0/stats whole, trace's first 120 lines.
func TestParseRecorded(t *testing.T) {
	st, err := ParseCPUStats(readTestdata(t, "stats-slab-stackmap.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if st != (CPUStats{Entries: 3482, Overrun: 10600, Bytes: 133980, OldestTS: 10.262107, NowTS: 11.326739}) {
		t.Errorf("stats: %+v", st)
	}
	if _, err := ParseCPUStats("entries: 3\noverrun: 1\n"); err == nil {
		t.Error("stats without bytes and timestamps parsed")
	}
	c := CountTrace(readTestdata(t, "trace-slab-stackmap.txt"), "kmem_cache_alloc")
	if c.Events != 54 || c.IDs != 54 || c.FullStacks != 0 || c.FirstTS != 10.262107 || c.LastTS != 10.302467 {
		t.Errorf("slab with the option: %+v; want 54 events, 54 ids, 10.262107 to 10.302467", c)
	}
	c = CountTrace(readTestdata(t, "trace-slab-full-stack.txt"), "kmem_cache_alloc")
	// The first stack's event was overwritten: its stack is counted alone.
	if c.Events != 6 || c.IDs != 0 || c.FullStacks != 7 {
		t.Errorf("slab with full stacks: %+v; want 6 events, 7 full stacks", c)
	}
	// A stack of 75 frames, and one cut by the excerpt at 30.
	c = CountTrace(readTestdata(t, "trace-deeper-than-64-full-stack.txt"), "s4")
	if c.FullStacks != 2 || c.DeepFullStacks != 1 || c.Deepest != 75 {
		t.Errorf("deep chain: %+v; want 2 full stacks, 1 over 64 frames, the deepest 75", c)
	}
}

// The recorded sample of a whole claims boot, judged as it was, then with
// the option's round made a copy of the full-stack round: a kernel that
// never uses its ids.
func TestJudgeRecordedSample(t *testing.T) {
	var s Sample
	if err := json.Unmarshal([]byte(readTestdata(t, "sample-arm64.json")), &s); err != nil {
		t.Fatal(err)
	}
	r := Judge("", true, []Boot{{Name: "claims", Sample: &s}})
	for _, id := range []string{"retention.events", "retention.bytes", "retention.depth", "retention.fallback", "pool.bits14", "pool.eager"} {
		if got := statusOf(t, r, id); got != Reproduced {
			c, _ := r.Find(id)
			t.Errorf("%s: %s (%s), want reproduced", id, got, c.Measured)
		}
	}
	if got := statusOf(t, r, "dedup"); got != NoFigure {
		t.Errorf("dedup: %s, want %s", got, NoFigure)
	}
	for i := range s.Retention {
		rounds := s.Retention[i].Rounds
		rounds[2] = rounds[1]
		rounds[2].Mode = ModeStackmap
	}
	r = Judge("", true, []Boot{{Name: "claims", Sample: &s}})
	for _, id := range []string{"retention.events", "retention.bytes", "retention.depth"} {
		if got := statusOf(t, r, id); got != NotReproduced {
			t.Errorf("no ids used: %s: %s, want not reproduced", id, got)
		}
	}
}

// What the series says of every entry, a duplicate's too, held against
// trace: the id resolves, the ref count is the events under it, a split
// stack's ids add up; a ring buffer that lost events bounds a ref count
// from below only.
func TestSelfConsistent(t *testing.T) {
	block := func(id, ref int, frame string) stackmapfmt.Block {
		return stackmapfmt.Block{ID: id, Ref: ref, Depth: 1, Frames: []string{frame}}
	}
	split := []stackmapfmt.Block{block(1, 2, "a"), block(2, 1, "b"), block(3, 1, "a")}
	for _, tc := range []struct {
		name   string
		blocks []stackmapfmt.Block
		ids    []int
		lost   bool
		want   string // in the first problem; "" for none
	}{
		{"consistent, a split stack too", split, []int{1, 2, 1, 3}, false, ""},
		{"a ref count one too many", split, []int{1, 2, 3}, false, "stack_id 1: ref 2, but trace shows 1 events"},
		{"a ref count one too many, events lost", split, []int{1, 2, 3}, true, ""},
		{"a ref count short, events lost", split, []int{1, 1, 1, 2, 3}, true, "stack_id 1: ref 2, but trace shows 3 events"},
		{"an id without a block", split, []int{1, 2, 1, 3, 9}, false, "<stack_id 9> appears 1 times in trace and names no block"},
		{"a split stack's ids that do not add up", []stackmapfmt.Block{block(1, 1, "a"), block(3, 1, "a")}, []int{1, 1, 3}, false, "stack_id 1: ref 1, but trace shows 2"},
	} {
		problems, n := SelfConsistent(tc.blocks, tc.ids, tc.lost)
		switch {
		case tc.want == "" && n > 0:
			t.Errorf("%s: %d problems %q, want none", tc.name, n, problems)
		case tc.want != "" && (n == 0 || !strings.Contains(problems[0], tc.want)):
			t.Errorf("%s: %q, want %q first", tc.name, problems, tc.want)
		}
	}
}
