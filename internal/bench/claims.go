// SPDX-License-Identifier: GPL-2.0-only

package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/progress"
)

// ClaimsLimit is what the claims plan may cost on one arch, in wall time.
const ClaimsLimit = 60 * time.Second

// claims times the claims plan alone (make claims) on one arch.
func (m *measure) claims(ctx context.Context, a arch.Arch) error {
	o, name := m.o, a.Name
	var took []float64
	for i := range o.Reps {
		end := o.Progress.Step("%s: claims plan %d/%d", name, i+1, o.Reps)
		ro := o.base()
		ro.Arch, ro.Image = a, o.Image
		ro.ResultsDir = filepath.Join(m.tmp, "claims")
		ro.Progress = progress.Quiet(o.Notes, name+": ")
		start := time.Now()
		res, err := m.runner.Claims(ctx, ro)
		if err == nil && !res.Claims.Measured() {
			err = fmt.Errorf("no claims boot brought back a measurement")
		}
		end(err)
		if err != nil {
			return fmt.Errorf("%s claims plan: %v", name, err)
		}
		took = append(took, time.Since(start).Seconds())
	}
	v := m.seconds(name+" claims plan", took)
	m.r.Targets = append(m.r.Targets, target(fmt.Sprintf("%s claims plan <= %s", name, ClaimsLimit), v, ClaimsLimit.Seconds(), 1))
	return nil
}
