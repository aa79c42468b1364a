// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"slices"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/labels"
	"github.com/ftrace-stackmap/conformance/internal/results"
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
	for filter, want := range map[string]bool{"": false, "stress": true, "!stress": false, "!(stress)": false, "SM-RESET-01 || stress": true, "SM-RESET-01": false, "stressful": false} {
		o := Options{Request: results.Request{Labels: labels.MustParse(filter)}}
		got := slices.ContainsFunc(o.plans(), func(p contract.BootPlan) bool { return p.Name == "stress" })
		if got != want {
			t.Errorf("LABELS=%q makes the stress boot: %v, want %v", filter, got, want)
		}
	}
}

// Torture's time is added to each boot's limit only when the run makes the
// torture boot: LABELS='!(torture)' names the label and leaves it out.
func TestTortureTimeOnlyWhenTortured(t *testing.T) {
	for filter, want := range map[string]time.Duration{
		"!(torture)": DefaultTimeout, "!torture && SM-BIN-01": DefaultTimeout, "": DefaultTimeout,
		"torture": DefaultTimeout + 10*time.Minute, "SM-BIN-01 || torture": DefaultTimeout + 10*time.Minute,
	} {
		o := Options{Request: results.Request{Labels: labels.MustParse(filter), Torture: 10 * time.Minute}}
		if got, _ := bootTimeout(DefaultTimeout, nil, o.Torture, tortured(o.plans())); got != want {
			t.Errorf("LABELS=%q: each boot's limit %s, want %s", filter, got, want)
		}
	}
}
