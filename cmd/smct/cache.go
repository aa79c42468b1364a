// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"context"
	"flag"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/cachelimit"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/results"
)

// cacheCmd shows what the cache and results/ hold against their caps, or
// removes what the cache holds.
var cacheCmd = command{
	name:   "cache",
	page:   "docs/caches.md",
	about:  "show each cache area's size, cap and entries, and results/'s runs; -clean removes the cache's entries",
	groups: []group{resultsGroup, exitGroup},
	flags: func(fs *flag.FlagSet, r *request) runFunc {
		clean := fs.Bool("clean", false, "remove every cache entry nobody is using (the LAVA lab's state stays)")
		return func(ctx context.Context, r *request, out outputs) outcome {
			areas, err := cachelimit.Areas(r.run.CacheDir)
			if err != nil {
				return refuseAt(out, "cache", err)
			}
			if *clean {
				return cleanCache(areas, out)
			}
			// The cache's areas, then results/'s runs.
			var b strings.Builder
			err = cachelimit.Show(&b, r.run.CacheDir, areas)
			if err == nil {
				err = results.ShowRuns(&b, r.run.ResultsDir)
			}
			if err != nil {
				return refuseAt(out, "cache", err)
			}
			return outcome{body: b.String()}
		}
	},
}

// cleanCache removes what nobody holds (cachelimit.CleanAll).
func cleanCache(areas []cachelimit.Area, out outputs) outcome {
	text, failed := cachelimit.CleanAll(areas, out.stderr)
	if len(failed) > 0 {
		return withoutVerdict(text, "cleaning the cache: "+strings.Join(failed, ", ")+" not cleaned")
	}
	return outcome{body: text}
}

// limits refuses a CACHE_LIMIT or KEEP_RUNS the door could not apply,
// before the command does anything.
func limits(r *request) error {
	if _, err := cachelimit.Areas(r.run.CacheDir); err != nil {
		return err
	}
	_, err := results.KeepRuns()
	return err
}

// bound brings each cache area the command used within its cap, and
// results/ to its newest runs, once a command that fills them has ended.
func bound(r *request, notes *progress.Reporter) {
	areas, _ := cachelimit.Areas(r.run.CacheDir)
	cachelimit.Bound(areas, notes.Notef)
	results.BoundRuns(r.run.ResultsDir, notes.Notef)
}
