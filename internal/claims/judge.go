// SPDX-License-Identifier: GPL-2.0-only

package claims

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
)

// Judge measures each claim against the boots' samples.
func Judge(machine string, emulated bool, boots []Boot) Report {
	r := Report{Machine: machine, Emulated: emulated, Boots: boots}
	main := mainSample(boots)
	if main != nil {
		r.Kernel = main.Kernel
	}
	r.retention(main)
	r.pool(boots)
	r.hotPath(main)
	r.dedup(main)
	return r
}

// mainSample is the default boot's sample: the one that measures
// retention, the hot path and deduplication.
func mainSample(boots []Boot) *Sample {
	for _, b := range boots {
		if b.Bits == 0 {
			return b.Sample
		}
	}
	return nil
}

// why is the reason a part was not measured: the sample's, or the boot's.
func why(s *Sample, part string, boots []Boot) string {
	if s == nil {
		for _, b := range boots {
			if b.Bits == 0 && b.Error != "" {
				return b.Error
			}
		}
		return "the default claims boot brought back nothing"
	}
	if m := s.Missing[part]; m != "" {
		return m
	}
	if whole, _, ok := strings.Cut(part, "/"); ok && s.Missing[whole] != "" {
		return s.Missing[whole]
	}
	return "not measured"
}

func (r *Report) add(c Claim) { r.Claims = append(r.Claims, c) }

func (r *Report) missing(id, what, claimed, reason string) {
	r.add(Claim{ID: id, What: what, Claimed: claimed, Status: CouldNotMeasure, Why: reason})
}

// ratioStatus applies ruleRatio.
func ratioStatus(measured, claimed float64) Status {
	switch {
	case measured >= 0.9*claimed:
		return Reproduced
	case measured >= 1.1:
		return Smaller
	}
	return NotReproduced
}

func (r *Report) retention(s *Sample) {
	byWorkload := map[string]map[string]RetentionRow{}
	var order []string
	if s != nil {
		for _, w := range s.Retention {
			byWorkload[w.Workload] = map[string]RetentionRow{}
			order = append(order, w.Workload)
			for _, rd := range w.Rounds {
				row := RetentionRow{Workload: w.Workload, Event: w.Event, Mode: rd.Mode, BufferKB: w.BufferKB,
					Events: rd.Trace.Events, SpanSeconds: rd.Trace.Span(), Overrun: rd.Stats.Overrun,
					IDs: rd.Trace.IDs, FullStacks: rd.Trace.FullStacks, DeepFullStacks: rd.Trace.DeepFullStacks, DeepIDs: rd.Trace.DeepIDs}
				if rd.Trace.Events > 0 {
					row.BytesPerEvent = float64(rd.Stats.Bytes) / float64(rd.Trace.Events)
				}
				r.Rows = append(r.Rows, row)
				byWorkload[w.Workload][rd.Mode] = row
			}
		}
	}
	ratio := func(workload string) (events, bytes, span float64, err string) {
		m := byWorkload[workload]
		off, on := m[ModeFullStack], m[ModeStackmap]
		switch {
		case m == nil:
			return 0, 0, 0, why(s, PartRetention+"/"+workload, r.Boots)
		case off.Events == 0 || on.Events == 0:
			return 0, 0, 0, fmt.Sprintf("%s: no events retained (%d with full stacks, %d with the option)", workload, off.Events, on.Events)
		case off.Overrun == 0 || on.Overrun == 0:
			return 0, 0, 0, fmt.Sprintf("%s: the buffer did not wrap, so its size did not bound what it kept", workload)
		}
		events = float64(on.Events) / float64(off.Events)
		bytes = off.BytesPerEvent / on.BytesPerEvent
		if off.SpanSeconds > 0 {
			span = on.SpanSeconds / off.SpanSeconds
		}
		return events, bytes, span, ""
	}
	const tableWhat = "slab workload, same per-CPU buffer, option off vs on"
	events, bytes, span, err := ratio(WorkloadSlab)
	if s == nil && err == "" {
		err = why(nil, PartRetention, r.Boots)
	}
	if err != "" {
		r.missing("retention.events", "retained events, "+tableWhat, "2.17x", err)
		r.missing("retention.bytes", "bytes per event, "+tableWhat, "2.17x", err)
		r.missing("retention.span", "time span, "+tableWhat, "1.85x", err)
	} else {
		r.add(Claim{ID: "retention.events", What: "retained events, " + tableWhat, Claimed: "2.17x", Measured: fmt.Sprintf("%.2fx", events),
			Value: round(events, 3), ClaimedValue: claimedEvents, Unit: "x", Status: ratioStatus(events, claimedEvents), Why: ruleRatio})
		r.add(Claim{ID: "retention.bytes", What: "bytes per event, " + tableWhat, Claimed: "2.17x", Measured: fmt.Sprintf("%.2fx", bytes),
			Value: round(bytes, 3), ClaimedValue: claimedBytes, Unit: "x", Status: ratioStatus(bytes, claimedBytes), Why: ruleRatio})
		c := Claim{ID: "retention.span", What: "time span, " + tableWhat, Claimed: "1.85x", Measured: fmt.Sprintf("%.2fx", span),
			Value: round(span, 3), ClaimedValue: claimedSpan, Unit: "x", Status: ratioStatus(span, claimedSpan), Why: ruleRatio}
		switch {
		case span == 0:
			c.Status, c.Measured, c.Why = CouldNotMeasure, "", "the events of the full-stack round carry no time span"
		case r.Emulated:
			// Under TCG recording a stack takes another share of the time
			// than on hardware, so the span's ratio says nothing of it.
			c.Status, c.Why = CouldNotMeasure, fmt.Sprintf("measured %.2fx, but under emulation (TCG) times are not hardware times: judged only with KVM or on a device", span)
		}
		r.add(c)
	}
	deep, _, _, derr := ratio(WorkloadDeep)
	const depthWhat = "the win grows with stack depth (deep workload against slab)"
	switch {
	case err != "":
		r.missing("retention.depth", depthWhat, "larger", err)
	case derr != "":
		r.missing("retention.depth", depthWhat, "larger", derr)
	default:
		st := NotReproduced
		if deep > events && deep >= 1.1 {
			st = Reproduced
		}
		r.add(Claim{ID: "retention.depth", What: depthWhat, Claimed: "larger", Measured: fmt.Sprintf("%.2fx against %.2fx", deep, events),
			Value: round(deep, 3), Unit: "x", Status: st, Why: ruleDepth})
	}
	r.fallback(byWorkload[WorkloadTooDeep], s)
}

// fallback judges the declared limit: stacks deeper than 64 frames are
// stored in full, never under an id.
func (r *Report) fallback(m map[string]RetentionRow, s *Sample) {
	const what = "stacks deeper than 64 frames fall back to full stacks"
	on, ok := m[ModeStackmap]
	switch {
	case !ok:
		r.missing("retention.fallback", what, "all", why(s, PartRetention+"/"+WorkloadTooDeep, r.Boots))
		return
	case on.DeepFullStacks+on.DeepIDs == 0:
		r.missing("retention.fallback", what, "all", fmt.Sprintf("no stack deeper than 64 frames among the %d events retained", on.Events))
		return
	}
	deep := on.DeepFullStacks + on.DeepIDs
	st := NotReproduced
	if on.DeepIDs == 0 {
		st = Reproduced
	}
	r.add(Claim{ID: "retention.fallback", What: what, Claimed: "all",
		Measured: fmt.Sprintf("%d of %d such stacks in full, %d under an id", on.DeepFullStacks, deep, on.DeepIDs),
		Value:    round(100*float64(on.DeepFullStacks)/float64(deep), 1), Unit: "%", Status: st, Why: ruleFall})
}

func (r *Report) pool(boots []Boot) {
	for _, b := range boots {
		if b.Sample == nil || b.Sample.Pool == nil {
			continue
		}
		p := b.Sample.Pool
		// The size the map has, whatever the boot asked for.
		bits := int(math.Round(math.Log2(float64(max(p.Capacity, 1)))))
		r.Pool = append(r.Pool, PoolRow{Boot: b.Name, Bits: bits, Capacity: p.Capacity, Bytes: p.Bytes, VmallocDeltaKB: p.VmallocUsedKB})
	}
	sort.SliceStable(r.Pool, func(i, j int) bool { return r.Pool[i].Capacity < r.Pool[j].Capacity })
	if len(r.Pool) > 0 {
		smallest := r.Pool[0]
		for i := range r.Pool {
			r.Pool[i].VmallocDeltaKB -= smallest.VmallocDeltaKB
			r.Pool[i].BytesDelta = r.Pool[i].Bytes - smallest.Bytes
		}
	}
	for _, want := range []struct {
		id      string
		bits    int
		claimed int64
	}{{"pool.bits14", 14, claimedPool14}, {"pool.bits18", 18, claimedPool18}} {
		what := fmt.Sprintf("the pool's memory at bits=%d, allocated at boot", want.bits)
		claimed := fmt.Sprintf("~%d MB", want.claimed>>20)
		i := slices.IndexFunc(r.Pool, func(p PoolRow) bool { return p.Capacity == 1<<want.bits })
		switch {
		case i < 0:
			r.missing(want.id, what, claimed, poolMissing(boots, want.bits))
			continue
		case r.Pool[i].Bytes == 0:
			r.missing(want.id, what, claimed, fmt.Sprintf("no vmalloc caller names the stackmap (VmallocUsed is %d kB above the smallest map's boot)", r.Pool[i].VmallocDeltaKB))
			continue
		}
		got := r.Pool[i].Bytes
		ratio := float64(got) / float64(want.claimed)
		st := Reproduced
		switch {
		case ratio < 0.75:
			st = Smaller
		case ratio > 1.25:
			st = NotReproduced
		}
		r.add(Claim{ID: want.id, What: what, Claimed: claimed, Measured: fmt.Sprintf("%.1f MB", float64(got)/(1<<20)),
			Value: round(float64(got)/(1<<20), 2), ClaimedValue: float64(want.claimed) / (1 << 20), Unit: "MB", Status: st, Why: rulePool})
	}
	const eager = "the pool is allocated at boot, option on or not"
	for _, b := range boots {
		if b.Sample == nil || b.Sample.Pool == nil || b.Sample.Pool.OptionOn {
			continue
		}
		st := NotReproduced
		if b.Sample.Pool.Bytes > 0 {
			st = Reproduced
		}
		r.add(Claim{ID: "pool.eager", What: eager, Claimed: "yes", Measured: fmt.Sprintf("%.1f MB with the option never set (boot %s)", float64(b.Sample.Pool.Bytes)/(1<<20), b.Name),
			Value: round(float64(b.Sample.Pool.Bytes)/(1<<20), 2), Unit: "MB", Status: st, Why: ruleEager})
		return
	}
	r.missing("pool.eager", eager, "yes", "no boot measured the pool with the option off")
}

// poolMissing says why no boot measured a map of 2^bits.
func poolMissing(boots []Boot, bits int) string {
	for _, b := range boots {
		if b.Bits == bits || bits == 14 && b.Bits == 0 {
			if b.Error != "" {
				return "boot " + b.Name + ": " + b.Error
			}
			if b.Sample != nil && b.Sample.Missing[PartPool] != "" {
				return "boot " + b.Name + ": " + b.Sample.Missing[PartPool]
			}
			if b.Sample != nil && b.Sample.Pool != nil {
				return fmt.Sprintf("boot %s has a map of %d, not %d", b.Name, b.Sample.Pool.Capacity, 1<<bits)
			}
		}
	}
	return fmt.Sprintf("no boot with a map of 2^%d", bits)
}

func (r *Report) hotPath(s *Sample) {
	const what = "cost per event on the hot path (the series gives no figure)"
	if s == nil || s.HotPath == nil {
		r.missing("hot-path", what, "none", why(s, PartHotPath, r.Boots))
		return
	}
	h := s.HotPath
	r.HotWorkload = h.Workload
	perRun := map[string][]float64{}
	for _, t := range h.Timings {
		for _, n := range t.Nanos {
			perRun[t.Mode] = append(perRun[t.Mode], float64(n)/float64(h.RunsPerRep))
		}
	}
	off := median(perRun[ModeOff])
	for _, t := range h.Timings {
		row := HotRow{Mode: t.Mode, NanosPerRun: median(perRun[t.Mode]), Reps: len(t.Nanos)}
		var evs, costs []float64
		for i, n := range t.Nanos {
			if i >= len(t.Events) {
				break
			}
			ev := float64(t.Events[i]) / float64(h.RunsPerRep)
			evs = append(evs, ev)
			if t.Mode != ModeOff && ev > 0 {
				costs = append(costs, (float64(n)/float64(h.RunsPerRep)-off)/ev)
			}
		}
		row.EventsPerRun = median(evs)
		if len(costs) > 0 {
			row.NanosPerEvt, row.MinPerEvt, row.MaxPerEvt = median(costs), slices.Min(costs), slices.Max(costs)
		}
		r.HotPath = append(r.HotPath, row)
	}
	i := slices.IndexFunc(r.HotPath, func(h HotRow) bool { return h.Mode == ModeStackmap })
	j := slices.IndexFunc(r.HotPath, func(h HotRow) bool { return h.Mode == ModeFullStack })
	if i < 0 || j < 0 || r.HotPath[i].NanosPerEvt == 0 {
		r.missing("hot-path", what, "none", "the timing has no stackmap or full-stack mode with events")
		return
	}
	sm, fs := r.HotPath[i], r.HotPath[j]
	r.add(Claim{ID: "hot-path", What: what, Claimed: "none",
		Measured: fmt.Sprintf("%.1f us with the option, %.1f us with full stacks", sm.NanosPerEvt/1e3, fs.NanosPerEvt/1e3),
		Value:    round(sm.NanosPerEvt/1e3, 2), Unit: "us", Status: NoFigure, Why: "reported, not judged"})
}

func (r *Report) dedup(s *Sample) {
	const what = "deduplication is best-effort: a small number of duplicates when CPUs race"
	if s == nil || s.Dedup == nil {
		r.missing("dedup", what, "a small number under heavy contention", why(s, PartDedup, r.Boots))
		return
	}
	d := *s.Dedup
	r.Dedup = &d
	if d.Entries == 0 {
		r.missing("dedup", what, "a small number under heavy contention", "the rounds left no entry in the map")
		return
	}
	// "A small number under heavy contention" gives no figure to hold a
	// count to: the count is measured and shown, not judged.
	share := float64(d.DuplicateIDs) / float64(d.Entries)
	r.add(Claim{ID: "dedup", What: what, Claimed: "a small number under heavy contention",
		Measured: fmt.Sprintf("%d duplicate ids of %d entries (%d stacks split), %d CPUs racing into an empty map, %d rounds", d.DuplicateIDs, d.Entries, d.SplitStacks, d.CPUs, d.Rounds),
		Value:    round(100*share, 2), Unit: "%", Status: NoFigure, Why: ruleDedup})
	r.selfConsistent(d)
}

// selfConsistent judges the part of the claim that can be checked: each
// entry, a duplicate too, resolves and counts its own events.
func (r *Report) selfConsistent(d Dedup) {
	const what = "lookup correctness is unaffected: each duplicate a self-consistent entry with its own stack_id"
	claimed := "every entry"
	if d.Checked == 0 {
		r.missing("dedup.lookup", what, claimed, "the sample holds no check of the entries against trace")
		return
	}
	measured := fmt.Sprintf("%d entries (%d duplicate ids) against the <stack_id N> of trace, %d ids against the stack captured for their event", d.Checked, d.DuplicateIDs, d.IDsHeld)
	if d.LostRounds > 0 {
		measured += fmt.Sprintf("; in %d rounds the ring buffer lost events, so a ref count could only be held to at least what trace shows", d.LostRounds)
	}
	st := Reproduced
	if d.Faults > 0 {
		st = NotReproduced
		measured = fmt.Sprintf("%d inconsistencies in %s: %s", d.Faults, measured, strings.Join(d.Inconsistent, "; "))
	}
	r.add(Claim{ID: "dedup.lookup", What: what, Claimed: claimed, Measured: measured, Status: st, Why: ruleLookup})
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

// JudgeSampleFile judges a sample the suite binary took in live mode on a
// device (suites.test -smct.claims=all), where the kernel's own map size
// was the only one there was.
func JudgeSampleFile(path string) (Report, error) {
	data, err := os.ReadFile(path)
	var s Sample
	if err == nil {
		err = json.Unmarshal(data, &s)
	}
	if err != nil {
		return Report{}, fmt.Errorf("-sample %s: %v", path, err)
	}
	return Judge("a device, live mode ("+path+")", false, []Boot{{Name: "live", Sample: &s}}), nil
}
