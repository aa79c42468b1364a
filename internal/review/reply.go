// SPDX-License-Identifier: GPL-2.0-only

package review

import (
	"fmt"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/reply"
	"github.com/ftrace-stackmap/conformance/internal/results"
)

// Reply is what a reply to the series says of the walk: per arch, the
// whole series' result and every requirement a prefix failed or left
// UNRESOLVED, with the first prefix that did.
func (w *Walk) Reply(profile contract.Profile) reply.Report {
	n := len(w.Series.Patches)
	r := reply.Report{
		What: [][2]string{{"tree", w.Tree}, {"base", fmt.Sprintf("%s %.12s", w.Series.Base, w.Commit)},
			{"arches", strings.Join(w.Arches, ", ")}, {"QEMU", w.machines()}, {"profile", profile.String()}},
		Table: w.Text(),
	}
	if w.Sanitized != "" {
		r.What = append(r.What, [2]string{"config", w.Sanitized})
	}
	var failed []string
	for _, arch := range w.Arches {
		run := reply.Run{Arch: arch, Passed: true, Verdict: OK.String()}
		if c := w.wholeClaims()[arch]; c != nil {
			run.Claims = c.Sentence()
		}
		p, f := 0, 0
		seen := map[string]bool{}
		for k, st := range w.Steps[arch] {
			switch stepVerdict(st) {
			case OK:
				p++
			case Failed:
				f++
				run.Passed, run.Verdict = false, Failed.String()
			default:
				if run.Passed {
					run.Passed, run.Verdict = false, "NO VERDICT: "+st.Infra
				}
			}
			for _, id := range sortedIDs(st.Classes) {
				c := st.Classes[id]
				if (c == contract.Fail || c == contract.Unresolved) && !seen[id] {
					seen[id] = true
					failed = append(failed, id)
					run.Failures = append(run.Failures, reply.Failure{Class: c, ID: id, Requirement: reply.Requirement(id, ""),
						Observed: fmt.Sprintf("from %d/%d: %s", k, n, st.Reasons[id])})
				}
			}
		}
		run.Closing = fmt.Sprintf("%d of %d prefixes ok, %d failed", p, len(w.Steps[arch]), f)
		if last := w.Steps[arch][len(w.Steps[arch])-1]; !passesSM(last.Classes) {
			run.NoFeature = "no stackmap requirement passes with the whole series applied"
		}
		r.Runs = append(r.Runs, run)
	}
	r.Defects = reply.Defects(failed, profile.String(), false)
	words := []string{"make", "review", "SERIES=" + w.Series.Name, "TREE=" + w.Tree, "ARCHES=" + strings.Join(w.Arches, ","), "PROFILE=" + profile.String()}
	if w.Series.Base != "HEAD" {
		words = append(words, "BASE="+w.Series.Base)
	}
	if w.Sanitized != "" {
		words = append(words, "SANITIZE=1")
	}
	r.Reproduce = []string{results.ShellCommand(words)}
	return r
}

// laneWords add a walk's lane to its header line.
func laneWords(lane string) string {
	if lane == "" {
		return ""
	}
	return ", " + lane
}

// passesSM says whether any stackmap requirement passed.
func passesSM(classes map[string]contract.Class) bool {
	for id, c := range classes {
		if strings.HasPrefix(id, "SM-") && c == contract.Pass {
			return true
		}
	}
	return false
}

// machines is QEMU as each arch's runs had it.
func (w *Walk) machines() string {
	var out []string
	for _, arch := range w.Arches {
		for _, st := range w.Steps[arch] {
			if st.Machine != "" {
				out = append(out, st.Machine)
				break
			}
		}
	}
	return strings.Join(out, "; ")
}
