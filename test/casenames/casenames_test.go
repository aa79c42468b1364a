// SPDX-License-Identifier: GPL-2.0-only

// Package casenames holds the rule a lab's results rest on: every spec's
// case name is its own within the suite of its boot, whatever the seed and
// the label filter, as the suite's reports, LAVA (which lowers a name and
// makes "_" of what is not a word) and KCIDB give it. A lab that keeps one
// result per name (KernelCI, SQUAD) would otherwise keep one spec's
// verdict and drop another's failure.
package casenames

import (
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
	"github.com/ftrace-stackmap/conformance/test/dryrun"
)

func TestCaseNamesDifferInEverySuite(t *testing.T) {
	suite := dryrun.Suite(t)
	// The whole tree under one boot's name: a name unique here is unique in
	// every boot, under any filter, which only ever selects fewer specs.
	all := dryrun.List(t, suite, contract.DefaultBoot, "", 1)
	if len(all) < 40 {
		t.Fatalf("the dry run lists %d specs: the listing is broken", len(all))
	}
	names := map[string]string{}
	for _, want := range []struct {
		what string
		of   func(report.Spec) string
	}{
		{"case name", func(sp report.Spec) string { return sp.Name }},
		{"LAVA case", func(sp report.Spec) string { return results.LAVACase(sp.Name) }},
		{"KCIDB path", func(sp report.Spec) string { return results.SpecPath(sp.Name) }},
	} {
		seen := map[string]string{}
		for _, sp := range all {
			n := want.of(sp)
			if other, dup := seen[n]; dup {
				t.Errorf("%s %q is given to two specs: %q and %q", want.what, n, other, sp.Text)
			}
			seen[n] = sp.Text
		}
	}
	for _, sp := range all {
		names[sp.Name] = sp.Text
	}
	// Each boot's own filter, under other seeds: the same spec, the same
	// name, whatever the order.
	for _, plan := range contract.Plans() {
		for _, seed := range []int{2, 977} {
			for _, sp := range dryrun.List(t, suite, contract.DefaultBoot, plan.Labels.String(), seed) {
				if names[sp.Name] != sp.Text {
					t.Errorf("boot %s, seed %d: %q names %q, not %q as in the whole tree", plan.Name, seed, sp.Name, sp.Text, names[sp.Name])
				}
			}
		}
	}
}
