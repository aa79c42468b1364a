// SPDX-License-Identifier: GPL-2.0-only

package lava

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/matrix"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
	"github.com/ftrace-stackmap/conformance/internal/results"
)

// LabCell is a matrix cell made as a job on a LAVA server: the cell, and
// the job as the server last gave it (its device and times).
type LabCell struct {
	matrix.Cell
	Job JobState
}

// MatrixOnServer runs a matrix on a LAVA server instead of here: it
// writes every cell's job (as WriteJobs lays them out under o.Dir),
// submits them all, so that the server's scheduler runs them on as many
// devices as it has, follows them, fetches each job's log (kept as
// lava.log beside the job) and judges it as lava-results does. Cells
// come back in entry, then arch, order. A cell whose job could not be
// written or submitted, or that the server cancels or loses, has no
// verdict and says why; the other cells' verdicts stand.
func MatrixOnServer(ctx context.Context, o matrix.Options, at Served, srv Server, every time.Duration, tell func(format string, args ...any)) []LabCell {
	rn := new(qemutest.Runner)
	var cells []LabCell
	var jobs []*Files
	var opts []qemutest.Options
	for _, e := range o.Entries {
		for _, a := range o.Arches {
			ro := o.Base
			ro.Arch, ro.Image, ro.Kind = a, e, "lava-job"
			ro.ResultsDir = filepath.Join(o.Dir, e+"-"+a.Name)
			ro.Progress = progress.Quiet(o.Notes, e+"/"+a.Name+": ")
			files, res, err := WriteJob(ctx, rn, ro, at)
			c := LabCell{Cell: matrix.Cell{Entry: e, Arch: a, Result: res}}
			if err != nil {
				c.Err = AsInfra(fmt.Errorf("writing the job: %w", err))
			}
			cells, jobs, opts = append(cells, c), append(jobs, files), append(opts, ro)
		}
	}
	var wg sync.WaitGroup
	var told sync.Mutex
	say := func(format string, args ...any) { told.Lock(); defer told.Unlock(); tell(format, args...) }
	for i := range cells {
		if cells[i].Err != nil {
			continue
		}
		id, err := srv.Submit(ctx, jobs[i].Definition)
		if err != nil {
			cells[i].Err = AsInfra(fmt.Errorf("submitting the job: %w", err))
			continue
		}
		say("%s: job %d queued: %s", cells[i].Name(), id, srv.JobURL(id))
		cells[i].Job.ID = id
		wg.Add(1)
		go func(c *LabCell, id int) {
			defer wg.Done()
			start := time.Now()
			job, err := onServer(ctx, rn, opts[i], srv, id, jobs[i], every, func(j JobState) {
				say("%s: job %d %s %s %s", c.Name(), j.ID, j.State, j.Health, j.Device)
			}, &c.Cell)
			if job.ID != 0 {
				c.Job = job
			}
			c.Err, c.Duration = err, time.Since(start)
		}(&cells[i], id)
	}
	wg.Wait()
	return cells
}

// onServer follows a submitted job to its end, fetches its log and judges
// it into c; the error is why the cell has no verdict.
func onServer(ctx context.Context, rn *qemutest.Runner, o qemutest.Options, srv Server, id int, files *Files, every time.Duration, tell func(JobState), c *matrix.Cell) (JobState, error) {
	job, err := srv.Wait(ctx, id, every, tell)
	if err != nil {
		return job, AsInfra(fmt.Errorf("following job %d: %w", id, err))
	}
	if job.Health == "Canceled" {
		return job, AsInfra(fmt.Errorf("the server canceled job %d (%s)", id, srv.JobURL(id)))
	}
	log, err := srv.Logs(ctx, id)
	if err == nil {
		err = os.WriteFile(LogFile(files), log, 0o644)
	}
	if err != nil {
		return job, AsInfra(fmt.Errorf("job %d's log: %w", id, err))
	}
	o.ResultsDir = filepath.Dir(c.Result.Dir)
	res, _, err := Results(ctx, rn, o, LogFile(files))
	if res != nil {
		c.Result = res
		if err != nil {
			res.NoVerdict = err.Error()
		}
		if _, werr := results.Write(res); werr != nil && err == nil {
			err = AsInfra(werr)
		}
	}
	return job, err
}

// Cells are the lab cells as a matrix's.
func Cells(lab []LabCell) []matrix.Cell {
	out := make([]matrix.Cell, len(lab))
	for i, c := range lab {
		out[i] = c.Cell
	}
	return out
}

// LabFile says where and when each cell's job ran on the server.
const LabFile = "lab.txt"

// WriteLab writes LabText into the matrix's directory and returns the
// file and its last line, what the lab's own times say a matrix costs.
func WriteLab(dir string, cells []LabCell) (path, cost string, err error) {
	text := LabText(cells)
	lines := strings.Split(strings.TrimSpace(text), "\n")
	path = filepath.Join(dir, LabFile)
	return path, lines[len(lines)-1], os.WriteFile(path, []byte(text), 0o644)
}

// LabText is a line per cell: its job, the device and the server's
// times; then what the jobs cost by those times, and what a matrix of 50
// trees on both arches would cost on as many devices.
func LabText(cells []LabCell) string {
	var b strings.Builder
	for _, c := range cells {
		if c.Job.ID == 0 {
			fmt.Fprintf(&b, "%s: no job\n", c.Name())
			continue
		}
		fmt.Fprintf(&b, "%s: job %d on %s, %s to %s, %s %s\n", c.Name(), c.Job.ID, cmp.Or(c.Job.Device, "no device"),
			cmp.Or(c.Job.Start, "-"), cmp.Or(c.Job.End, "-"), c.Job.State, c.Job.Health)
	}
	return b.String() + labCost(cells)
}

// labCost sums the jobs up by the server's times: how many ran, on how
// many devices, from the first start to the last end, the mean job; and
// from those, 100 jobs (50 trees × 2 arches) on as many devices.
func labCost(cells []LabCell) string {
	devices := map[string]bool{}
	var first, last time.Time
	var sum time.Duration
	n := 0
	for _, c := range cells {
		s, err1 := time.Parse(time.RFC3339Nano, c.Job.Start)
		e, err2 := time.Parse(time.RFC3339Nano, c.Job.End)
		if err1 != nil || err2 != nil || c.Job.Device == "" {
			continue
		}
		n++
		devices[c.Job.Device] = true
		sum += e.Sub(s)
		if first.IsZero() || s.Before(first) {
			first = s
		}
		if e.After(last) {
			last = e
		}
	}
	if n == 0 {
		return "no job ran on a device\n"
	}
	mean := sum / time.Duration(n)
	k := len(devices)
	return fmt.Sprintf("%d jobs on %d devices, %s from the first start to the last end, %s a job on average; "+
		"50 trees x 2 arches (100 jobs) would take about %s on %d devices, %s on 10\n",
		n, k, last.Sub(first).Round(time.Second), mean.Round(time.Second),
		(100 * mean / time.Duration(k)).Round(time.Minute), k, (100 * mean / 10).Round(time.Minute))
}
