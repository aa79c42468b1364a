// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/kernels/kbuild"
	"github.com/ftrace-stackmap/conformance/internal/page"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/review"
)

// reviewCmd walks a series patch by patch on every arch asked for, and
// with -against a second version of it, and prints the per-patch table.
// Its exit status is qemu-test's: 1 when a prefix fails, 2 without a verdict.
var reviewCmd = command{
	name:  "review",
	page:  "docs/review.md",
	about: "walk a series patch by patch on every arch, and compare it with another version",
	// -claims measures the whole series only.
	groups: []group{archesGroup, buildGroup, profileGroup, specGroup, bootGroup, hereGroup, resultsGroup, claimsGroup, exitGroup},
	prunes: true,
	flags: func(fs *flag.FlagSet, r *request) runFunc {
		var series, against seriesArg
		var tree userPath
		fs.Var(&series, "series", "the series: an mbox file, a message-id, or a git range base..head of -tree")
		fs.Var(&against, "against", "another version of the series to compare with (same forms)")
		fs.Var(&tree, "tree", "the kernel source tree (a git repository) the series applies on")
		base := fs.String("base", "", "the revision of -tree an mbox or message-id series applies on (default HEAD)")
		return func(ctx context.Context, r *request, out outputs) outcome {
			s, other, err := readSeries(r, string(series), string(against), string(tree), *base)
			if err != nil {
				return refuseAt(out, "review", err)
			}
			dir, err := results.NewRunDir(r.run.ResultsDir, "review", "")
			if err != nil {
				return refuseAt(out, "review", err)
			}
			w := review.Walker{Options: r.run, Arches: r.arches, Log: func(format string, args ...any) {
				fmt.Fprintf(out.progress.Always(), "==> "+format+"\n", args...)
			}}
			rv, err := w.Review(ctx, s, other, string(tree), dir)
			if err != nil {
				return refuseAt(out, "review", err)
			}
			return printReview(rv, r, out)
		}
	},
}

// readSeries checks a review's input before anything is built: the label
// filter, the tree for every arch, and each series read.
func readSeries(r *request, series, against, tree, base string) (review.Series, *review.Series, error) {
	if series == "" || tree == "" {
		return review.Series{}, nil, errors.New("give -series (SERIES=) and -tree (TREE=)")
	}
	for _, a := range r.arches {
		if err := kbuild.CheckTree(tree, a); err != nil {
			return review.Series{}, nil, err
		}
	}
	s, err := review.ReadSeries(series, tree, base)
	if err != nil || against == "" {
		return s, nil, err
	}
	other, err := review.ReadSeries(against, tree, base)
	return s, &other, err
}

// printReview returns a review's table and its comparison; the status
// and the counts are the series' walk's.
func printReview(rv *review.Review, r *request, out outputs) outcome {
	if rv.ReplyNote != "" {
		fmt.Fprintf(out.stderr, "note: %s\n", rv.ReplyNote)
	}
	var b strings.Builder
	b.WriteString(rv.Series.Text())
	if rv.Against != nil {
		b.WriteString("\n" + rv.Versions)
		// The other version is what the series is compared with: its own
		// failures are expected, and its walk has its table and status.
		fmt.Fprintf(&b, "%s: walk %s (its table: %s)\n", rv.Against.Series.Name, rv.Against.Verdict(), filepath.Join(rv.Dir, "against", "series.txt"))
	}
	if r.run.Claims {
		fmt.Fprintf(&b, "claims of the whole series: %s\n", filepath.Join(rv.Dir, review.ClaimsFile))
	}
	fmt.Fprintf(&b, "results: %s\npage:    %s\n", rv.Dir, filepath.Join(rv.Dir, page.File))
	o := outcome{body: b.String(), status: rv.Series.ExitCode(), counted: true}
	o.passed, o.failed, o.skipped = rv.Series.Counts()
	if o.status == exitNoVerdict {
		o.reason = walkNoVerdict(rv.Series)
	}
	return o
}

// walkNoVerdict names the prefixes of a walk that gave no verdict.
func walkNoVerdict(w *review.Walk) string {
	var none []string
	for _, a := range w.Arches {
		for k, st := range w.Steps[a] {
			if st.Infra != "" {
				none = append(none, fmt.Sprintf("%d/%d on %s (%s)", k, len(w.Series.Patches), a, st.Infra))
			}
		}
	}
	return "no verdict for " + strings.Join(none, ", ")
}
