// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/bench"
	"github.com/ftrace-stackmap/conformance/internal/kernels/images"
	"github.com/ftrace-stackmap/conformance/internal/progress"
)

// benchMain measures time to verdict against the floor and prints the
// figures, their change since internal/bench/last.json, and the targets. Exit
// status: 0 every target met, 1 one missed, 2 a measurement failed.
func benchMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rep := progress.New(stderr)
	o := bench.Options{Progress: rep, Notes: stderr}
	fs.StringVar(&o.Image, "image", "", "images.lock entry timed per arch (default: the lock's default)")
	fs.IntVar(&o.Reps, "reps", 3, "repetitions of each measurement; figures are medians")
	runFlags(fs, &o.Base)
	arches := fs.String("arches", "arm64,x86_64", "comma-separated arches")
	matrixImages := fs.String("matrix-images", "", "entries of the matrix timed for throughput (default: the debian ones; \"none\" to skip)")
	results := fs.String("results", "", "where the bench's directory goes (default: the project's results/)")
	fs.StringVar(&o.WalkSeries, "walk-series", "", "a series (as make review takes it) whose walk is timed too")
	fs.StringVar(&o.WalkTree, "walk-tree", "", "the tree -walk-series applies on")
	fs.StringVar(&o.WalkArch, "walk-arch", "x86_64", "the arch the walk is timed on")
	if err := fs.Parse(args); err != nil {
		return exitNoVerdict
	}
	if o.Reps < 1 {
		fmt.Fprintln(stderr, "bench: -reps must be at least 1")
		return exitNoVerdict
	}
	if !workplace(&o.Base, stderr) {
		return exitNoVerdict
	}
	if (o.WalkSeries == "") != (o.WalkTree == "") {
		fmt.Fprintln(stderr, "bench: -walk-series and -walk-tree go together")
		return exitNoVerdict
	}
	absIfThere(&o.WalkSeries, &o.WalkTree)
	var err error
	if o.Arches, err = archList(*arches); err != nil {
		fmt.Fprintf(stderr, "%v\n", err)
		return exitNoVerdict
	}
	lock, err := images.Read(o.Base.LockFile)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return exitNoVerdict
	}
	if o.Image == "" {
		o.Image = lock.Default
	}
	switch *matrixImages {
	case "none":
	case "":
		for _, e := range lock.Entries {
			if e.Kind == images.KindDebian {
				o.MatrixEntries = append(o.MatrixEntries, e.Name)
			}
		}
	default:
		if o.MatrixEntries, err = lockEntries(o.Base.LockFile, *matrixImages); err != nil {
			fmt.Fprintf(stderr, "bench: %v\n", err)
			return exitNoVerdict
		}
	}
	dir, err := newRunDir(*results, o.Base.ModuleDir, "bench", "")
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return exitNoVerdict
	}

	ctx, stop := interruptible()
	defer stop()
	r, err := bench.Run(ctx, o)
	if err != nil {
		printNoVerdict(stdout, "bench: "+err.Error())
		return exitNoVerdict
	}
	last := filepath.Join(o.Base.ModuleDir, "internal", "bench", "last.json")
	prev, err := bench.Load(last)
	if err != nil {
		fmt.Fprintf(stderr, "bench: previous figures unreadable: %v\n", err)
	}
	var table strings.Builder
	met, missed := r.WriteTable(io.MultiWriter(stdout, &table), prev)
	os.WriteFile(filepath.Join(dir, "bench.txt"), []byte(table.String()), 0o644)
	file := filepath.Join(dir, "bench.json")
	if err := r.Save(file, last); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return exitNoVerdict
	}
	skipped := 0
	if len(o.Arches) < 2 {
		skipped = 1 // the target for all arches at once
	}
	fmt.Fprintf(stdout, "\nfigures: %s, %s\n%d passed, %d failed, %d skipped\n", file, last, met, missed, skipped)
	if missed > 0 {
		return exitFailed
	}
	return 0
}
