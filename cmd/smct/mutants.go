// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/mutants"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// mutantsCmd boots the reference kernel once per fault switch and prints
// which requirements failed; it fails when a fault is missed or the kernel
// without faults fails anything.
var mutantsCmd = command{
	name:   "mutants",
	about:  "boot the reference kernel once per fault switch and variant: each fault must be caught, each variant pass",
	groups: []group{archGroup, kernelGroup, buildGroup, bootGroup, hereGroup, resultsGroup},
	flags: func(fs *flag.FlagSet, r *request) func(context.Context, *request, outputs) int {
		// The fault table says which requirement catches each fault, in
		// the contract's classes: a fault that hides the feature must not
		// turn every UNSUPPORTED spec into a FAIL.
		r.run.Image, r.run.Require = "reference", report.RequireNone
		r.run.Profile = contract.ProfileV4 // the table is the v4 contract's
		only := fs.String("faults", "", "comma-separated faults and variants to try (default: all)")
		return func(ctx context.Context, r *request, out outputs) int {
			faults, err := mutants.Select(*only)
			if err != nil {
				return refuseAt(out, "mutants: -faults", err)
			}
			o := r.run
			o.Progress = progress.Discard()
			if o.ResultsDir, err = results.NewRunDir(o.ResultsDir, "mutants", o.Arch.Name); err != nil {
				return refuseAt(out, "mutants", err)
			}
			rows := mutants.Run(ctx, o, faults, out.stderr)
			var b strings.Builder
			ok := mutants.WriteTable(&b, rows)
			if err := os.WriteFile(filepath.Join(o.ResultsDir, "mutants.txt"), []byte(b.String()), 0o644); err != nil {
				return refuseAt(out, "mutants", err)
			}
			io.WriteString(out.stdout, b.String())
			caught, noVerdict := 0, false
			for _, r := range rows {
				if r.Caught() {
					caught++
				}
				noVerdict = noVerdict || r.Err != nil
			}
			fmt.Fprintf(out.stdout, "results: %s\n%d passed, %d failed, 0 skipped\n", o.ResultsDir, caught, len(rows)-caught)
			switch {
			case noVerdict:
				// A row without a verdict says nothing of the suite.
				return exitNoVerdict
			case !ok:
				return exitFailed
			}
			return 0
		}
	},
}
