// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
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
			keep, err := results.KeepRuns()
			if err != nil {
				return refuseAt(out, "cache", err)
			}
			var b strings.Builder
			if err := showCache(&b, r.run.CacheDir, areas, r.run.ResultsDir, keep); err != nil {
				return refuseAt(out, "cache", err)
			}
			return outcome{body: b.String()}
		}
	},
}

// showCache writes the cache's areas (cachelimit.Show), then results/'s
// runs.
func showCache(w io.Writer, cacheDir string, areas []cachelimit.Area, resultsDir string, keep int) error {
	if err := cachelimit.Show(w, cacheDir, areas); err != nil {
		return err
	}
	runs, err := results.Runs(resultsDir)
	if err != nil {
		return err
	}
	size, err := cachelimit.DiskSize(resultsDir)
	if err != nil {
		return err
	}
	kept := fmt.Sprintf("the newest %d kept (KEEP_RUNS=)", keep)
	if keep == 0 {
		kept = "all kept (KEEP_RUNS=0)"
	}
	fmt.Fprintf(w, "results %s: %d runs, %s, %s\n", resultsDir, len(runs), cachelimit.FormatSize(size), kept)
	return nil
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
// results/ to its newest runs, once a command that fills them has ended;
// it says what it removed.
func bound(r *request, notes *progress.Reporter) {
	areas, _ := cachelimit.Areas(r.run.CacheDir)
	for _, a := range areas {
		if !a.UsedHere() {
			continue
		}
		p, err := a.Prune()
		if err != nil {
			notes.Notef("note: pruning the cache's %s: %v\n", a.Name, err)
		}
		if len(p.Removed) > 0 {
			notes.Notef("note: the cache's %s held %s, over its cap of %s: removed %d least recently used (%s)\n",
				a.Name, cachelimit.FormatSize(p.Before), a.Policy(), len(p.Removed), p.Freed())
		}
		if p.After > a.Cap && len(p.Held) > 0 {
			notes.Notef("note: the cache's %s holds %s, over its cap of %s: %s in use\n", a.Name, cachelimit.FormatSize(p.After), a.Policy(), strings.Join(p.Held, " "))
		}
	}
	keep, _ := results.KeepRuns()
	removed, err := results.PruneRuns(r.run.ResultsDir, keep)
	if err != nil {
		notes.Notef("note: pruning %s: %v\n", r.run.ResultsDir, err)
	}
	if len(removed) > 0 {
		notes.Notef("note: removed %d runs from %s, beyond the newest %d (KEEP_RUNS=)\n", len(removed), r.run.ResultsDir, keep)
	}
}
