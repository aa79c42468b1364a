// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"golang.org/x/term"

	"github.com/ftrace-stackmap/conformance/internal/results"
)

// What live mode reports besides Ginkgo's own output: labs run the binary
// without a terminal and read its KTAP and exit status.
var (
	ktapPath  string
	exitCodes string
	// summary is the run as the host would summarise it, once the suite
	// has ended; nil before.
	summary *results.Summary
	// classLines prints each spec's class and reason as it ends: set
	// where stdout is no terminal, so that logs say UNSUPPORTED and why.
	classLines bool
)

func registerReportFlags(fs *flag.FlagSet) {
	fs.StringVar(&ktapPath, "smct.ktap", "", "write the run as KTAP to this file (- for stdout) when it ends, named like a QEMU run's")
	fs.StringVar(&exitCodes, "smct.exit-codes", results.ExitCodesSmct, "exit status convention: smct (0 ok, 1 failed) or kselftest (0 pass, 1 fail, 4 all skipped, 5 no verdict)")
}

// ConfigureOutput fits Ginkgo's output to where it goes: no colour when
// NO_COLOR is set or stdout is no terminal, and then one line per spec
// (its dot on a line of its own) and a line with each spec's class.
func ConfigureOutput(c *types.ReporterConfig) {
	tty := term.IsTerminal(int(os.Stdout.Fd()))
	if os.Getenv("NO_COLOR") != "" || !tty {
		c.NoColor = true
	}
	if !tty {
		c.ForceNewlines = true
		classLines = true
	}
}

var _ = ReportAfterEach(func(sr SpecReport) {
	if !classLines {
		return
	}
	s := results.Summarize([]types.Report{{SpecReports: types.SpecReports{sr}}})
	s.SuiteProblems = nil // the suite's setup is reported once, at the end
	s.WriteSpecs(os.Stdout)
})

var _ = ReportAfterSuite("live reports", func(r Report) {
	s := results.Summarize([]types.Report{r})
	summary = &s
	if ktapPath == "" {
		return
	}
	if err := writeKTAP(r, s); err != nil {
		fmt.Fprintf(os.Stderr, "writing KTAP: %v\n", err)
	}
})

// writeKTAP writes the run as the host writes a QEMU run's ktap.txt.
func writeKTAP(r Report, s results.Summary) error {
	res := &results.Result{
		Request: results.Request{Arch: machine(), Profile: profile, Seed: r.SuiteConfig.RandomSeed, Labels: r.SuiteConfig.LabelFilter},
		Source:  "live mode: this machine's running kernel",
		Machine: "this machine (live mode)",
		Summary: s,
		Started: r.StartTime,
		Plans:   []string{"default"},
	}
	if s.ExitCode() == 2 && len(s.Specs) == 0 {
		res.NoVerdict = "no spec ran"
		if len(s.SuiteProblems) > 0 {
			res.NoVerdict = "suite: " + s.SuiteProblems[0]
		}
	}
	var w io.Writer = os.Stdout
	if ktapPath != "-" {
		f, err := os.Create(ktapPath)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	_, err := io.WriteString(w, results.Plain(results.KTAP(res)))
	return err
}

// machine is the kernel's name for this machine, as the QEMU runs name
// their arch (x86_64, aarch64 for arm64).
func machine() string {
	m := kernelRelease()
	if i := strings.LastIndex(m, " "); i >= 0 {
		m = m[i+1:]
	}
	if m == "aarch64" {
		return "arm64"
	}
	return m
}

// ExitCode is the test binary's exit status in the convention asked for
// with -smct.exit-codes; code is what Go's testing package chose.
func ExitCode(code int) int {
	if exitCodes != results.ExitCodesKselftest || summary == nil {
		return code
	}
	smct := summary.ExitCode()
	if smct == 0 && code != 0 {
		smct = 1 // the run failed outside the specs (the final restore)
	}
	return results.Kselftest(smct, *summary)
}
