// SPDX-License-Identifier: GPL-2.0-only

package review

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/page"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// KTAP is the walk as KTAP: one test per prefix, a subtest whose tests are
// the build, the boot and each requirement on each arch, in the classes a
// run's KTAP gives its specs.
func (w *Walk) KTAP() string {
	var k report.KTAP
	n := len(w.Series.Patches)
	for i := 0; i <= n; i++ {
		var sub report.KTAP
		sub.Diag("", fmt.Sprintf("%d/%d %s", i, n, subjectOf(w.Series, i)))
		ok := true
		for _, arch := range w.Arches {
			st := w.Steps[arch][i]
			stepKTAP(&sub, st, w.ids(arch))
			ok = ok && len(st.Problems) == 0
		}
		name := fmt.Sprintf("patch-%d", i)
		k.Nest(name, &sub)
		k.Result(ok && sub.Passed(), name, "")
	}
	return k.String()
}

// stepKTAP writes the tests of one prefix on one arch.
func stepKTAP(k *report.KTAP, st *Step, ids []string) {
	test := func(name string, c contract.Class, reason string) { k.Class(st.Arch+"."+name, c, false, reason) }
	switch stepBuild(st) {
	case NotMade:
		test("build", contract.Unsupported, "not made: an earlier patch does not apply")
		return
	case Failed:
		test("build", contract.Fail, "")
	default:
		test("build", contract.Pass, "")
	}
	if st.Boot == "" && st.Infra == "" {
		return
	}
	test("boot", passIf(st.Boot == stepOK), "")
	if st.Infra != "" {
		test("suite", contract.Unresolved, st.Infra)
		return
	}
	if st.Decoder != "" {
		test("decoder", passIf(st.Decoder == "agrees"), "")
	}
	for _, id := range ids {
		switch c, why := st.Classes[id], st.Reasons[id]; {
		case c == "":
			test(id, contract.Unsupported, "not run")
		case why == "": // the class is all a walk without reasons knows
			test(id, c, string(c))
		default:
			test(id, c, why)
		}
	}
}

func passIf(ok bool) contract.Class {
	if ok {
		return contract.Pass
	}
	return contract.Fail
}

// Evidence is the block to paste in a reply to patch k (0: the cover
// letter, the whole walk).
func (w *Walk) Evidence(k int) string {
	var b strings.Builder
	n := len(w.Series.Patches)
	if k == 0 {
		fmt.Fprintf(&b, "Walked patch by patch with the ftrace stackmap conformance suite\n")
		fmt.Fprintf(&b, "(QEMU, %s), on %s (%.12s):\n\n", strings.Join(w.Arches, ", "), w.Series.Base, w.Commit)
		b.WriteString(w.Text())
		return b.String()
	}
	fmt.Fprintf(&b, "[PATCH %d/%d] %s\n\n", k, n, w.Series.Patches[k-1].Subject)
	for _, arch := range w.Arches {
		st := w.Steps[arch][k]
		line := fmt.Sprintf("build %s, boot %s, verdict %s", stepBuild(st), stepBoot(st), stepVerdict(st))
		if st.Classes != nil {
			counts := map[contract.Class]int{}
			for _, c := range st.Classes {
				counts[c]++
			}
			line += fmt.Sprintf(" (requirements: %d PASS, %d FAIL, %d UNSUPPORTED, %d UNRESOLVED)", counts[contract.Pass], counts[contract.Fail], counts[contract.Unsupported], counts[contract.Unresolved])
		}
		b.WriteString(report.Wrap(arch+": ", "  ", line))
		for _, p := range st.Problems {
			b.WriteString(report.Wrap("  problem: ", "    ", p))
		}
		for _, l := range st.Warnings {
			b.WriteString(report.Wrap("  compiler warning: ", "    ", l))
		}
		if st.Infra != "" {
			b.WriteString(report.Wrap("  no verdict: ", "    ", st.Infra))
		}
	}
	if ch := w.changesOf(k); ch == "" {
		b.WriteString("This patch changes no requirement's result.\n")
	} else {
		b.WriteString("Changed by this patch:\n" + ch)
	}
	return b.String()
}

// Write writes series.txt, series.json, series-ktap.txt and the evidence
// blocks (evidence-cover.txt, evidence-patch-K.txt) into the walk's dir.
func (w *Walk) Write() error {
	if err := os.MkdirAll(w.Dir, 0o755); err != nil {
		return err
	}
	js, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return err
	}
	html, err := page.Render(w.Page())
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"series.txt":      []byte(w.Text()),
		"series.json":     js,
		"series-ktap.txt": []byte(w.KTAP()),
		page.File:         html,
	}
	if len(w.wholeClaims()) > 0 {
		files[ClaimsFile] = []byte(w.ClaimsText())
	}
	for k := 0; k <= len(w.Series.Patches); k++ {
		name := fmt.Sprintf("evidence-patch-%d.txt", k)
		if k == 0 {
			name = "evidence-cover.txt"
		}
		files[name] = []byte(w.Evidence(k))
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(w.Dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
