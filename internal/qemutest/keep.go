// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"context"
	"errors"
	"fmt"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/kernellog"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// made is what one plan's boot brought back, before it is kept.
type made struct {
	plan    contract.BootPlan
	chosen  types.SpecReports
	br      results.BootResult
	carried *Carried // what its console carried, once judged
	console []byte
	err     error
	absent  string // the default boot found no feature: this one was not made
}

// makeBoot makes a plan's boot when its specs need it. It changes nothing
// of the run but the default boot's finding that the feature is absent:
// boots run side by side.
func (r *run) makeBoot(ctx context.Context, plan contract.BootPlan, sideBySide bool) *made {
	o := r.o
	m := &made{plan: plan, br: results.BootResult{Plan: plan}}
	filter := plan.Filter(o.Labels)
	m.chosen = selected(r.specs, filter)
	if len(m.chosen) == 0 {
		m.br.Skipped = results.NoSpecSelected
		return m
	}
	if why := r.absentFeature(); why != "" && !plan.IsDefault() {
		// Booting again cannot find a feature the default boot did not.
		m.absent = why
		return m
	}
	var st *selftestSetup
	if plan.IsDefault() {
		st = r.selftests
	}
	rep := o.Progress
	if sideBySide {
		rep = rep.Lines()
	}
	var boot *qemu.Result
	m.carried, boot, m.console, m.err = r.bootOnce(ctx, plan, filter, st, rep)
	m.br.Boot = boot
	if plan.IsDefault() && m.err == nil {
		if why := featureAbsent(m.carried.Reports); why != "" {
			r.mu.Lock()
			r.noFeature = why
			r.mu.Unlock()
		}
	}
	return m
}

// absentFeature is why the default boot found no feature, once it has.
func (r *run) absentFeature() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.noFeature
}

// featureAbsent returns the reason the default boot gave for the kernel
// lacking the feature (a spec's report entry), or "".
func featureAbsent(reports []types.Report) string {
	for _, r := range reports {
		for _, sr := range r.SpecReports {
			for _, e := range sr.ReportEntries {
				if e.Name == contract.FeatureEntry {
					return e.StringRepresentation()
				}
			}
		}
	}
	return ""
}

// keep adds what a boot said to the run, in plan order. A boot whose
// specs cannot be judged leaves them UNRESOLVED and the others standing;
// only a problem of this machine (or the run being stopped) ends the run.
func (r *run) keep(ctx context.Context, m *made) error {
	res, plan := r.res, m.plan
	var died *BootDied
	var unjudged *Unjudged
	perBoot := errors.As(m.err, &died) || errors.As(m.err, &unjudged)
	switch {
	case m.err != nil && m.br.Boot == nil && m.br.Skipped == "" && !perBoot:
		if len(m.chosen) == 0 {
			return m.err // the label filter
		}
	case m.br.Skipped != "":
		res.Boots = append(res.Boots, m.br)
		return nil
	case m.absent != "":
		m.br.Skipped = m.absent
		res.Boots = append(res.Boots, m.br)
		r.add(plan, skippedAs(plan, m.chosen, m.absent))
		return nil
	}
	r.sawConsole(m.console)
	if m.carried != nil {
		log, arrived := m.carried.KernelLog()
		switch lines := KernelProblems(log); {
		case len(lines) > 0:
			res.KernelLogs = append(res.KernelLogs, results.KernelLog{Boot: plan.Name, Lines: lines, Reports: kernellog.Reports(log)})
		case !arrived && m.err == nil:
			// Nothing says this kernel logged no warning: not clean.
			res.KernelLogs = append(res.KernelLogs, results.KernelLog{Boot: plan.Name, Missing: true})
		}
		for _, l := range m.carried.Lost {
			res.Lost = append(res.Lost, results.BootNote{Boot: plan.Name, Note: l})
		}
	}
	res.Boots = append(res.Boots, m.br)
	if died != nil && len(plan.Append) > 0 && ctx.Err() == nil {
		// The kernel died on the parameter this boot exists to test: a
		// failure of its specs, once a boot without the parameter shows
		// that the kernel itself comes up.
		if !r.bootsUp {
			if r.controlDied == nil {
				r.controlDied = r.controlBoot(ctx, died)
			}
			if errors.As(r.controlDied, &unjudged) {
				// One control boot tells for every boot that died: the
				// kernel does not come up without their parameters either.
				r.unjudged(plan, m.chosen, fmt.Errorf("%v; and a control boot without its parameters failed too: %w", died, unjudged.Err))
				return nil
			}
			if r.controlDied != nil {
				return r.controlDied
			}
			r.bootsUp = true
		}
		r.add(plan, failedAs(plan, m.chosen, died.Error()))
		return nil
	}
	if perBoot && ctx.Err() == nil {
		r.unjudged(plan, m.chosen, m.err)
		return nil
	}
	if m.err != nil {
		return m.err
	}
	if len(plan.Append) == 0 {
		r.bootsUp = true
	}
	if plan.IsDefault() {
		r.defaultFiles = m.carried.Files
		if r.selftests != nil {
			res.Selftests, res.SelftestsNote = readSelftests(m.carried.Files, r.o.FtraceDir, r.selftests.tests)
		}
	}
	r.add(plan, m.carried.Reports...)
	return nil
}

// unjudged keeps a boot whose specs cannot be judged: each is UNRESOLVED,
// naming the boot and why.
func (r *run) unjudged(plan contract.BootPlan, specs types.SpecReports, why error) {
	n := results.BootNote{Boot: plan.Name, Note: why.Error()}
	if died := new(BootDied); errors.As(why, &died) {
		n.Died = died.How
	}
	r.res.Unjudged = append(r.res.Unjudged, n)
	r.add(plan, unresolvedAs(plan, specs, "boot "+plan.Name+" cannot be judged: "+why.Error()))
}

// add keeps the reports of a plan's boot: Ginkgo's, for report.json, and
// their summary, its specs named after the boot.
func (r *run) add(plan contract.BootPlan, reports ...types.Report) {
	r.reports = append(r.reports, reports...)
	r.summaries = append(r.summaries, report.Summarize(plan.Name, reports))
}
