// SPDX-License-Identifier: GPL-2.0-only

package lava

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/apt"
	"github.com/ftrace-stackmap/conformance/internal/matrix"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// Served says where a lab serves a job's files: URL serves Dir (a
// matrix's directory), or, when Dir is "", the job's own lava/ directory.
// No URL gives file:// paths on this machine. Notify, when set, is where
// the lab's LAVA server posts the job's data as it ends.
type Served struct {
	URL, Dir string
	Notify   string
}

// urlOf is where the lab serves dir.
func (s Served) urlOf(dir string) string {
	if s.URL == "" || s.Dir == "" {
		return s.URL
	}
	rel, err := filepath.Rel(s.Dir, dir)
	if err != nil {
		return s.URL
	}
	return strings.TrimSuffix(s.URL, "/") + "/" + filepath.ToSlash(rel)
}

// WriteJob plans a run and writes it as a LAVA job in the run's lava/
// directory, validated by LAVA's own schemas when lava-dispatcher is here
// or can be installed. The run's directory is in the plan's result even
// when the job could not be written.
func WriteJob(ctx context.Context, rn *qemutest.Runner, o qemutest.Options, at Served) (*Files, *results.Result, error) {
	p, err := rn.Plan(ctx, o)
	var res *results.Result
	if p != nil {
		res = p.Result
	}
	if err != nil {
		return nil, res, err
	}
	dir := filepath.Join(res.Dir, "lava")
	files, err := Write(dir, p, Job{Name: JobName(res), URL: at.urlOf(dir), Notify: at.Notify, Memory: cmp.Or(o.Mem, DefaultMemory)})
	if err != nil {
		return nil, res, err
	}
	if err := apt.Ensure(o.Progress, apt.Need{Path: LavaRun, Package: "lava-dispatcher"}); err != nil {
		o.Progress.Notef("note: the job was not validated by LAVA's schemas: %s\n", report.OneLine(err.Error()))
		return files, res, nil
	}
	// lava-run --validate checks the artefacts too, which only file://
	// paths let it reach.
	if err := Validate(ctx, files, at.URL == ""); err != nil {
		return nil, res, err
	}
	return files, res, nil
}

// DefaultMemory is QEMU's -m of a job when none is asked for, as a boot
// here has.
const DefaultMemory = "512"

// JobName names a run's job as a lab's list of jobs shows it.
func JobName(res *results.Result) string {
	o := res.Request
	what := res.Entry
	if what == "" {
		what = strings.SplitN(res.Source, " ", 2)[0]
	}
	return fmt.Sprintf("stackmap conformance %s %s (profile %s, seed %d)", what, o.Arch, o.Profile, o.Seed)
}

// RunCommand runs a job written in a run's directory with lava-run, its
// log kept beside it.
func RunCommand(f *Files) string {
	return fmt.Sprintf("lava-run --job-id 1 --output-dir %s --device %s %s 2> %s",
		filepath.Join(f.Dir, "output"), f.Device, f.Job, LogFile(f))
}

// LogFile is where RunCommand keeps LAVA's log.
func LogFile(f *Files) string { return filepath.Join(f.Dir, "lava.log") }

// AsInfra is err as a run without a verdict gives it.
func AsInfra(err error) error {
	var infra *qemutest.InfraError
	if err == nil || errors.As(err, &infra) {
		return err
	}
	return &qemutest.InfraError{Err: err}
}

// Agreement says whether LAVA recorded each spec's case as the run's
// verdict has it.
func Agreement(l *Log, res *results.Result) string {
	agree, differ := l.Agreement(res)
	line := fmt.Sprintf("lava: %d test cases recorded by LAVA as the suite judged them", agree)
	if len(differ) > 0 {
		line += fmt.Sprintf("; %d otherwise:\n  %s", len(differ), strings.Join(differ, "\n  "))
	}
	return line
}

// JudgeLogs judges the logs of several jobs (a matrix's), each as a run in
// a directory of its own under dir, and returns them as a matrix's cells;
// each cell is told to done as it is judged.
func JudgeLogs(ctx context.Context, o qemutest.Options, dir string, logs []string, notes io.Writer, done func(c matrix.Cell, n, total int)) []matrix.Cell {
	rn := new(qemutest.Runner)
	var cells []matrix.Cell
	for i, log := range logs {
		co := o
		co.ResultsDir = filepath.Join(dir, fmt.Sprintf("%d-%s", i+1, strings.TrimSuffix(filepath.Base(log), filepath.Ext(log))))
		co.Progress = progress.Quiet(notes, filepath.Base(log)+": ")
		res, _, err := Results(ctx, rn, co, log)
		c := matrix.Cell{Entry: filepath.Base(log), Result: res, Err: err}
		if res != nil && res.Request.Arch.Name != "" {
			c.Entry, c.Arch = cmp.Or(res.Entry, strings.SplitN(res.Source, " ", 2)[0]), res.Request.Arch
		}
		if res != nil && res.Dir != "" {
			if err != nil {
				res.NoVerdict = report.Plain(err.Error())
			}
			if _, werr := results.Write(res); werr != nil && c.Err == nil {
				c.Err = AsInfra(werr)
			}
		}
		cells = append(cells, c)
		done(c, i+1, len(logs))
	}
	return cells
}

// WriteJobs writes the LAVA job of every cell of a matrix, in the cell's
// directory under o.Dir, instead of running it: a lab runs them on its
// workers. at.Dir is o.Dir. It returns the jobs written, in cell order,
// and tells done of each cell: its job, or why it has none. The list of
// jobs is written to jobs.txt.
func WriteJobs(ctx context.Context, o matrix.Options, at Served, done func(line string)) ([]string, error) {
	rn := new(qemutest.Runner)
	var jobs []string
	n, total := 0, len(o.Entries)*len(o.Arches)
	var failed error
	for _, e := range o.Entries {
		for _, a := range o.Arches {
			n++
			ro := o.Base
			ro.Arch, ro.Image, ro.Kind = a, e, "lava-job"
			ro.ResultsDir = filepath.Join(o.Dir, e+"-"+a.Name)
			ro.Progress = progress.Quiet(o.Notes, e+"/"+a.Name+": ")
			files, _, err := WriteJob(ctx, rn, ro, at)
			line := fmt.Sprintf("[%d/%d] %s %s: ", n, total, e, a)
			if err != nil {
				failed = cmp.Or(failed, fmt.Errorf("%s %s: %w", e, a, err))
				line += "NO JOB: " + report.OneLine(err.Error())
			} else {
				jobs = append(jobs, files.Job)
				line += files.Job
			}
			done(line)
		}
	}
	list := strings.Join(jobs, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(o.Dir, "jobs.txt"), []byte(list), 0o644); err != nil {
		return jobs, err
	}
	return jobs, failed
}
