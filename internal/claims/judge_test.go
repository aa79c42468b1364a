// SPDX-License-Identifier: GPL-2.0-only

package claims

import (
	"strings"
	"testing"
)

// round is a retention round with the numbers that matter.
func mkRound(mode string, events, bytes int, span float64, ids, full int) Round {
	return Round{Mode: mode, Runs: 10, Stats: CPUStats{Entries: int64(2 * events), Overrun: int64(8 * events), Bytes: int64(bytes)},
		Trace: Count{Events: events, IDs: ids, FullStacks: full, FirstTS: 10, LastTS: 10 + span, DeepFullStacks: full / 2}}
}

// sample is a default boot's sample whose slab workload keeps onEvents
// with the option, against 1000 with full stacks.
func sample(onEvents int) *Sample {
	const buf = 131072
	return &Sample{Kernel: "6.12.0", CPUs: 2,
		Pool: &Pool{Capacity: 1 << 14, Bytes: 8814592, VmallocUsedKB: 9000},
		Retention: []Retention{
			{Workload: WorkloadSlab, Event: "kmem/kmem_cache_alloc", BufferKB: 128, Rounds: []Round{
				mkRound(ModeEvent, 3000, buf, 1, 0, 0),
				mkRound(ModeFullStack, 1000, buf, 0.5, 0, 1000),
				mkRound(ModeStackmap, onEvents, buf, 0.5*float64(onEvents)/1000, onEvents, 0),
			}},
			{Workload: WorkloadDeep, Event: "net/net_dev_start_xmit", BufferKB: 128, Rounds: []Round{
				mkRound(ModeFullStack, 300, buf, 0.5, 0, 300),
				mkRound(ModeStackmap, 1500, buf, 2, 1500, 0),
			}},
			{Workload: WorkloadTooDeep, Event: "synthetic/s4", BufferKB: 128, Rounds: []Round{
				mkRound(ModeFullStack, 200, buf, 0.5, 0, 200),
				mkRound(ModeStackmap, 200, buf, 0.5, 0, 200),
			}},
		},
		HotPath: &HotPath{Workload: WorkloadSlab, RunsPerRep: 10, Timings: []Timing{
			{Mode: ModeOff, Nanos: []int64{10e6, 11e6, 10e6}, Events: []int64{0, 0, 0}},
			{Mode: ModeFullStack, Nanos: []int64{20e6, 21e6, 20e6}, Events: []int64{1000, 1000, 1000}},
			{Mode: ModeStackmap, Nanos: []int64{15e6, 15e6, 16e6}, Events: []int64{1000, 1000, 1000}},
		}},
		Dedup: &Dedup{CPUs: 2, Rounds: 6, Entries: 600, Stacks: 598, SplitStacks: 2, DuplicateIDs: 2, Checked: 600},
	}
}

func pools(bytes14 int64) []Boot {
	b := []Boot{}
	for _, bits := range []int{10, 12, 16, 18} {
		b = append(b, Boot{Name: "claims-bits-x", Bits: bits, Sample: &Sample{Pool: &Pool{Capacity: 1 << bits,
			Bytes: bytes14 << bits >> 14, VmallocUsedKB: 1000 + (bytes14<<bits>>14)/1024}}})
	}
	return b
}

func statusOf(t *testing.T, r Report, id string) Status {
	t.Helper()
	c, ok := r.Find(id)
	if !ok {
		t.Fatalf("no claim %s in %+v", id, r.Claims)
	}
	return c.Status
}

func TestJudgeReproduced(t *testing.T) {
	r := Judge("x86_64 on QEMU", true, append([]Boot{{Name: "claims", Sample: sample(2200)}}, pools(8814592)...))
	for id, want := range map[string]Status{
		"retention.events": Reproduced, "retention.bytes": Reproduced, "retention.span": CouldNotMeasure,
		"retention.depth": Reproduced, "retention.fallback": Reproduced,
		"pool.bits14": Reproduced, "pool.bits18": Reproduced, "pool.eager": Reproduced,
		"dedup": NoFigure, "dedup.lookup": Reproduced, "hot-path": NoFigure,
	} {
		if got := statusOf(t, r, id); got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
	// Only hardware times judge the span.
	if got := statusOf(t, Judge("a device", false, []Boot{{Name: "claims", Sample: sample(2200)}}), "retention.span"); got != Reproduced {
		t.Errorf("the span on a device: %s, want %s", got, Reproduced)
	}
	c, _ := r.Find("retention.events")
	if c.Measured != "2.20x" || c.Value != 2.2 {
		t.Errorf("events ratio: %q (%v), want 2.20x", c.Measured, c.Value)
	}
	h, _ := r.Find("hot-path")
	// (15 ms - 10 ms) / 10 runs / 100 events per run = 5 us.
	if h.Value != 5 {
		t.Errorf("hot path: %v us per event, want 5", h.Value)
	}
	text := r.Text()
	for _, want := range []string{"emulated (TCG)", "2.20x", "claimed", "rules (the README's)"} {
		if !strings.Contains(text, want) {
			t.Errorf("claims.txt lacks %q:\n%s", want, text)
		}
	}
	for _, l := range strings.Split(text, "\n") {
		if len(l) > 75 {
			t.Errorf("claims.txt line over 75 columns: %q", l)
		}
	}
}

// The rules at their edges: each status has a measurement that gives it.
func TestJudgeStatuses(t *testing.T) {
	for _, tc := range []struct {
		on   int
		want Status
	}{{1953, Reproduced}, {1952, Smaller}, {1100, Smaller}, {1099, NotReproduced}, {1000, NotReproduced}} {
		r := Judge("", false, []Boot{{Name: "claims", Sample: sample(tc.on)}})
		if got := statusOf(t, r, "retention.events"); got != tc.want {
			t.Errorf("%d against 1000 events: %s, want %s", tc.on, got, tc.want)
		}
	}
	for _, tc := range []struct {
		bytes int64
		want  Status
	}{{8 << 20, Reproduced}, {5 << 20, Smaller}, {11 << 20, NotReproduced}} {
		r := Judge("", false, []Boot{{Name: "claims", Sample: &Sample{Pool: &Pool{Capacity: 1 << 14, Bytes: tc.bytes}}}})
		if got := statusOf(t, r, "pool.bits14"); got != tc.want {
			t.Errorf("pool of %d bytes at 14: %s, want %s", tc.bytes, got, tc.want)
		}
	}
	// Duplicates: the series gives no figure, so however many there are
	// they are measured; an entry that does not count its own events is
	// what the series' words rule out.
	s := sample(2200)
	s.Dedup.DuplicateIDs, s.Dedup.SplitStacks = 9, 7
	r := Judge("", false, []Boot{{Name: "claims", Sample: s}})
	if got, lookup := statusOf(t, r, "dedup"), statusOf(t, r, "dedup.lookup"); got != NoFigure || lookup != Reproduced {
		t.Errorf("9 duplicates in 600, each consistent: %s and %s, want %s and %s", got, lookup, NoFigure, Reproduced)
	}
	s.Dedup.Faults, s.Dedup.Inconsistent = 1, []string{"round 2: stack_id 7: ref 3, but trace shows 2 events under it"}
	if c, _ := Judge("", false, []Boot{{Name: "claims", Sample: s}}).Find("dedup.lookup"); c.Status != NotReproduced || !strings.Contains(c.Measured, "stack_id 7: ref 3") {
		t.Errorf("an inconsistent entry: %s (%s), want %s naming it", c.Status, c.Measured, NotReproduced)
	}
	// No win at all: a deep ratio a hair above the slab's is no growth.
	s = sample(1000)
	s.Retention[1].Rounds[1] = mkRound(ModeStackmap, 301, 131072, 0.5, 301, 0)
	if got := statusOf(t, Judge("", false, []Boot{{Name: "claims", Sample: s}}), "retention.depth"); got != NotReproduced {
		t.Errorf("1.003x against 1.00x: %s, want %s", got, NotReproduced)
	}
	s = sample(2200)
	s.Retention[2].Rounds[1].Trace.DeepIDs = 5
	if got := statusOf(t, Judge("", false, []Boot{{Name: "claims", Sample: s}}), "retention.fallback"); got != NotReproduced {
		t.Errorf("ids for a too-deep stack: %s, want %s", got, NotReproduced)
	}
}

// Nothing measured is never a blank: each claim says why.
func TestJudgeCouldNotMeasure(t *testing.T) {
	r := Judge("", false, []Boot{{Name: "claims", Error: "the kernel panicked: boom"}})
	if len(r.Claims) == 0 {
		t.Fatal("no claims")
	}
	for _, c := range r.Claims {
		if c.Status != CouldNotMeasure || c.Why == "" {
			t.Errorf("%s: %s, %q; want could not measure with a reason", c.ID, c.Status, c.Why)
		}
	}
	if c, _ := r.Find("retention.events"); !strings.Contains(c.Why, "panicked") {
		t.Errorf("retention.events: %q, want the boot's error", c.Why)
	}
	s := sample(2200)
	s.Retention[0].Rounds[1].Stats.Overrun = 0
	if c, _ := Judge("", false, []Boot{{Name: "claims", Sample: s}}).Find("retention.events"); c.Status != CouldNotMeasure || !strings.Contains(c.Why, "did not wrap") {
		t.Errorf("an unwrapped buffer: %s %q, want could not measure", c.Status, c.Why)
	}
	s = &Sample{Missing: map[string]string{PartRetention: "the kernel has no stackmap"}}
	if c, _ := Judge("", false, []Boot{{Name: "claims", Sample: s}}).Find("retention.events"); !strings.Contains(c.Why, "no stackmap") {
		t.Errorf("a kernel without the feature: %q", c.Why)
	}
}
