// SPDX-License-Identifier: GPL-2.0-only

package bench

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/ftrace-stackmap/conformance/initramfs"
	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/textlines"
)

// floor times the boots the last run made, each with the floor's
// initramfs, made the way the run made them (as many at a time, started in
// plan order), and holds the arch's warm run against that; the sum of the
// boots one after the other is shown beside it. Each boot's overhead is
// what it took beyond its floor and its specs' own work (specs, on the
// guest's clock).
func (m *measure) floor(ctx context.Context, a arch.Arch, last *results.Result, boots map[string][]float64, parts bootParts) error {
	o, name := m.o, a.Name
	initrd, err := initramfs.Builder{ModuleDir: o.Base.ModuleDir, OutDir: filepath.Join(m.tmp, "floor-"+name), Arch: a}.Floor(ctx)
	if err != nil {
		return err
	}
	var made []results.BootResult
	for _, b := range last.Boots {
		if b.Boot != nil {
			made = append(made, b)
		}
	}
	lanes := max(1, last.Lanes)
	each := map[string][]float64{}
	var wall []float64
	for i := range o.Reps {
		end := o.Progress.Step("%s: floor of its %d boots, %d at a time, %d/%d", name, len(made), lanes, i+1, o.Reps)
		d, times, err := floorBoots(ctx, made, initrd, o.Base.Timeout, lanes)
		end(err)
		if err != nil {
			return err
		}
		wall = append(wall, d.Seconds())
		for name, t := range times {
			each[name] = append(each[name], t.Seconds())
		}
	}
	sum, worst, worstPlan := 0.0, 0.0, ""
	for _, b := range made {
		suite := m.seconds(name+" boot "+b.Plan.Name+", suite", boots[b.Plan.Name])
		floor := m.seconds(name+" boot "+b.Plan.Name+", floor", each[b.Plan.Name])
		own := m.seconds(name+" boot "+b.Plan.Name+", its specs (guest clock)", parts[specsPart][b.Plan.Name])
		over := suite - floor - own
		if checks := median(parts[checkersPart][b.Plan.Name]); checks > 0.05 {
			m.seconds(name+" boot "+b.Plan.Name+", "+checkersPart+" (guest clock)", parts[checkersPart][b.Plan.Name])
			over -= checks
		}
		m.r.Figures = append(m.r.Figures, Figure{Name: name + " boot " + b.Plan.Name + ", overhead", Value: over, Unit: "s"})
		if over > worst || worstPlan == "" {
			worst, worstPlan = over, b.Plan.Name
		}
		sum += floor
	}
	most := BootOverhead
	if m.o.Base.Lane.IsSanitized() {
		most = SanitizedBootOverhead
	}
	m.r.Targets = append(m.r.Targets, everyLane(limit(fmt.Sprintf("%s per-boot overhead <= %.1fs (its largest: %s)", name, most, worstPlan), worst, most)))
	m.r.Figures = append(m.r.Figures, Figure{Name: fmt.Sprintf("%s floor, its %d boots one after the other", name, len(made)), Value: sum, Unit: "s"})
	floor := m.seconds(fmt.Sprintf("%s floor, its %d boots %d at a time", name, len(made), lanes), wall)
	m.r.Targets = append(m.r.Targets, target(fmt.Sprintf("%s full run <= %.2gx floor of its boots", name, RunOverFloor),
		m.alone[name], floor, RunOverFloor))
	return nil
}

// floorBoots makes the floor boot of each boot, lanes at a time, started
// in the order the run starts them, and returns the wall time of them all
// and each one's time.
func floorBoots(ctx context.Context, made []results.BootResult, initrd string, timeout time.Duration, lanes int) (time.Duration, map[string]time.Duration, error) {
	times := make([]time.Duration, len(made))
	errs := make([]error, len(made))
	plans := make([]contract.BootPlan, len(made))
	for i, b := range made {
		plans[i] = b.Plan
	}
	var g errgroup.Group
	g.SetLimit(lanes)
	start := time.Now()
	for _, i := range contract.StartOrder(plans) {
		b := made[i]
		g.Go(func() error {
			times[i], errs[i] = floorBoot(ctx, b.Boot.Command, initrd, timeout)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("boot %s: %v", b.Plan.Name, errs[i])
			}
			return nil // the first failure in plan order is reported
		})
	}
	g.Wait()
	wall := time.Since(start)
	out := map[string]time.Duration{}
	for i, b := range made {
		if errs[i] != nil {
			return 0, nil, errs[i]
		}
		out[b.Plan.Name] = times[i]
	}
	return wall, out, nil
}

// floorBoot runs a suite boot's exact QEMU command with the floor's initrd
// instead of the suite's, and returns how long QEMU took to exit.
func floorBoot(ctx context.Context, command []string, initrd string, timeout time.Duration) (time.Duration, error) {
	args := slices.Clone(command[1:])
	i := slices.Index(args, "-initrd")
	if i < 0 || i+1 >= len(args) {
		return 0, fmt.Errorf("no -initrd in %q", command)
	}
	args[i+1] = initrd
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, command[0], args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	switch {
	case ctx.Err() != nil:
		return 0, fmt.Errorf("floor boot did not power off within %s:\n%s", timeout, tail(out.String()))
	case err != nil:
		return 0, fmt.Errorf("floor boot: %v:\n%s", err, tail(out.String()))
	case strings.Contains(out.String(), "Kernel panic"):
		// panic=-1 and -no-reboot end QEMU cleanly even then.
		return 0, fmt.Errorf("floor boot panicked:\n%s", tail(out.String()))
	}
	return d, nil
}

// tail is the end of a floor boot's console, to quote in its error.
func tail(s string) string { return textlines.Tail(s, 10) }
