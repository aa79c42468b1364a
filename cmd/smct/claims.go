// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/ftrace-stackmap/conformance/internal/claims"
	"github.com/ftrace-stackmap/conformance/internal/flagvalue"
	"github.com/ftrace-stackmap/conformance/internal/page"
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
	page:  "docs/claims.md",
	about: "measure what the series claims on one kernel (retention, pool memory, hot path, deduplication)",
	// -sample judges a device's sample: no arch, no boot.
	groups: []group{anyArchGroup, kernelGroup, buildGroup, profileGroup, bootGroup, hereGroup, resultsGroup, exitGroup},
	prunes: true,
	flags: func(fs *flag.FlagSet, r *request) runFunc {
		r.run.Kind = "claims"
		var sample string
		fs.Var((*flagvalue.Path)(&sample), "sample", "judge a sample the suite binary took on a device (suites.test -smct.claims=all) instead of booting")
		return func(ctx context.Context, r *request, out outputs) outcome {
			if sample != "" {
				return judgeSample(sample)
			}
			res, err := new(qemutest.Runner).Claims(ctx, r.run)
			var body string
			if res != nil && res.Dir != "" {
				body = fmt.Sprintf("results: %s\n", res.Dir)
			}
			if err != nil {
				return withoutVerdict(body, report.Plain(err.Error()))
			}
			if err := results.WriteClaimsRun(res); err != nil {
				return withoutVerdict(body, "writing the claims' reports: "+err.Error())
			}
			// Where the reports are, just above the closing line.
			body = res.Claims.Text() + body + fmt.Sprintf("page:    %s\n", filepath.Join(res.Dir, page.File))
			if !res.Claims.Measured() {
				return withoutVerdict(body, "no claims boot brought back a measurement")
			}
			// The claims' line is the last: measurements are not counted.
			return outcome{body: body + res.Claims.Line() + "\n"}
		}
	},
}

// judgeSample judges a sample taken in live mode on a device.
func judgeSample(path string) outcome {
	rep, err := claims.JudgeSampleFile(path)
	if err != nil {
		return withoutVerdict("", err.Error())
	}
	return outcome{body: rep.Text() + rep.Line() + "\n"}
}
