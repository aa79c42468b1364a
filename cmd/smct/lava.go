// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/apt"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/lava"
	"github.com/ftrace-stackmap/conformance/internal/matrix"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// lavaFlags are what a LAVA job needs besides its run: QEMU's memory, and
// where the lab serves the artefacts.
type lavaFlags struct {
	mem string
	// url serves the directory served (a matrix's), or, when served is "",
	// the job's own lava/ directory; "" gives file:// paths.
	url, served string
}

// jobFlags adds the flags of a job's run to fs: the kernel and the specs
// as qemu-test's, and where a lab serves the artefacts.
func jobFlags(fs *flag.FlagSet, o *qemutest.Options, lf *lavaFlags) {
	o.Profile = contract.ProfileV4
	fs.Var(&o.Profile, "profile", "contract profile: v4 or v3")
	fs.StringVar(&o.Labels, "labels", "", "Ginkgo label filter")
	fs.DurationVar(&o.Timeout, "timeout", 5*time.Minute, "limit for each boot: its test block's timeout")
	fs.StringVar(&o.LockFile, "lock", "images.lock", "the image lock file")
	fs.IntVar(&o.Jobs, "jobs", 0, "make -j for a kernel built here (default: one per CPU)")
	fs.StringVar(&o.Accel, "accel", "", "kvm or tcg in the device dictionary (default: kvm when /dev/kvm works and the guest is the host's arch)")
	fs.StringVar(&o.CPU, "cpu", "", "QEMU -cpu instead of the machine's")
	fs.StringVar(&lf.mem, "mem", "512", "QEMU -m, megabytes")
	fs.StringVar(&lf.url, "url", "", "URL where the lab serves the job's lava/ directory, artefacts and all (default: file:// paths on this machine)")
	requireFlags(fs, &o.Request)
}

// lavaMain writes a LAVA job of a run: results/<run>/lava/job.yaml, the
// device dictionary for this machine's QEMU and the artefacts, and prints
// the lava-run command that runs it here.
func lavaMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lava", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := qemutest.Options{Progress: progress.New(stderr), Kind: "lava-job"}
	var lf lavaFlags
	fs.StringVar(&o.Arch, "arch", "", "arm64 or x86_64")
	fs.StringVar(&o.Kernel, "kernel", "", "kernel image to boot (overrides -image)")
	fs.StringVar(&o.Tree, "tree", "", "kernel source tree to build and boot (overrides -image)")
	fs.StringVar(&o.Image, "image", "", "images.lock entry to boot (default: the lock's default)")
	jobFlags(fs, &o, &lf)
	fs.StringVar(&o.ResultsDir, "results", "", "where run directories go (default: the project's results/)")
	bootArgs := fs.String("append", "", "extra kernel command line words")
	if err := fs.Parse(args); err == flag.ErrHelp {
		return 0
	} else if err != nil {
		return exitNoVerdict
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lava: unexpected argument %q\n", fs.Arg(0))
		return exitNoVerdict
	}
	o.BootArgs = strings.Fields(*bootArgs)
	if !workplaceWithResults(&o, stderr) {
		return exitNoVerdict
	}
	absIfThere(&o.Kernel, &o.Tree)
	ctx, stop := interruptible()
	defer stop()
	files, err := writeJob(ctx, new(qemutest.Runner), o, lf, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "lava: %s\n", report.OneLine(err.Error()))
		return exitNoVerdict
	}
	fmt.Fprintf(stdout, "job:    %s\ndevice: %s\n\nrun it here (as root), then read LAVA's log back:\n  %s\n  make lava-results LOG=%s\n",
		files.Job, files.Device, lavaRunCommand(files), filepath.Join(files.Dir, "lava.log"))
	return 0
}

// writeJob plans a run and writes it as a LAVA job, validated by LAVA's
// own schemas when lava-dispatcher is here or can be installed.
func writeJob(ctx context.Context, rn *qemutest.Runner, o qemutest.Options, lf lavaFlags, stdout io.Writer) (*lava.Files, error) {
	p, err := rn.Plan(ctx, o)
	if p != nil && p.Result != nil && p.Result.Dir != "" {
		fmt.Fprintf(stdout, "results: %s\n", p.Result.Dir)
	}
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(p.Result.Dir, "lava")
	url := lf.url
	if rel, err := filepath.Rel(lf.served, dir); url != "" && lf.served != "" && err == nil {
		url = strings.TrimSuffix(url, "/") + "/" + filepath.ToSlash(rel)
	}
	files, err := lava.Write(dir, p, jobName(p.Result), url, lf.mem)
	if err != nil {
		return nil, err
	}
	if err := apt.Ensure(o.Progress, apt.Need{Path: lava.LavaRun, Package: "lava-dispatcher"}); err != nil {
		o.Progress.Notef("note: the job was not validated by LAVA's schemas: %s\n", report.OneLine(err.Error()))
		return files, nil
	}
	// lava-run --validate checks the artefacts too, which only file://
	// paths let it reach.
	if err := lava.Validate(ctx, files, lf.url == ""); err != nil {
		return nil, err
	}
	return files, nil
}

// jobName names a run's job as a lab's list of jobs shows it.
func jobName(res *results.Result) string {
	o := res.Request
	what := res.Entry
	if what == "" {
		what = strings.SplitN(res.Source, " ", 2)[0]
	}
	return fmt.Sprintf("stackmap conformance %s %s (profile %s, seed %d)", what, o.Arch, o.Profile, o.Seed)
}

// lavaRunCommand runs a job written in a run's directory with lava-run,
// its log kept beside it.
func lavaRunCommand(f *lava.Files) string {
	return fmt.Sprintf("lava-run --job-id 1 --output-dir %s --device %s %s 2> %s",
		filepath.Join(f.Dir, "output"), f.Device, f.Job, filepath.Join(f.Dir, "lava.log"))
}

// lavaResultsMain reads a LAVA job's log and writes the run it made as a
// run made here: summary, verdict, KTAP, JUnit and evidence; its exit
// status and closing line are qemu-test's. Given the logs of several jobs
// (a matrix's), it writes a run of each and the matrix's table.
func lavaResultsMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lava-results", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := qemutest.Options{Progress: progress.New(stderr)}
	var logs []string
	fs.Func("log", "LAVA's log of a job: lava-run's stderr, a LAVA server's log of the job, or its notify callback's data (or give them as arguments)", func(v string) error {
		logs = append(logs, v)
		return nil
	})
	fs.StringVar(&o.ResultsDir, "results", "", "where run directories go (default: the project's results/)")
	exitCodes := fs.String("exit-codes", report.ExitCodesSmct, "exit status convention: smct or kselftest")
	if err := fs.Parse(args); err == flag.ErrHelp {
		return 0
	} else if err != nil {
		return exitNoVerdict
	}
	logs = append(logs, fs.Args()...)
	if len(logs) == 0 {
		fmt.Fprintln(stderr, "lava-results: give LAVA's log of the job: -log FILE")
		return exitNoVerdict
	}
	if *exitCodes != report.ExitCodesSmct && *exitCodes != report.ExitCodesKselftest {
		fmt.Fprintf(stderr, "lava-results: -exit-codes=%q: want smct or kselftest\n", *exitCodes)
		return exitNoVerdict
	}
	if !workplaceWithResults(&o, stderr) {
		return exitNoVerdict
	}
	for i := range logs {
		absIfThere(&logs[i])
	}
	ctx, stop := interruptible()
	defer stop()
	if len(logs) > 1 {
		return lavaMatrix(ctx, o, logs, stdout, stderr)
	}
	res, l, err := lava.Results(ctx, new(qemutest.Runner), o, logs[0])
	if err != nil {
		return noVerdict(ctx, res, asInfra(err), *exitCodes, stdout, stderr)
	}
	// results.Write writes every report of a run directory.
	summary, err := results.Write(res)
	if err != nil {
		return noVerdict(ctx, res, err, *exitCodes, stdout, stderr)
	}
	fmt.Fprintln(stdout, agreement(l, res))
	io.WriteString(stdout, report.Plain(summary))
	return res.ExitCodeAs(*exitCodes)
}

// asInfra is err as a run without a verdict gives it.
func asInfra(err error) error {
	var infra *qemutest.InfraError
	if errors.As(err, &infra) {
		return err
	}
	return &qemutest.InfraError{Err: err}
}

// agreement says whether LAVA recorded each spec's case as the run's
// verdict has it.
func agreement(l *lava.Log, res *results.Result) string {
	agree, differ := l.Agreement(res.Summary)
	line := fmt.Sprintf("lava: %d test cases recorded by LAVA as the suite judged them", agree)
	if len(differ) > 0 {
		line += fmt.Sprintf("; %d otherwise:\n  %s", len(differ), strings.Join(differ, "\n  "))
	}
	return line
}

// lavaMatrix judges the logs of several jobs, a run for each in a
// directory of their own, and prints their table as smct matrix does; it
// exits with the worst job's status.
func lavaMatrix(ctx context.Context, o qemutest.Options, logs []string, stdout, stderr io.Writer) int {
	dir, err := results.NewRunDir(o.ResultsDir, "lava-matrix", "")
	if err != nil {
		fmt.Fprintf(stderr, "lava-results: %v\n", err)
		return exitNoVerdict
	}
	rn := new(qemutest.Runner)
	var cells []matrix.Cell
	for i, log := range logs {
		co := o
		co.ResultsDir = filepath.Join(dir, fmt.Sprintf("%d-%s", i+1, strings.TrimSuffix(filepath.Base(log), filepath.Ext(log))))
		co.Progress = progress.Quiet(stderr, filepath.Base(log)+": ")
		res, _, err := lava.Results(ctx, rn, co, log)
		c := matrix.Cell{Entry: filepath.Base(log), Arch: "?", Result: res, Err: err}
		if res != nil && res.Request.Arch != "" {
			c.Entry, c.Arch = cmp.Or(res.Entry, strings.SplitN(res.Source, " ", 2)[0]), res.Request.Arch
		}
		if res != nil && res.Dir != "" {
			if err != nil {
				res.NoVerdict = report.Plain(err.Error())
			}
			if _, err := results.Write(res); err != nil {
				fmt.Fprintf(stderr, "%s: %v\n", log, err)
			}
		}
		cells = append(cells, c)
		fmt.Fprintf(stdout, "[%d/%d] %s\n", i+1, len(logs), matrix.Line(c))
	}
	var b strings.Builder
	b.WriteString("\n")
	worst := matrix.WriteTable(&b, cells)
	// One kcidb.json for all the jobs, as smct matrix writes its own.
	if err := matrix.WriteKCIDB(dir, cells); err != nil {
		fmt.Fprintf(stderr, "writing %s: %v\n", results.KCIDBFile, err)
	}
	fmt.Fprintf(&b, "\nresults: %s\n%s\n", dir, matrix.Totals(cells))
	os.WriteFile(filepath.Join(dir, "matrix.txt"), []byte(b.String()), 0o644)
	io.WriteString(stdout, b.String())
	return worst
}

// matrixJobs writes the LAVA job of every cell of a matrix, in the cell's
// directory, instead of running it: a lab runs them on its workers, and
// smct lava-results on their logs gives the matrix's table. url is where
// the lab serves the matrix directory.
func matrixJobs(o matrix.Options, url string, rep *progress.Reporter, stdout io.Writer) int {
	ctx, stop := interruptible()
	defer stop()
	rn := new(qemutest.Runner)
	var jobs []string
	worst, n, total := 0, 0, len(o.Entries)*len(o.Arches)
	for _, e := range o.Entries {
		for _, a := range o.Arches {
			n++
			ro := o.Base
			ro.Arch, ro.Image, ro.Kind = a, e, "lava-job"
			ro.ResultsDir = filepath.Join(o.Dir, e+"-"+a)
			ro.Progress = progress.Quiet(o.Notes, e+"/"+a+": ")
			lf := lavaFlags{mem: cmp.Or(ro.Mem, "512"), url: url, served: o.Dir}
			files, err := writeJob(ctx, rn, ro, lf, io.Discard)
			line := fmt.Sprintf("[%d/%d] %s %s: ", n, total, e, a)
			if err != nil {
				worst = exitNoVerdict
				line += "NO JOB: " + report.OneLine(err.Error())
			} else {
				jobs = append(jobs, files.Job)
				line += files.Job
			}
			fmt.Fprintln(progress.Over(rep, stdout), line)
		}
	}
	list := strings.Join(jobs, "\n") + "\n"
	os.WriteFile(filepath.Join(o.Dir, "jobs.txt"), []byte(list), 0o644)
	fmt.Fprintf(stdout, "\nresults: %s\n%d LAVA jobs written (jobs.txt); submit each with `lavacli jobs submit JOB`, then\n  smct lava-results LOG...\n", o.Dir, len(jobs))
	return worst
}
