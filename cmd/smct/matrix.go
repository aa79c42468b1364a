// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/lava"
	"github.com/ftrace-stackmap/conformance/internal/matrix"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// matrixCmd runs qemu-test for every images.lock entry (or -images) on
// every arch, a few boots at a time, printing each cell as it finishes and
// then the table. Its exit status is the worst cell's.
var matrixCmd = command{
	name:   "matrix",
	page:   "docs/matrix.md",
	about:  "run the suite for every images.lock entry on every arch, or write each cell's LAVA job",
	groups: []group{archesGroup, buildGroup, profileGroup, specGroup, requireGroup, bootGroup, hereGroup, resultsGroup, notifyGroup, serverGroup, exitGroup},
	prunes: true,
	flags: func(fs *flag.FlagSet, r *request) runFunc {
		parallel := fs.Int("parallel", 2, "boots at a time")
		entries := fs.String("images", "", "comma-separated images.lock entries (default: all)")
		lavaJobs := fs.Bool("lava-jobs", false, "write each cell's LAVA job (smct lava) instead of running it")
		lavaURL := fs.String("lava-url", "", "with -lava-jobs or -server: URL where the lab serves the matrix directory (default: file:// paths)")
		return func(ctx context.Context, r *request, out outputs) outcome {
			o := matrix.Options{Base: r.run, Arches: r.arches, Parallel: *parallel, Notes: out.stderr}
			var err error
			if r.server.URL != "" {
				// Before any build: the server answers and takes the token.
				err = r.server.Check(ctx)
			}
			if err == nil {
				err = o.Select(*entries)
			}
			if err == nil {
				o.Dir, err = results.NewRunDir(r.run.ResultsDir, "matrix", "")
			}
			if err != nil {
				return refuseAt(out, "matrix", err)
			}
			if r.server.URL != "" {
				return matrixOnServer(ctx, o, lava.Served{URL: *lavaURL, Dir: o.Dir, Notify: string(r.notify)}, r.server, out)
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

// matrixOnServer runs every cell as a job on a LAVA server, its
// scheduler spreading them over its devices, and ends as a matrix made
// here does; lab.txt says where and when each job ran.
func matrixOnServer(ctx context.Context, o matrix.Options, at lava.Served, srv lava.Server, out outputs) outcome {
	end := out.progress.Step("matrix: %d cells as jobs on %s", len(o.Entries)*len(o.Arches), srv.URL)
	cells := lava.MatrixOnServer(ctx, o, at, srv, 3*time.Second, func(format string, args ...any) {
		fmt.Fprintf(out.progress.Always(), "lava: "+format+"\n", args...)
	})
	end(nil)
	lab, cost, err := lava.WriteLab(o.Dir, cells)
	if err != nil {
		fmt.Fprintf(out.stderr, "matrix: %v\n", err)
	}
	done := printMatrix(o.Dir, lava.Cells(cells), out)
	// What the lab's own times say a matrix costs, above the closing line.
	done.body += fmt.Sprintf("lab:     %s\n%s\n", lab, cost)
	return done
}

// matrixJobs writes the LAVA job of every cell instead of running it: a
// lab runs them on its workers, and smct lava-results on their logs gives
// the matrix's table.
func matrixJobs(ctx context.Context, o matrix.Options, at lava.Served, out outputs) outcome {
	jobs, err := lava.WriteJobs(ctx, o, at, func(line string) {
		fmt.Fprintln(progress.Over(out.progress, out.stdout), line)
	})
	if err != nil {
		fmt.Fprintf(out.stderr, "matrix: %v\n", err)
	}
	return jobsOutcome(o.Dir, len(jobs), err)
}

// jobsOutcome says where the jobs are and how to run them; jobs that could
// not all be written leave the matrix without a verdict.
func jobsOutcome(dir string, written int, err error) outcome {
	body := fmt.Sprintf("\nresults: %s\n%d LAVA jobs written (jobs.txt); submit each with `lavacli jobs submit JOB`, then\n  smct lava-results LOG...\n", dir, written)
	if err != nil {
		return withoutVerdict(body, "writing the LAVA jobs: "+report.OneLine(err.Error()))
	}
	return outcome{body: body}
}
