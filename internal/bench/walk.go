// SPDX-License-Identifier: GPL-2.0-only

package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/cachelimit"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/review"
)

// walk times a series walk on a warm cache (every prefix's kernel built
// before, by a first walk not timed) against (N+1) full runs of the whole
// series plus what the walk spent on kernels: a walk must cost its boots
// and incremental builds, never a full rebuild per prefix.
func (m *measure) walk(ctx context.Context) error {
	o := m.o
	s, err := review.ReadSeries(o.WalkSeries, o.WalkTree, "")
	if err != nil {
		return err
	}
	n := len(s.Patches)
	base := o.base()
	base.Progress = progress.Quiet(o.Notes, "walk: ")
	w := review.Walker{Options: base, Arches: arch.List{o.WalkArch}}
	var walk *review.Walk
	for i, what := range []string{"a first walk, to warm up", "the walk, timed"} {
		end := o.Progress.Step("%s: %s (%d patches)", o.WalkArch.Name, what, n)
		walk, err = w.Walk(ctx, s, o.WalkTree, filepath.Join(m.tmp, fmt.Sprintf("walk-%d", i)))
		if err == nil && walk.ExitCode() == 2 {
			err = fmt.Errorf("a prefix gave no verdict")
		}
		end(err)
		if err != nil {
			return err
		}
	}
	kernels, largest := 0.0, 0.0
	for _, st := range walk.Steps[o.WalkArch.Name] {
		kernels += st.Kernel.Seconds()
		largest = max(largest, st.Kernel.Seconds())
	}
	// The walk's checkout holds the whole series now: time full runs of it.
	full := base
	full.Arch, full.Tree, full.Image = o.WalkArch, cachelimit.Review.In(o.Base.CacheDir, "src"), ""
	full.ResultsDir = filepath.Join(m.tmp, "runs")
	var runs []float64
	for i := range o.Reps {
		end := o.Progress.Step("%s: full run of the whole series %d/%d", o.WalkArch, i+1, o.Reps)
		start := time.Now()
		_, err := m.runner.Run(ctx, full)
		end(err)
		if err != nil {
			return err
		}
		runs = append(runs, time.Since(start).Seconds())
	}
	wall := walk.Wall.Seconds()
	m.r.Figures = append(m.r.Figures,
		Figure{Name: fmt.Sprintf("%s walk of %d patches, warm", o.WalkArch, n), Value: wall, Unit: "s"},
		Figure{Name: fmt.Sprintf("%s walk, kernels of its %d prefixes", o.WalkArch, n+1), Value: kernels, Unit: "s"},
		Figure{Name: fmt.Sprintf("%s walk, largest kernel step", o.WalkArch), Value: largest, Unit: "s"})
	run := m.seconds(fmt.Sprintf("%s full run of the whole series", o.WalkArch), runs)
	m.r.Targets = append(m.r.Targets, target(fmt.Sprintf("%s walk <= %d full runs + its kernels", o.WalkArch, n+1),
		wall, float64(n+1)*run+kernels, 1))
	return nil
}
