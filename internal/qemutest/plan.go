// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/labels"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// readSpecs reads the specs the initramfs's suite holds, listed when it
// was built (initramfs.Builder.Specs), so boots that would select nothing
// are not made.
func readSpecs(path string) (types.SpecReports, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	reports, err := report.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return reports[0].SpecReports.WithLeafNodeType(types.NodeTypeIt), nil
}

// selected returns the specs a filter selects.
func selected(specs types.SpecReports, filter labels.Filter) types.SpecReports {
	var out types.SpecReports
	for _, s := range specs {
		if filter.Selects(s.Labels()) {
			out = append(out, s)
		}
	}
	return out
}

// skippedAs turns specs that plan's boot would have run into UNSUPPORTED
// results, since the default boot found the feature absent (why), as a
// report of their own, named after the boot as a made boot's specs are,
// so every result keeps a name of its own.
func skippedAs(plan contract.BootPlan, specs types.SpecReports, why string) types.Report {
	msg := fmt.Sprintf("%s (seen in the %s boot; boot %s not made)", why, contract.DefaultBoot, plan.Name)
	// The default boot's finding, as its own specs carry it.
	entries := types.ReportEntries{contract.Mark(contract.Unsupported), {Name: contract.FeatureEntry, Value: types.WrapEntryValue(why)}}
	return reportAs(plan, specs, "not booted", types.SpecStateSkipped, msg, entries)
}

// failedAs turns specs that plan's boot would have run into failures with
// the reason, named after the boot as a made boot's specs are.
func failedAs(plan contract.BootPlan, specs types.SpecReports, reason string) types.Report {
	return reportAs(plan, specs, "boot "+plan.Name+" died", types.SpecStateFailed, reason, nil)
}

// unresolvedAs turns specs that plan's boot ran, or would have run, into
// UNRESOLVED results with the reason: nothing the boot brought back can
// judge them.
func unresolvedAs(plan contract.BootPlan, specs types.SpecReports, reason string) types.Report {
	return reportAs(plan, specs, "boot "+plan.Name+" not judged", types.SpecStateFailed, reason, types.ReportEntries{contract.Mark(contract.Unresolved)})
}

// reportAs is specs ended in state with msg (and entries, when given), as
// a report of their own named after plan's boot; only a skipped report
// succeeded.
func reportAs(plan contract.BootPlan, specs types.SpecReports, what string, state types.SpecState, msg string, entries types.ReportEntries) types.Report {
	r := types.Report{SuiteDescription: what, SuiteSucceeded: state == types.SpecStateSkipped}
	for _, s := range specs {
		s.State, s.Failure = state, types.Failure{Message: msg}
		if entries != nil {
			s.ReportEntries = slices.Clone(entries) // each spec its own
		}
		s.ContainerHierarchyTexts = plan.Prefixed(s.ContainerHierarchyTexts)
		r.SpecReports = append(r.SpecReports, s)
	}
	return r
}

// plans are the boot plans this run may make: those -boots names (all when
// it names none), opt-in ones only when LABELS= asks for them. A run
// computes them once (begin) and keeps them.
func (o Options) plans() []contract.BootPlan {
	var out []contract.BootPlan
	for _, plan := range contract.Plans() {
		if len(o.Boots) > 0 && !slices.Contains(o.Boots, plan.Name) || plan.OptIn != "" && !o.Labels.AsksFor(plan.OptIn) {
			continue
		}
		out = append(out, plan)
	}
	return out
}

// repeatedParam refuses extra command-line words that set a parameter a
// boot plan sets itself: the kernel would see both, and the plan's specs
// would judge only one of them.
func repeatedParam(extra []string, plans []contract.BootPlan) error {
	for _, w := range extra {
		key, _, _ := strings.Cut(w, "=")
		for _, plan := range plans {
			for _, own := range plan.Append {
				if k, _, _ := strings.Cut(own, "="); k == key {
					return infra("-append %q sets %s, which boot %s sets itself (%s): the kernel would parse both; drop it, or leave that boot out with LABELS", w, key, plan.Name, own)
				}
			}
		}
	}
	return nil
}

// defaultPlan is the boot without parameters of its own.
func defaultPlan() contract.BootPlan {
	for _, p := range contract.Plans() {
		if p.IsDefault() {
			return p
		}
	}
	panic("no default boot plan")
}
