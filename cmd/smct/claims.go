// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/ftrace-stackmap/conformance/internal/claims"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// claimsCmd measures what the series claims on one kernel: the claims
// plan's boots alone. It prints claims.txt and exits 0 when any boot
// brought back a measurement, 2 when none did or the run could not be
// made; what the measurements say of the claims never sets the status.
var claimsCmd = command{
	name:  "claims",
	about: "measure what the series claims on one kernel (retention, pool memory, hot path, deduplication)",
	// -sample judges a device's sample: no arch, no boot.
	groups: []group{anyArchGroup, kernelGroup, buildGroup, profileGroup, bootGroup, hereGroup, resultsGroup},
	flags: func(fs *flag.FlagSet, r *request) func(context.Context, *request, outputs) int {
		r.run.Kind = "claims"
		var sample string
		fs.Var((*userPath)(&sample), "sample", "judge a sample the suite binary took on a device (suites.test -smct.claims=all) instead of booting")
		return func(ctx context.Context, r *request, out outputs) int {
			if sample != "" {
				return judgeSample(sample, out.stdout)
			}
			res, err := new(qemutest.Runner).Claims(ctx, r.run)
			if res != nil && res.Dir != "" {
				fmt.Fprintf(out.stdout, "results: %s\n", res.Dir)
			}
			if err != nil {
				printNoVerdict(out.stdout, report.Plain(err.Error()))
				return exitNoVerdict
			}
			if err := results.WriteClaimsRun(res); err != nil {
				printNoVerdict(out.stdout, "writing the claims' reports: "+err.Error())
				return exitNoVerdict
			}
			io.WriteString(out.stdout, res.Claims.Text())
			if !res.Claims.Measured() {
				printNoVerdict(out.stdout, "no claims boot brought back a measurement")
				return exitNoVerdict
			}
			fmt.Fprintln(out.stdout, res.Claims.Line())
			return 0
		}
	},
}

// judgeSample judges a sample taken in live mode on a device.
func judgeSample(path string, stdout io.Writer) int {
	rep, err := claims.JudgeSampleFile(path)
	if err != nil {
		printNoVerdict(stdout, err.Error())
		return exitNoVerdict
	}
	io.WriteString(stdout, rep.Text())
	fmt.Fprintln(stdout, rep.Line())
	return 0
}
