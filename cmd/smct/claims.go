// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/claims"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// claimsMain measures what the series claims on one kernel: the claims
// plan's boots alone. It prints claims.txt and exits 0 when any boot
// brought back a measurement, 2 when none did or the run could not be
// made; what the measurements say of the claims never sets the status.
func claimsMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("claims", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := qemutest.Options{Progress: progress.New(stderr), Kind: "claims"}
	kernelFlags(fs, &o)
	runFlags(fs, &o)
	fs.StringVar(&o.ResultsDir, "results", "", "where run directories go (default: the project's results/)")
	sample := fs.String("sample", "", "judge a sample the suite binary took on a device (suites.test -smct.claims=all) instead of booting")
	fs.Func("append", "extra kernel command line words (a fault switch of the reference kernel, say)", func(v string) error {
		o.BootArgs = strings.Fields(v)
		return nil
	})
	if err := fs.Parse(args); err == flag.ErrHelp {
		return 0
	} else if err != nil {
		printNoVerdict(stdout, err.Error())
		return exitNoVerdict
	}
	if fs.NArg() > 0 {
		printNoVerdict(stdout, fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
		return exitNoVerdict
	}
	if *sample != "" {
		return judgeSample(*sample, stdout)
	}
	if !workplaceWithResults(&o, stderr) {
		return exitNoVerdict
	}
	if err := absKernelPaths(&o); err != nil {
		printNoVerdict(stdout, err.Error())
		return exitNoVerdict
	}
	ctx, stop := interruptible()
	defer stop()
	res, err := new(qemutest.Runner).Claims(ctx, o)
	if res != nil && res.Dir != "" {
		fmt.Fprintf(stdout, "results: %s\n", res.Dir)
	}
	if err != nil {
		printNoVerdict(stdout, report.Plain(err.Error()))
		return exitNoVerdict
	}
	if err := results.WriteClaimsRun(res); err != nil {
		printNoVerdict(stdout, "writing the claims' reports: "+err.Error())
		return exitNoVerdict
	}
	io.WriteString(stdout, res.Claims.Text())
	if !res.Claims.Measured() {
		printNoVerdict(stdout, "no claims boot brought back a measurement")
		return exitNoVerdict
	}
	fmt.Fprintln(stdout, res.Claims.Line())
	return 0
}

// judgeSample judges a sample taken in live mode on a device, where the
// kernel's own size was the only one booted.
func judgeSample(path string, stdout io.Writer) int {
	data, err := os.ReadFile(path)
	var s claims.Sample
	if err == nil {
		err = json.Unmarshal(data, &s)
	}
	if err != nil {
		printNoVerdict(stdout, fmt.Sprintf("-sample %s: %v", path, err))
		return exitNoVerdict
	}
	rep := claims.Judge("a device, live mode ("+path+")", false, []claims.Boot{{Name: "live", Sample: &s}})
	io.WriteString(stdout, rep.Text())
	fmt.Fprintln(stdout, rep.Line())
	return 0
}
