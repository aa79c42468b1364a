// SPDX-License-Identifier: GPL-2.0-only

package lava

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sync/errgroup"

	"github.com/ftrace-stackmap/conformance/initramfs"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// Description is what the job's maker knew of its run and LAVA's log does
// not keep: every boot's initramfs holds it, and the guest sends it back
// before the suite starts (guest.JobFile).
type Description struct {
	Job         string // the job's name
	Request     results.Request
	Kernel      string // the image, where the maker found it
	Entry       string
	Source      string
	KernelSHA   string
	Required    bool
	RequiredWhy string
	Suite       string   // the suite's repository and commit
	Plans       []string // the boots the run was to make
	Sanitized   string   `json:",omitempty"` // how the kernel is sanitized (SANITIZE=1)
	// Derived is what the maker's run decided from Request and the kernel.
	Derived results.Derived
}

// Files are a job written: job.yaml, device.yaml and the artefacts, in Dir.
type Files struct {
	Dir, Job, Device string
	Boots            []string // the job's blocks, in order
	Definition       []byte   // job.yaml's text, as a server is given it
}

// Text says where a job written is and how to run it here, then judge
// LAVA's log of it.
func (f *Files) Text() string {
	return fmt.Sprintf("job:    %s\ndevice: %s\n\nrun it here (as root), then read LAVA's log back:\n  %s\n  make lava-results LOG=%s\n",
		f.Job, f.Device, RunCommand(f), LogFile(f))
}

// Write makes the LAVA job of a planned run in dir: the kernel and one
// initramfs per boot as gzip-compressed artefacts (each initramfs a single
// archive with the boot's run configuration), job.yaml and device.yaml.
// j gives the job's name, URL, Notify and Memory; the plan the rest.
func Write(dir string, p *qemutest.Planned, j Job) (*Files, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	res := p.Result
	desc, err := json.Marshal(Description{Job: j.Name, Request: res.Request, Kernel: res.Kernel, Entry: res.Entry, Source: res.Source,
		KernelSHA: res.KernelSHA, Required: res.Required, RequiredWhy: res.RequiredWhy, Suite: res.Suite, Plans: res.Plans,
		Sanitized: res.Sanitized, Derived: res.Derived})
	if err != nil {
		return nil, err
	}
	j.Arch, j.Machine, j.Blocks, j.Metadata = p.Machine.Arch, p.Machine, make([]Block, len(p.Boots)), metadata(res)
	var g errgroup.Group
	g.SetLimit(2)
	g.Go(func() error {
		kernel, err := gzipped(filepath.Join(dir, "kernel.gz"), func(w io.Writer) error {
			f, err := os.Open(p.Kernel)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = io.Copy(w, f)
			return err
		})
		j.Kernel = kernel
		return err
	})
	for i, b := range p.Boots {
		cfg := b.Config
		if !b.Control { // its result is not reported, here or in LAVA
			cfg.Args = append(cfg.Args, "-smct.case-lines")
			cfg.CaseBoot = b.Plan.Name
		}
		if res.Required {
			cfg.Args = append(cfg.Args, "-smct.require="+report.RequireStackmap.String())
		}
		cfg.Job = desc
		g.Go(func() error {
			initrd, err := gzipped(filepath.Join(dir, "initrd-"+b.Plan.Name+".cpio.gz"), func(w io.Writer) error {
				return initramfs.Single(p.Initramfs, w, cfg)
			})
			j.Blocks[i] = Block{Name: b.Plan.Name, CommandLine: b.CommandLine, CPUs: b.Plan.CPUs, Initrd: initrd, Timeout: b.Timeout, Quiet: b.Quiet}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("writing the artefacts: %w", err)
	}
	f := &Files{Dir: dir, Job: filepath.Join(dir, "job.yaml"), Device: filepath.Join(dir, "device.yaml")}
	for _, b := range j.Blocks {
		f.Boots = append(f.Boots, b.Name)
	}
	job, err := j.YAML()
	if err != nil {
		return nil, err
	}
	device, err := j.Device()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(f.Job, job, 0o644); err != nil {
		return nil, err
	}
	f.Definition = job
	return f, os.WriteFile(f.Device, device, 0o644)
}

// metadata is what a LAVA server shows of the run beside the job.
func metadata(res *results.Result) map[string]string {
	o := res.Request
	m := map[string]string{"stackmap.kernel": res.Source, "stackmap.kernel.sha256": res.KernelSHA,
		"stackmap.profile": o.Profile.String(), "stackmap.seed": fmt.Sprint(o.Seed), "stackmap.suite": res.Suite}
	if !o.Labels.IsZero() {
		m["stackmap.labels"] = o.Labels.String()
	}
	if res.RequiredWhy != "" {
		m["stackmap.require"] = fmt.Sprintf("%v (%s)", res.Required, res.RequiredWhy)
	}
	return m
}

// gzipped writes what fill writes to path, gzip-compressed, and returns
// it as an artefact.
func gzipped(path string, fill func(io.Writer) error) (Artefact, error) {
	f, err := os.Create(path)
	if err != nil {
		return Artefact{}, err
	}
	sum := sha256.New()
	zw := gzip.NewWriter(io.MultiWriter(f, sum))
	err = fill(zw)
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return Artefact{Path: path, SHA256: hex.EncodeToString(sum.Sum(nil))}, err
}
