// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/ftrace-stackmap/conformance/internal/flagvalue"
	"github.com/ftrace-stackmap/conformance/internal/lava"
	"github.com/ftrace-stackmap/conformance/internal/matrix"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// lavaCmd writes a LAVA job of a run: results/<run>/lava/job.yaml, the
// device dictionary for this machine's QEMU and the artefacts, and prints
// the lava-run command that runs it here.
var lavaCmd = command{
	name:   "lava",
	page:   "docs/lab.md",
	about:  "write the LAVA job of the run qemu-test would make, and the device dictionary that runs it here",
	groups: []group{archGroup, kernelGroup, buildGroup, profileGroup, specGroup, requireGroup, bootGroup, resultsGroup, notifyGroup, serverGroup, exitGroup},
	prunes: true,
	flags: func(fs *flag.FlagSet, r *request) runFunc {
		r.run.Kind = "lava-job"
		url := fs.String("url", "", "URL where the lab serves the job's lava/ directory, artefacts and all (default: file:// paths on this machine)")
		return func(ctx context.Context, r *request, out outputs) outcome {
			at := lava.Served{URL: *url, Notify: string(r.notify)}
			if r.server.URL != "" {
				return onServer(ctx, r, at, r.server, out)
			}
			files, res, err := lava.WriteJob(ctx, new(qemutest.Runner), r.run, at)
			var body string
			if res != nil && res.Dir != "" {
				body = fmt.Sprintf("results: %s\n", res.Dir)
			}
			if err != nil {
				fmt.Fprintf(out.stderr, "lava: %s\n", report.OneLine(err.Error()))
				return withoutVerdict(body, report.OneLine(err.Error()))
			}
			return outcome{body: body + files.Text()}
		}
	},
}

// onServer makes the run as a job on a LAVA server and ends as qemu-test
// does: the same reports, closing line and exit status.
func onServer(ctx context.Context, r *request, at lava.Served, srv lava.Server, out outputs) outcome {
	// Before any build: a server that does not answer, or will not take
	// the token, is said at once.
	if err := srv.Check(ctx); err != nil {
		return refuseAt(out, "lava", err)
	}
	tell := func(format string, args ...any) { fmt.Fprintf(out.progress.Always(), "lava: "+format+"\n", args...) }
	res, on, err := lava.RunOnServer(ctx, new(qemutest.Runner), r.run, at, srv, tell)
	var head string
	if err == nil {
		head = lava.Agreement(on.Log, res) + "\n"
	}
	if on != nil && on.Job.ID != 0 {
		head += fmt.Sprintf("job %d: %s %s (%s)\n", on.Job.ID, on.Job.State, on.Job.Health, srv.JobURL(on.Job.ID))
	}
	o := finish(ctx, res, err, out)
	o.body = head + o.body
	return o
}

// lavaResultsCmd reads a LAVA job's log and writes the run it made as a
// run made here: summary, verdict, KTAP, JUnit and evidence; its exit
// status and closing line are qemu-test's. Given the logs of several jobs
// (a matrix's), it writes a run of each and the matrix's table.
var lavaResultsCmd = command{
	name:   "lava-results",
	page:   "docs/lab.md",
	about:  "judge LAVA's log of a job (or of a matrix's jobs) as a run made here",
	groups: []group{resultsGroup, exitGroup},
	prunes: true,
	flags: func(fs *flag.FlagSet, r *request) runFunc {
		var logs flagvalue.Paths
		fs.Var(&logs, "log", "LAVA's log of a job: lava-run's stderr, a LAVA server's log of the job, or its notify callback's data (or give them as arguments)")
		return func(ctx context.Context, r *request, out outputs) outcome {
			for _, v := range r.args {
				if err := logs.Set(v); err != nil {
					return refuseAt(out, "lava-results", err)
				}
			}
			switch len(logs) {
			case 0:
				return refuseAt(out, "lava-results", fmt.Errorf("give LAVA's log of the job: -log FILE"))
			case 1:
				res, l, err := lava.Results(ctx, new(qemutest.Runner), r.run, logs[0])
				var head string
				if err == nil {
					head = lava.Agreement(l, res) + "\n"
				}
				o := finish(ctx, res, lava.AsInfra(err), out)
				o.body = head + o.body
				return o
			}
			return lavaMatrix(ctx, r.run, logs, out)
		}
	},
	takesArgs: true,
}

// lavaMatrix judges the logs of several jobs, a run for each, and prints
// their table as smct matrix does; its status is the worst job's.
func lavaMatrix(ctx context.Context, o qemutest.Options, logs []string, out outputs) outcome {
	dir, err := results.NewRunDir(o.ResultsDir, "lava-matrix", "")
	if err != nil {
		return refuseAt(out, "lava-results", err)
	}
	cells := lava.JudgeLogs(ctx, o, dir, logs, out.stderr, func(c matrix.Cell, n, total int) {
		fmt.Fprintf(out.stdout, "[%d/%d] %s\n", n, total, matrix.Line(c))
	})
	return printMatrix(dir, cells, out)
}
