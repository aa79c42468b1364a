// SPDX-License-Identifier: GPL-2.0-only

package claims

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/textlines"
)

// Rules are the rules that decide each status, for the reports' readers.
var Rules = []string{
	"ratios: " + ruleRatio,
	"pool: " + rulePool,
	"depth: " + ruleDepth,
	"fallback: " + ruleFall,
	"eager pool: " + ruleEager,
	"dedup: " + ruleDedup,
	"dedup.lookup: " + ruleLookup,
}

// JSON is claims.json.
func (r Report) JSON() ([]byte, error) { return json.MarshalIndent(r, "", "  ") }

// Counts are how many claims got each status.
func (r Report) Counts() map[Status]int {
	n := map[Status]int{}
	for _, c := range r.Claims {
		n[c.Status]++
	}
	return n
}

// Line is the report in one line: "claims: 6 reproduced, 1 not
// reproduced, ...", statuses in a fixed order, those with none left out.
func (r Report) Line() string {
	n := r.Counts()
	var parts []string
	for _, s := range []Status{Reproduced, Smaller, NotReproduced, CouldNotMeasure, NoFigure} {
		if n[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
		}
	}
	if len(parts) == 0 {
		return "claims: none judged"
	}
	return "claims: " + strings.Join(parts, ", ")
}

// Figures are a claim's claimed and measured figures, or why there is
// no measured one.
func (c Claim) Figures() string {
	if c.Status == CouldNotMeasure {
		return "claimed " + c.Claimed + "; " + c.Why
	}
	return "claimed " + c.Claimed + ", measured " + c.Measured
}

// Sentence is the claims for a reply on the list: each measured figure
// beside the claimed one with its status, then what could not be measured.
func (r Report) Sentence() string {
	var parts, missing []string
	for _, c := range r.Claims {
		switch c.Status {
		case CouldNotMeasure:
			missing = append(missing, c.ID)
		case NoFigure:
			parts = append(parts, fmt.Sprintf("%s %s (no figure claimed)", c.ID, c.Measured))
		default:
			parts = append(parts, fmt.Sprintf("%s %s against %s, %s", c.ID, c.Measured, c.Claimed, c.Status))
		}
	}
	s := strings.Join(parts, "; ")
	if len(missing) > 0 {
		s += "; not measured: " + strings.Join(missing, ", ")
	}
	if r.Emulated {
		s += "; under emulation (TCG), so the times are not hardware times"
	}
	return s + "."
}

// Measured says whether any boot brought back a sample.
func (r Report) Measured() bool {
	for _, b := range r.Boots {
		if b.Sample != nil {
			return true
		}
	}
	return false
}

// Find returns the claim with id, if the report has it.
func (r Report) Find(id string) (Claim, bool) {
	for _, c := range r.Claims {
		if c.ID == id {
			return c, true
		}
	}
	return Claim{}, false
}

// modeName is how the table names a mode, as the cover letter does.
var modeName = map[string]string{
	ModeEvent:     "no stack",
	ModeFullStack: "stackmap off",
	ModeStackmap:  "stackmap on",
	ModeOff:       "tracing off",
}

// Text is claims.txt: the cover letter's table with the measured figures
// beside the claimed ones, then each claim's status, the pool per size,
// the hot path and the contention rounds, then the rules.
func (r Report) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "What the stackmap series claims, measured\n")
	b.WriteString(textlines.Wrap("kernel:  ", "         ", orNone(r.Kernel)))
	b.WriteString(textlines.Wrap("machine: ", "         ", orNone(r.Machine)))
	var boots []string
	for _, bt := range r.Boots {
		cpus := "? CPUs"
		if bt.Sample != nil {
			cpus = fmt.Sprintf("%d CPUs", bt.Sample.CPUs)
			if bt.Sample.CPUs == 1 {
				cpus = "1 CPU"
			}
		}
		size := "default size"
		if bt.Bits > 0 {
			size = fmt.Sprintf("bits=%d", bt.Bits)
		}
		boots = append(boots, fmt.Sprintf("%s (%s, %s)", bt.Name, size, cpus))
	}
	b.WriteString(textlines.Wrap("boots:   ", "         ", strings.Join(boots, ", ")))
	if r.Emulated {
		b.WriteString("         emulated (TCG): times are not hardware times; only\n")
		b.WriteString("         KVM or a device gives those. Counts and bytes are exact.\n")
	}
	workloads := []string{}
	for _, row := range r.Rows {
		if len(workloads) == 0 || workloads[len(workloads)-1] != row.Workload {
			workloads = append(workloads, row.Workload)
		}
	}
	for _, w := range workloads {
		r.retentionTable(&b, w)
	}
	b.WriteString("\nclaims:\n")
	for _, c := range r.Claims {
		b.WriteString(textlines.Wrap("  "+string(c.Status)+": ", "      ", c.What))
		b.WriteString(textlines.Wrap("      ", "      ", c.Figures()))
	}
	if len(r.Pool) > 0 {
		b.WriteString("\npool at boot (option never set):\n")
		b.WriteString("  bits  capacity   by caller name   vs smallest: by name / VmallocUsed\n")
		for _, p := range r.Pool {
			fmt.Fprintf(&b, "  %4d  %8d  %10.1f MB   %+10.1f MB / %+.1f MB\n", p.Bits, p.Capacity,
				mb(p.Bytes), mb(p.BytesDelta), float64(p.VmallocDeltaKB)/1024)
		}
	}
	if len(r.HotPath) > 0 {
		b.WriteString("\n")
		b.WriteString(textlines.Wrap("hot path: ", "  ", r.HotWorkload+" in a loop, medians; the cost per event is beyond the workload alone:"))
		b.WriteString("  mode           per run     events/run   per event (min-max)\n")
		for _, h := range r.HotPath {
			cost := "-"
			if h.Mode != ModeOff {
				cost = fmt.Sprintf("%.2f us (%.2f-%.2f)", h.NanosPerEvt/1e3, h.MinPerEvt/1e3, h.MaxPerEvt/1e3)
			}
			fmt.Fprintf(&b, "  %-13s %8.0f us  %10.1f   %s, %d reps\n", modeName[h.Mode], h.NanosPerRun/1e3, h.EventsPerRun, cost, h.Reps)
		}
	}
	if d := r.Dedup; d != nil {
		fmt.Fprintf(&b, "\ncontention: %d rounds, %d CPUs running one workload at once into an\n", d.Rounds, d.CPUs)
		fmt.Fprintf(&b, "  empty map: %d entries, %d distinct stacks, %d split, %d duplicate ids\n", d.Entries, d.Stacks, d.SplitStacks, d.DuplicateIDs)
	}
	var failed []string
	for _, bt := range r.Boots {
		if bt.Error != "" {
			failed = append(failed, "  boot "+bt.Name+": "+bt.Error)
		}
	}
	if len(failed) > 0 {
		b.WriteString("\nboots that brought back no measurement:\n" + strings.Join(failed, "\n") + "\n")
	}
	b.WriteString("\nrules (the README's):\n")
	for _, rule := range Rules {
		b.WriteString(textlines.Wrap("  ", "    ", rule))
	}
	b.WriteString("claims never change the conformance verdict or the exit status.\n")
	return b.String()
}

// retentionTable is one workload's rows, shaped as the cover letter's
// table, with the ratios and, for the slab workload, its claims.
func (r Report) retentionTable(b *strings.Builder, workload string) {
	var rows []RetentionRow
	for _, row := range r.Rows {
		if row.Workload == workload {
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\nretention, %s workload: %s\n", workload, rows[0].Event)
	fmt.Fprintf(b, "  the same %d KB per-CPU buffer, overwritten, the workload on CPU 0\n", rows[0].BufferKB)
	fmt.Fprintf(b, "  %-14s %15s %13s %11s %9s\n", "", "retained events", "bytes/event", "time span", "overrun")
	var off, on *RetentionRow
	for i, row := range rows {
		fmt.Fprintf(b, "  %-14s %15d %11.1f B %9.3f s %9d\n", modeName[row.Mode], row.Events, row.BytesPerEvent, row.SpanSeconds, row.Overrun)
		switch row.Mode {
		case ModeFullStack:
			off = &rows[i]
		case ModeStackmap:
			on = &rows[i]
		}
	}
	if off != nil && on != nil && off.Events > 0 && on.Events > 0 && on.BytesPerEvent > 0 && off.SpanSeconds > 0 {
		fmt.Fprintf(b, "  %-14s %14.2fx %12.2fx %10.2fx\n", "measured", float64(on.Events)/float64(off.Events),
			off.BytesPerEvent/on.BytesPerEvent, on.SpanSeconds/off.SpanSeconds)
	}
	if workload == WorkloadSlab {
		fmt.Fprintf(b, "  %-14s %14.2fx %12.2fx %10.2fx  (a phone)\n", "claimed", claimedEvents, claimedBytes, claimedSpan)
	}
	if on != nil {
		fmt.Fprintf(b, "  with the option: %d ids, %d full stacks", on.IDs, on.FullStacks)
		if on.DeepFullStacks+on.DeepIDs > 0 {
			fmt.Fprintf(b, " (%d over 64 frames)", on.DeepFullStacks+on.DeepIDs)
		}
		b.WriteString("\n")
	}
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

func orNone(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}
