// SPDX-License-Identifier: GPL-2.0-only

package bench

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/ftrace-stackmap/conformance/internal/kernels/kchoice"
	"github.com/ftrace-stackmap/conformance/internal/results"
)

// againstPlain holds each arch's sanitized warm run to SanitizedOverPlain
// times the plain lane's, as its last figures (last.json) have it.
func (m *measure) againstPlain() error {
	if !m.o.Base.Lane.IsSanitized() {
		return nil
	}
	path := filepath.Join(m.o.Base.ModuleDir, "internal", "bench", kchoice.Plain.BenchFile())
	plain, err := Load(path)
	if err != nil || plain == nil {
		return fmt.Errorf("the plain lane's figures, to compare with: %v (run make bench first)", cmp.Or(err, os.ErrNotExist))
	}
	for _, a := range m.o.Arches {
		warm := a.Name + " qemu-test, warm"
		i := slices.IndexFunc(plain.Figures, func(f Figure) bool { return f.Name == warm })
		if i < 0 {
			return fmt.Errorf("%s has no figure %q: run make bench ARCH=%s first", path, warm, a.Name)
		}
		m.r.Figures = append(m.r.Figures, Figure{Name: warm + ", plain lane (" + plain.Time.Format("2006-01-02") + ")", Value: plain.Figures[i].Value, Unit: "s"})
		m.r.Targets = append(m.r.Targets, everyLane(target(fmt.Sprintf("%s sanitized warm run <= %.0fx the plain lane's", a.Name, SanitizedOverPlain),
			m.alone[a.Name], plain.Figures[i].Value, SanitizedOverPlain)))
	}
	return nil
}

// bootParts are the times of a part of a boot (guest clock) by part and
// boot plan.
type bootParts map[string]map[string][]float64

func (p bootParts) add(part, plan string, t float64) {
	if p[part] == nil {
		p[part] = map[string][]float64{}
	}
	p[part][plan] = append(p[part][plan], t)
}

// transport holds what the largest of a run's boots spent sending its
// reports to Transport.
func (m *measure) transport(name string, last *results.Result, sent map[string][]float64) {
	worst, worstPlan := 0.0, ""
	for _, b := range last.Boots {
		if t := median(sent[b.Plan.Name]); b.Boot != nil && (t > worst || worstPlan == "") {
			worst, worstPlan = t, b.Plan.Name
		}
	}
	m.r.Targets = append(m.r.Targets, everyLane(limit(fmt.Sprintf("%s reports' transport per boot <= %.0fs (its largest: %s)", name, Transport, worstPlan), worst, Transport)))
}
