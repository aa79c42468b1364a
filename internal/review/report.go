// SPDX-License-Identifier: GPL-2.0-only

package review

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

func sortedIDs(m map[string]contract.Class) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// short is a class in a table cell.
func short(c contract.Class) string {
	switch c {
	case contract.Unsupported:
		return "UNSUP"
	case contract.Unresolved:
		return "UNRES"
	case "":
		return "-"
	}
	return string(c)
}

// ids are the requirements any step of the arch judged.
func (w *Walk) ids(arch string) []string {
	seen := map[string]contract.Class{}
	for _, st := range w.Steps[arch] {
		for id, c := range st.Classes {
			seen[id] = c
		}
	}
	return sortedIDs(seen)
}

// Transition is a requirement whose class changed from one prefix to the
// next on one arch: the patch that changed it.
type Transition struct {
	K        int
	Arch     string
	ID       string
	From, To contract.Class
}

// Transitions are the changes between neighbouring prefixes that both
// ran the suite.
func (w *Walk) Transitions() []Transition {
	var out []Transition
	for _, arch := range w.Arches {
		steps := w.Steps[arch]
		for k := 1; k < len(steps); k++ {
			prev, cur := steps[k-1], steps[k]
			if prev.Classes == nil || cur.Classes == nil {
				continue
			}
			for _, id := range w.ids(arch) {
				if prev.Classes[id] != cur.Classes[id] {
					out = append(out, Transition{K: k, Arch: arch, ID: id, From: prev.Classes[id], To: cur.Classes[id]})
				}
			}
		}
	}
	return out
}

// cell is a step's row value for a requirement, marked when the patch
// changed it.
func (w *Walk) cell(arch string, k int, id string) string {
	steps := w.Steps[arch]
	st := steps[k]
	if st.Classes == nil {
		return "-"
	}
	s := short(st.Classes[id])
	if k > 0 && steps[k-1].Classes != nil && steps[k-1].Classes[id] != st.Classes[id] {
		s += "*"
	}
	return s
}

// State is how one part of a step went (its build, its boot, the step as
// a whole); the table shows it in a word.
type State int

const (
	NotMade   State = iota // "-": not made, or nothing to judge
	OK                     // "ok"
	Cached                 // "cached": a build found in the cache
	Failed                 // "FAIL"
	NoVerdict              // "NOVERD": no verdict to trust
)

func (s State) String() string {
	return [...]string{NotMade: "-", OK: "ok", Cached: "cached", Failed: "FAIL", NoVerdict: "NOVERD"}[s]
}

// What Step.Build and Step.Boot say of a part that went well, and how
// Step.Build begins for a part not made.
const (
	stepOK  = "ok"
	notMade = "not made"
)

func stepBuild(st *Step) State {
	switch {
	case st.Build == stepOK && st.Cached:
		return Cached
	case st.Build == stepOK:
		return OK
	case strings.HasPrefix(st.Build, notMade):
		return NotMade
	}
	return Failed
}

func stepBoot(st *Step) State {
	switch {
	case st.Infra != "" && (st.Boot == stepOK || st.Boot == ""):
		return NoVerdict
	case st.Boot == stepOK:
		return OK
	case st.Boot == "":
		return NotMade
	}
	return Failed
}

func stepVerdict(st *Step) State {
	switch {
	case len(st.Problems) > 0:
		return Failed
	case st.Infra != "":
		return NoVerdict
	case st.Classes == nil:
		return NotMade
	}
	return OK
}

// Text is series.txt: the per-patch table, fit for a mail.
func (w *Walk) Text() string {
	var b strings.Builder
	n := len(w.Series.Patches)
	fmt.Fprintf(&b, "Series walk: %s, %d patches\n", w.Series.Name, n)
	fmt.Fprintf(&b, "on %s at %s (%.12s)%s\n\n", w.Tree, w.Series.Base, w.Commit, laneWords(w.Sanitized))
	for k := 0; k <= n; k++ {
		b.WriteString(report.Clip(fmt.Sprintf("  %d/%d  %s", k, n, subjectOf(w.Series, k)), report.Width) + "\n")
	}
	for _, arch := range w.Arches {
		steps := w.Steps[arch]
		b.WriteString("\n")
		row := func(label string, cell func(k int) string) {
			line := fmt.Sprintf("%-16s", label)
			for k := range steps {
				line += fmt.Sprintf(" %-7s", cell(k))
			}
			b.WriteString(strings.TrimRight(line, " ") + "\n")
		}
		row(arch, func(k int) string { return fmt.Sprintf("%d/%d", k, n) })
		row("build", func(k int) string { return stepBuild(steps[k]).String() })
		row("boot", func(k int) string { return stepBoot(steps[k]).String() })
		row("time", func(k int) string { return steps[k].Wall.Round(time.Second).String() })
		row("warnings", func(k int) string {
			if k == 0 || !steps[k].built {
				return "-"
			}
			return fmt.Sprint(len(steps[k].Warnings))
		})
		if w.hasDecoder(arch) {
			row("decoder", func(k int) string { return orDash(steps[k].Decoder) })
		}
		for _, id := range w.ids(arch) {
			row(id, func(k int) string { return w.cell(arch, k, id) })
		}
		row("verdict", func(k int) string { return stepVerdict(steps[k]).String() })
	}
	b.WriteString("\n* the patch of that column changed the requirement's result\n")
	if ch := w.changes(); ch != "" {
		b.WriteString("\nWhat each patch changed:\n" + ch)
	}
	if p := w.problems(); p != "" {
		b.WriteString("\nProblems:\n" + p)
	}
	if ws := w.warnings(); ws != "" {
		b.WriteString("\nCompiler warnings in the files each patch touches:\n" + ws)
	}
	fmt.Fprintf(&b, "\nWalk: %s, %s\n", w.Verdict(), w.Wall.Round(time.Second))
	return b.String()
}

// changes lists, per patch and arch, the requirements it moved from one
// class to another, grouped.
func (w *Walk) changes() string { return w.changesOf(-1) }

// changesOf is changes for patch k alone (all patches when k < 0).
func (w *Walk) changesOf(only int) string {
	type key struct {
		k        int
		arch     string
		from, to contract.Class
	}
	groups := map[key][]string{}
	var order []key
	for _, t := range w.Transitions() {
		if only >= 0 && t.K != only {
			continue
		}
		kk := key{t.K, t.Arch, t.From, t.To}
		if groups[kk] == nil {
			order = append(order, kk)
		}
		groups[kk] = append(groups[kk], t.ID)
	}
	var b strings.Builder
	for _, kk := range order {
		head := fmt.Sprintf("  %d/%d %s: %s -> %s: ", kk.k, len(w.Series.Patches), kk.arch, orNone(kk.from), orNone(kk.to))
		b.WriteString(report.Wrap(head, "      ", strings.Join(groups[kk], ", ")))
	}
	return b.String()
}

func orNone(c contract.Class) string {
	if c == "" {
		return "not run"
	}
	return string(c)
}

func (w *Walk) problems() string {
	return w.perStep(func(st *Step) []string {
		lines := st.Problems
		if st.Infra != "" {
			lines = append(append([]string{}, lines...), "no verdict: "+st.Infra)
		}
		return lines
	})
}

// perStep lists what lines gives for each step, headed by its prefix and
// arch, wrapped.
func (w *Walk) perStep(lines func(*Step) []string) string {
	var b strings.Builder
	for _, arch := range w.Arches {
		for _, st := range w.Steps[arch] {
			for _, l := range lines(st) {
				b.WriteString(report.Wrap(fmt.Sprintf("  %d/%d %s: ", st.K, len(w.Series.Patches), arch), "      ", l))
			}
		}
	}
	return b.String()
}

func (w *Walk) hasDecoder(arch string) bool {
	for _, st := range w.Steps[arch] {
		if st.Decoder != "" {
			return true
		}
	}
	return false
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (w *Walk) warnings() string {
	return w.perStep(func(st *Step) []string { return st.Warnings })
}

// Verdict is the walk's in a word or three.
func (w *Walk) Verdict() string {
	switch w.ExitCode() {
	case 0:
		return "ok"
	case 1:
		return "FAIL"
	}
	return "NO VERDICT"
}

// Counts are the walk's prefixes on every arch: passed, failed, and not
// judged (not made, or no verdict).
func (w *Walk) Counts() (passed, failed, skipped int) {
	for _, arch := range w.Arches {
		for _, st := range w.Steps[arch] {
			switch stepVerdict(st) {
			case OK:
				passed++
			case Failed:
				failed++
			default:
				skipped++
			}
		}
	}
	return
}

// Compare shows, per requirement, the whole series of one version against
// the other's: what changed from one posting to the next.
func Compare(old, cur *Walk) string {
	var b strings.Builder
	fmt.Fprintf(&b, "From %s (%d patches) to %s (%d patches), whole series:\n",
		old.Series.Name, len(old.Series.Patches), cur.Series.Name, len(cur.Series.Patches))
	for _, arch := range cur.Arches {
		o, c := old.Steps[arch], cur.Steps[arch]
		if len(o) == 0 || len(c) == 0 {
			continue
		}
		last, lastOld := c[len(c)-1], o[len(o)-1]
		fmt.Fprintf(&b, "\n%-16s %-8s %s\n", arch, "before", "after")
		fmt.Fprintf(&b, "%-16s %-8s %s\n", "verdict", stepVerdict(lastOld), stepVerdict(last))
		ids := map[string]contract.Class{}
		for id, cl := range last.Classes {
			ids[id] = cl
		}
		for id, cl := range lastOld.Classes {
			ids[id] = cl
		}
		changed := 0
		for _, id := range sortedIDs(ids) {
			mark := ""
			if lastOld.Classes[id] != last.Classes[id] {
				mark, changed = "  changed", changed+1
			}
			b.WriteString(strings.TrimRight(fmt.Sprintf("%-16s %-8s %-8s%s", id, short(lastOld.Classes[id]), short(last.Classes[id]), mark), " ") + "\n")
		}
		fmt.Fprintf(&b, "%d requirements changed on %s\n", changed, arch)
	}
	return b.String()
}
