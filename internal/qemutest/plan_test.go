// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/internal/contract"
)

// Boots not made still name their specs after the boot, so the six SM-BOOT-02
// boots give six distinct results, as made boots do.
func TestSkippedSpecsKeepTheirBootsName(t *testing.T) {
	spec := types.SpecReport{ContainerHierarchyTexts: []string{"boot parameters"}, LeafNodeText: "[SM-BOOT-02] clamps bits"}
	seen := map[string]bool{}
	for _, p := range contract.Plans() {
		r := skippedAs(p, types.SpecReports{spec}, "no stackmap")
		got := r.SpecReports[0]
		want := "no stackmap (seen in the default boot; boot " + p.Name + " not made)"
		if got.State != types.SpecStateSkipped || got.Failure.Message != want {
			t.Errorf("boot %s: state %v, message %q, want %q", p.Name, got.State, got.Failure.Message, want)
		}
		// The reason itself, for the reports to group by: no words to cut off.
		if e := got.ReportEntries[1]; e.Name != contract.FeatureEntry || e.StringRepresentation() != "no stackmap" {
			t.Errorf("boot %s: entry %s %q, want the default boot's reason alone", p.Name, e.Name, e.StringRepresentation())
		}
		if seen[got.FullText()] {
			t.Errorf("boot %s: name %q given twice", p.Name, got.FullText())
		}
		seen[got.FullText()] = true
	}
	if got := skippedAs(contract.Plans()[0], types.SpecReports{spec}, "x").SpecReports[0].FullText(); got != spec.FullText() {
		t.Errorf("default boot renamed its spec: %q", got)
	}
}

func TestOptInBootsNeedTheirLabel(t *testing.T) {
	for filter, want := range map[string]bool{"": false, "stress": true, "!stress": false, "SM-RESET-01 || stress": true, "SM-RESET-01": false, "stressful": false} {
		if got := asksFor(filter, "stress"); got != want {
			t.Errorf("asksFor(%q, stress) = %v, want %v", filter, got, want)
		}
	}
}
