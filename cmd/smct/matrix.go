// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/ftrace-stackmap/conformance/internal/kernels/images"
	"github.com/ftrace-stackmap/conformance/internal/lava"
	"github.com/ftrace-stackmap/conformance/internal/matrix"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/results"
)

// matrixCmd runs qemu-test for every images.lock entry (or -images) on
// every arch, a few boots at a time, printing each cell as it finishes and
// then the table. Its exit status is the worst cell's.
var matrixCmd = command{
	name:   "matrix",
	about:  "run the suite for every images.lock entry on every arch, or write each cell's LAVA job",
	groups: []group{archesGroup, buildGroup, profileGroup, specGroup, requireGroup, bootGroup, hereGroup, resultsGroup, notifyGroup},
	flags: func(fs *flag.FlagSet, r *request) func(context.Context, *request, outputs) int {
		parallel := fs.Int("parallel", 2, "boots at a time")
		entries := fs.String("images", "", "comma-separated images.lock entries (default: all)")
		lavaJobs := fs.Bool("lava-jobs", false, "write each cell's LAVA job (smct lava) instead of running it")
		lavaURL := fs.String("lava-url", "", "with -lava-jobs: URL where the lab serves the matrix directory (default: file:// paths)")
		return func(ctx context.Context, r *request, out outputs) int {
			o := matrix.Options{Base: r.run, Arches: r.arches, Parallel: *parallel, Notes: out.stderr}
			lock, err := images.Read(o.Base.LockFile)
			if err == nil {
				o.Entries, err = lock.Names(*entries)
			}
			if err == nil {
				o.Dir, err = results.NewRunDir(r.run.ResultsDir, "matrix", "")
			}
			if err != nil {
				return refuseAt(out, "matrix", err)
			}
			if *lavaJobs {
				return matrixJobs(ctx, o, lava.Served{URL: *lavaURL, Dir: o.Dir, Notify: string(r.notify)}, out)
			}
			o.Done = func(c matrix.Cell, n, total int) {
				fmt.Fprintf(progress.Over(out.progress, out.stdout), "[%d/%d] %s\n", n, total, matrix.Line(c))
			}
			end := out.progress.Step("matrix: %d cells, %d boots at a time", len(o.Entries)*len(o.Arches), o.Parallel)
			cells := matrix.Run(ctx, o)
			end(nil)
			return printMatrix(o.Dir, cells, out)
		}
	},
}

// printMatrix writes a matrix's reports and prints its table; the status
// is the worst cell's, or no verdict when a report could not be written.
func printMatrix(dir string, cells []matrix.Cell, out outputs) int {
	table, worst, err := matrix.Report(dir, cells)
	if err != nil {
		fmt.Fprintf(out.stderr, "matrix: %v\n", err)
		fmt.Fprintf(out.stdout, "NO VERDICT: %v\n", err)
	}
	io.WriteString(out.stdout, table)
	return worst
}

// matrixJobs writes the LAVA job of every cell instead of running it: a
// lab runs them on its workers, and smct lava-results on their logs gives
// the matrix's table.
func matrixJobs(ctx context.Context, o matrix.Options, at lava.Served, out outputs) int {
	jobs, err := lava.WriteJobs(ctx, o, at, func(line string) {
		fmt.Fprintln(progress.Over(out.progress, out.stdout), line)
	})
	fmt.Fprintf(out.stdout, "\nresults: %s\n%d LAVA jobs written (jobs.txt); submit each with `lavacli jobs submit JOB`, then\n  smct lava-results LOG...\n", o.Dir, len(jobs))
	if err != nil {
		fmt.Fprintf(out.stderr, "matrix: %v\n", err)
		return exitNoVerdict
	}
	return 0
}
