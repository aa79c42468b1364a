// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/kernels/images"
	"github.com/ftrace-stackmap/conformance/internal/matrix"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/results"
)

// matrixMain runs qemu-test for every images.lock entry (or -images) on
// both arches, two boots at a time, printing each cell as it finishes and
// then the table. Its exit status is the worst cell's.
func matrixMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("matrix", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := matrix.Options{Notes: stderr}
	o.Base.Profile = contract.ProfileV4
	fs.Var(&o.Base.Profile, "profile", "contract profile: v4 or v3")
	fs.StringVar(&o.Base.Labels, "labels", "", "Ginkgo label filter")
	runFlags(fs, &o.Base)
	requireFlags(fs, &o.Base.Request)
	fs.IntVar(&o.Parallel, "parallel", 2, "boots at a time")
	entries := fs.String("images", "", "comma-separated images.lock entries (default: all)")
	arches := fs.String("arches", "arm64,x86_64", "comma-separated arches")
	resultsDir := fs.String("results", "", "where the matrix directory goes (default: the project's results/)")
	lavaJobs := fs.Bool("lava-jobs", false, "write each cell's LAVA job (smct lava) instead of running it")
	lavaURL := fs.String("lava-url", "", "with -lava-jobs: URL where the lab serves the matrix directory (default: file:// paths)")
	if err := fs.Parse(args); err != nil {
		return exitNoVerdict
	}
	if !workplace(&o.Base, stderr) {
		return exitNoVerdict
	}
	var err error
	if o.Entries, err = lockEntries(o.Base.LockFile, *entries); err != nil {
		printNoVerdict(stdout, "matrix: "+err.Error())
		return exitNoVerdict
	}
	if o.Arches, err = archList(*arches); err != nil {
		fmt.Fprintf(stderr, "%v\n", err)
		return exitNoVerdict
	}
	if o.Dir, err = newRunDir(*resultsDir, o.Base.ModuleDir, "matrix", ""); err != nil {
		fmt.Fprintf(stderr, "matrix: %v\n", err)
		return exitNoVerdict
	}
	rep := progress.New(stderr)
	if *lavaJobs {
		return matrixJobs(o, *lavaURL, rep, stdout)
	}
	o.Done = func(c matrix.Cell, n, total int) {
		fmt.Fprintf(progress.Over(rep, stdout), "[%d/%d] %s\n", n, total, matrix.Line(c))
	}
	ctx, stop := interruptible()
	defer stop()
	end := rep.Step("matrix: %d cells, %d boots at a time", len(o.Entries)*len(o.Arches), o.Parallel)
	cells := matrix.Run(ctx, o)
	end(nil)
	var b strings.Builder
	b.WriteString("\n")
	worst := matrix.WriteTable(&b, cells)
	fmt.Fprintf(&b, "\nresults: %s\n%s\n", o.Dir, matrix.Totals(cells))
	os.WriteFile(filepath.Join(o.Dir, "matrix.txt"), []byte(b.String()), 0o644)
	if err := matrix.WriteKCIDB(o.Dir, cells); err != nil {
		fmt.Fprintf(stderr, "matrix: writing %s: %v\n", results.KCIDBFile, err)
	}
	io.WriteString(stdout, b.String())
	return worst
}

// lockEntries checks the comma-separated names against the lock; "" means
// every entry.
func lockEntries(lockFile, names string) ([]string, error) {
	lock, err := images.Read(lockFile)
	if err != nil {
		return nil, err
	}
	if names == "" {
		var all []string
		for _, e := range lock.Entries {
			all = append(all, e.Name)
		}
		return all, nil
	}
	list := strings.Split(names, ",")
	for _, n := range list {
		if _, err := lock.Entry(n); err != nil {
			return nil, err
		}
	}
	return list, nil
}
