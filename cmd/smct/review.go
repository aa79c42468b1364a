// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/ftrace-stackmap/conformance/internal/flagvalue"
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
		var series, against flagvalue.Series
		var tree flagvalue.Path
		fs.Var(&series, "series", "the series: an mbox file, a message-id, or a git range base..head of -tree")
		fs.Var(&against, "against", "another version of the series to compare with (same forms)")
		fs.Var(&tree, "tree", "the kernel source tree (a git repository) the series applies on")
		base := fs.String("base", "", "the revision of -tree an mbox or message-id series applies on (default HEAD)")
		return func(ctx context.Context, r *request, out outputs) outcome {
			s, other, err := review.Read(string(series), string(against), string(tree), *base, r.arches)
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

// printReview returns a review's text; the status and the counts are
// the series' walk's.
func printReview(rv *review.Review, r *request, out outputs) outcome {
	if rv.ReplyNote != "" {
		fmt.Fprintf(out.stderr, "note: %s\n", rv.ReplyNote)
	}
	o := outcome{body: rv.Text(r.run.Claims), status: rv.Series.ExitCode(), counted: true}
	o.passed, o.failed, o.skipped = rv.Series.Counts()
	if o.status == exitNoVerdict {
		o.reason = rv.Series.NoVerdict()
	}
	return o
}
