// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kbuild"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
	"github.com/ftrace-stackmap/conformance/internal/reply"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
	"github.com/ftrace-stackmap/conformance/internal/review"
)

// reviewMain walks a series patch by patch on every arch asked for, and
// with -against a second version of it, and prints the per-patch table.
// Its exit status is qemu-test's: 1 when a prefix fails, 2 without a verdict.
func reviewMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("review", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rep := progress.New(stderr)
	o := qemutest.Options{Progress: rep}
	series := fs.String("series", "", "the series: an mbox file, a message-id, or a git range base..head of -tree")
	against := fs.String("against", "", "another version of the series to compare with (same forms)")
	tree := fs.String("tree", "", "the kernel source tree (a git repository) the series applies on")
	base := fs.String("base", "", "the revision of -tree an mbox or message-id series applies on (default HEAD)")
	arches := fs.String("arches", "arm64,x86_64", "arches to walk, comma-separated")
	resultsDir := fs.String("results", "", "where the walk's directory goes (default: the project's results/)")
	o.Profile = contract.ProfileV4
	fs.Var(&o.Profile, "profile", "contract profile: v4 or v3")
	fs.StringVar(&o.Labels, "labels", "", "Ginkgo label filter")
	fs.BoolVar(&o.Claims, "claims", false, "also measure what the series claims, on the whole series (claims.txt); never changes the verdict")
	runFlags(fs, &o)
	if err := fs.Parse(args); err != nil {
		return exitNoVerdict
	}
	fail := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "review: "+format+"\n", args...)
		fmt.Fprintln(stdout, noneCounted)
		return exitNoVerdict
	}
	if fs.NArg() > 0 {
		return fail("unexpected argument %q", fs.Arg(0))
	}
	if *series == "" || *tree == "" {
		return fail("give -series (SERIES=) and -tree (TREE=)")
	}
	archNames, err := archList(*arches)
	if err != nil {
		return fail("%v", err)
	}
	// Checked now, not once per prefix after its build.
	if _, err := types.ParseLabelFilter(o.Labels); err != nil {
		return fail("-labels %q: %s", o.Labels, report.OneLine(err.Error()))
	}
	absIfThere(tree, series, against)
	for _, name := range archNames {
		if err := kbuild.CheckTree(*tree, arch.MustLookup(name)); err != nil {
			return fail("%v", err)
		}
	}
	if !workplace(&o, stderr) {
		return exitNoVerdict
	}
	walks := []string{*series}
	if *against != "" {
		walks = append(walks, *against)
	}
	var read []review.Series
	for _, spec := range walks {
		s, err := review.ReadSeries(spec, *tree, *base)
		if err != nil {
			return fail("%v", err)
		}
		read = append(read, s)
	}
	dir, err := newRunDir(*resultsDir, o.ModuleDir, "review", "")
	if err != nil {
		return fail("%v", err)
	}
	ctx, stop := interruptible()
	defer stop()
	w := review.Walker{Options: o, Arches: archNames, Log: func(format string, args ...any) {
		fmt.Fprintf(rep.Always(), "==> "+format+"\n", args...)
	}}
	var done []*review.Walk
	for i, s := range read {
		sub := dir
		if i > 0 {
			sub = filepath.Join(dir, "against")
		}
		walk, err := w.Walk(ctx, s, *tree, sub)
		if err != nil {
			if walk != nil {
				walk.Write()
			}
			return fail("walking %s: %v (reports so far in %s)", s.Name, err, sub)
		}
		if err := walk.Write(); err != nil {
			return fail("writing the reports: %v", err)
		}
		done = append(done, walk)
	}
	if s := read[0]; s.Thread != nil {
		if _, err := reply.Write(dir, s.Thread, s.MessageID, done[0].Reply(o.Profile), ""); err != nil {
			fmt.Fprintf(stderr, "note: no %s: %v\n", reply.File, err)
		}
	}
	io.WriteString(stdout, done[0].Text())
	code := done[0].ExitCode()
	if len(done) == 2 {
		cmp := review.Compare(done[1], done[0])
		if c := review.CompareClaims(done[1], done[0]); c != "" {
			cmp += "\n" + c
		}
		if err := os.WriteFile(filepath.Join(dir, "versions.txt"), []byte(cmp), 0o644); err != nil {
			return fail("writing the reports: %v", err)
		}
		io.WriteString(stdout, "\n"+cmp)
		// The other version is what the series is compared with: its own
		// failures are expected, and its walk has its table and status.
		fmt.Fprintf(stdout, "%s: walk %s (its table: %s)\n", read[1].Name, done[1].Verdict(), filepath.Join(dir, "against", "series.txt"))
	}
	if o.Claims {
		fmt.Fprintf(stdout, "claims of the whole series: %s\n", filepath.Join(dir, review.ClaimsFile))
	}
	fmt.Fprintf(stdout, "results: %s\n", dir)
	p, f, s := done[0].Counts()
	fmt.Fprintf(stdout, "%d passed, %d failed, %d skipped\n", p, f, s)
	return code
}
