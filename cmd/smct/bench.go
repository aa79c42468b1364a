// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/bench"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/flagvalue"
	"github.com/ftrace-stackmap/conformance/internal/results"
)

// benchCmd measures time to verdict against the floor and prints the
// figures, their change since internal/bench/last.json, and the targets.
// Exit status: 0 every target met, 1 one missed, 2 a measurement failed.
var benchCmd = command{
	name:   "bench",
	page:   "docs/bench.md",
	about:  "measure time to verdict against each boot's floor; targets are checked here, not in tests",
	groups: []group{archesGroup, buildGroup, bootGroup, hereGroup, resultsGroup, exitGroup},
	prunes: true,
	flags: func(fs *flag.FlagSet, r *request) runFunc {
		// Time is measured on full runs of the v4 contract.
		r.run.Profile = contract.ProfileV4
		o := bench.Options{WalkArch: arch.MustLookup("x86_64")}
		fs.StringVar(&o.Image, "image", "", "images.lock entry timed per arch (default: the lock's default)")
		fs.IntVar(&o.Reps, "reps", 3, "repetitions of each measurement; figures are medians")
		matrixImages := fs.String("matrix-images", "", "entries of the matrix timed for throughput (default: the debian ones; \"none\" to skip)")
		fs.Var((*flagvalue.Series)(&o.WalkSeries), "walk-series", "a series (as make review takes it) whose walk is timed too")
		fs.Var((*flagvalue.Path)(&o.WalkTree), "walk-tree", "the tree -walk-series applies on")
		fs.Var(&o.WalkArch, "walk-arch", "the arch the walk is timed on")
		return func(ctx context.Context, r *request, out outputs) outcome {
			o.Base, o.Arches, o.Progress, o.Notes = r.run, r.arches, out.progress, out.stderr
			dir, err := benchPlan(&o, *matrixImages, r)
			if err != nil {
				return refuseAt(out, "bench", err)
			}
			return runBench(ctx, o, dir, out)
		}
	},
}

// benchPlan checks what the bench is asked to time and makes its directory.
func benchPlan(o *bench.Options, matrixImages string, r *request) (string, error) {
	if o.Reps < 1 {
		return "", errors.New("-reps must be at least 1")
	}
	if err := o.Plan(matrixImages); err != nil {
		return "", err
	}
	return results.NewRunDir(r.run.ResultsDir, "bench", "")
}

// runBench runs the bench and writes its figures (bench.Finish).
func runBench(ctx context.Context, o bench.Options, dir string, out outputs) outcome {
	r, err := bench.Run(ctx, o)
	if err != nil {
		return withoutVerdict("", "bench: "+err.Error())
	}
	w, err := bench.Finish(r, o, dir)
	if err != nil {
		return withoutVerdict(w.Table, "bench: "+err.Error())
	}
	done := outcome{body: w.Table + fmt.Sprintf("\nfigures: %s, %s\npage:    %s\n", w.JSON, w.Last, w.Page), passed: w.Met, failed: w.Missed, counted: true}
	if len(o.Arches) < 2 || o.Base.Lane.IsSanitized() {
		done.skipped = 1 // the target for all arches at once
	}
	done.skipped += r.Unjudged()
	if w.Missed > 0 {
		done.status = exitFailed
	}
	return done
}
