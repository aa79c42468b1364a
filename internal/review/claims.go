// SPDX-License-Identifier: GPL-2.0-only

package review

import (
	"fmt"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/claims"
)

// ClaimsFile is where a walk made with CLAIMS=1 keeps the whole series'
// claims, arch by arch.
const ClaimsFile = "claims.txt"

// wholeClaims is what the claims plan measured on the whole series, by
// arch; none when the walk did not measure them or the last prefix was
// not booted.
func (w *Walk) wholeClaims() map[string]*claims.Report {
	out := map[string]*claims.Report{}
	for _, arch := range w.Arches {
		if steps := w.Steps[arch]; len(steps) > 0 && steps[len(steps)-1].Claims != nil {
			out[arch] = steps[len(steps)-1].Claims
		}
	}
	return out
}

// ClaimsText is claims.txt of the walk: each arch's claims of the whole
// series, or why there are none.
func (w *Walk) ClaimsText() string {
	var b strings.Builder
	got := w.wholeClaims()
	for _, arch := range w.Arches {
		fmt.Fprintf(&b, "==> %s, %s with all %d patches\n", arch, w.Series.Name, len(w.Series.Patches))
		if r := got[arch]; r != nil {
			b.WriteString(r.Text())
		} else {
			b.WriteString("not measured: the whole series did not boot on this arch\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// CompareClaims sets the claims of two versions of a series side by side,
// arch by arch, so that a change in the win shows.
func CompareClaims(old, cur *Walk) string {
	o, c := old.wholeClaims(), cur.wholeClaims()
	if len(o) == 0 && len(c) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "What the series claims, %s against %s, whole series:\n", old.Series.Name, cur.Series.Name)
	for _, arch := range cur.Arches {
		fmt.Fprintf(&b, "\n%-20s %-24s %s\n", arch, clip(old.Series.Name, 24), clip(cur.Series.Name, 24))
		ids := claimIDs(o[arch], c[arch])
		for _, id := range ids {
			fmt.Fprintf(&b, "%-20s %-24s %s\n", id, cell(o[arch], id), cell(c[arch], id))
		}
		if len(ids) == 0 {
			b.WriteString("  not measured on either\n")
		}
	}
	return b.String()
}

// claimIDs are the ids of claims either report has, in the order the
// reports give them.
func claimIDs(reports ...*claims.Report) []string {
	var ids []string
	seen := map[string]bool{}
	for _, r := range reports {
		if r == nil {
			continue
		}
		for _, c := range r.Claims {
			if !seen[c.ID] {
				seen[c.ID] = true
				ids = append(ids, c.ID)
			}
		}
	}
	return ids
}

// cell is a claim's figure and a short status, in 24 columns.
func cell(r *claims.Report, id string) string {
	if r == nil {
		return "(not measured)"
	}
	c, ok := r.Find(id)
	switch {
	case !ok:
		return "-"
	case c.Status == claims.CouldNotMeasure:
		return "could not measure"
	}
	short := map[claims.Status]string{claims.Reproduced: "ok", claims.Smaller: "smaller", claims.NotReproduced: "NOT", claims.NoFigure: ""}
	fig := fmt.Sprintf("%.2f%s", c.Value, c.Unit) // a ratio: "2.25x"
	switch c.Unit {
	case "MB", "us":
		fig = fmt.Sprintf("%.1f %s", c.Value, c.Unit)
	case "%":
		fig = fmt.Sprintf("%.1f%%", c.Value)
	}
	return clip(strings.TrimSpace(fig+" "+short[c.Status]), 24)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "~"
}
