// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"golang.org/x/term"

	"github.com/ftrace-stackmap/conformance/initramfs/guest"
	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/consoleframe"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// What live mode reports besides Ginkgo's own output: labs run the binary
// without a terminal and read its KTAP and exit status.
var (
	ktapPath  string
	junitPath string
	// selectedReportPath is -smct.json-report: the guest's report.
	selectedReportPath string
	exitCodes          report.ExitCodes
	// summary is the run as the host would summarise it, once the suite
	// has ended; nil before.
	summary *report.Summary
	// classLines prints each spec's class and reason as it ends: set
	// where stdout is no terminal, so that logs say UNSUPPORTED and why.
	classLines bool
	// bootName names the specs in every report, as the boot that runs
	// them: "default" in live mode.
	bootName = contract.DefaultBoot
	// caseLines prints a consoleframe case line per spec as it ends, for
	// a runner that reads results off the console (a LAVA monitor).
	caseLines bool
	// requireFeature fails the specs that find the feature absent when it
	// is RequireStackmap, as REQUIRE=stackmap does on the host.
	requireFeature report.Require
	// verdictPath is -smct.verdict-file: where the run's exit status in
	// smct's convention goes when it ends, for the guest's init.
	verdictPath string
)

func registerReportFlags(fs *flag.FlagSet) {
	fs.StringVar(&ktapPath, "smct.ktap", "", "write the run as KTAP to this file (- for stdout) when it ends, named like a QEMU run's")
	fs.StringVar(&junitPath, "smct.junit", "", "write the run as JUnit XML to this file when it ends, as a QEMU run's junit.xml")
	fs.Var(&exitCodes, "smct.exit-codes", report.ExitCodesUsage)
	fs.StringVar(&bootName, "smct.boot", contract.DefaultBoot, "name the specs <boot>.<ID> after this boot in the reports")
	fs.BoolVar(&caseLines, "smct.case-lines", false, "print '"+consoleframe.CaseTag+" <name> <class>' for each spec as it ends, for a runner that reads the console")
	fs.StringVar(&selectedReportPath, "smct.json-report", "", "write Ginkgo's JSON report to this file when the run ends, without the specs the label filter left out: under emulation a boot that runs two specs of fifty writes and sends a tenth of -ginkgo.json-report's")
	fs.StringVar(&verdictPath, "smct.verdict-file", "", "write the specs' verdict as an exit status (0 ok, 1 failed, 2 no verdict) to this file when the run ends")
	fs.Var(&requireFeature, "smct.require", "stackmap: a stackmap spec that finds the feature absent fails, as REQUIRE=stackmap does; none: it is UNSUPPORTED")
}

// requireWhy says who required the feature, for the reports.
const requireWhy = "-smct.require=" + contract.LabelStackmap

// summarize is the host's summary of reports this binary made, the
// feature required when asked.
func summarize(reports ...types.Report) report.Summary {
	s := report.Summarize(bootName, reports)
	if requireFeature == report.RequireStackmap {
		s.Require(contract.LabelStackmap, requireWhy)
	}
	return s
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

// In the guest, each spec is marked in the kernel's log, so that a report
// there names the spec it appeared in. Leaks are looked for once, by the
// init after the suite (a scan takes seconds on a debug kernel under
// emulation): where a leak is placed does not depend on when it is found,
// as kmemleak stamps each allocation with its jiffies and the marks carry
// them.
var _ = ReportBeforeEach(func(sr SpecReport) {
	markedSpec = ""
	if sr.LeafNodeType == types.NodeTypeIt && !sr.State.Is(types.SpecStateSkipped|types.SpecStatePending) {
		markedSpec = report.SpecName(bootName, sr)
		guest.SpecStarts(markedSpec)
	}
})

// markedSpec is the spec whose start is marked and whose end is not yet.
var markedSpec string

var _ = ReportAfterEach(func(sr SpecReport) {
	if markedSpec != "" {
		guest.SpecEnds(markedSpec)
		markedSpec = ""
	}
	if !classLines && !caseLines {
		return
	}
	s := summarize(types.Report{SpecReports: types.SpecReports{sr}})
	s.SuiteProblems = nil // the suite's setup is reported once, at the end
	if classLines {
		s.WriteSpecs(os.Stdout)
	}
	if caseLines {
		writeCases(os.Stdout, s)
	}
})

// writeCases writes a case line per spec: its name and its class.
func writeCases(w io.Writer, s report.Summary) {
	for _, sp := range s.Specs {
		consoleframe.WriteCase(w, sp.Name, string(sp.Class))
	}
}

var _ = ReportAfterSuite("the selected specs' report", func(r Report) {
	guest.MarkIfAsked(guest.StageReport)
	if selectedReportPath == "" {
		return
	}
	data, err := json.Marshal([]Report{selectedOnly(withInvariants(r))})
	if err == nil {
		err = os.WriteFile(selectedReportPath, data, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "writing the JSON report: %v\n", err)
	}
})

// selectedOnly is r without the specs a label filter left out, and
// without the node events of the specs that passed (their timeline of
// setup and cleanup nodes, most of a report, which nothing reads); the
// suite's own nodes stay, with every spec the run selected.
func selectedOnly(r Report) Report {
	var kept types.SpecReports
	for _, s := range r.SpecReports {
		if s.LeafNodeType == types.NodeTypeIt && contract.ClassOf(s) == contract.NotRun {
			continue
		}
		if s.State == types.SpecStatePassed {
			s.SpecEvents = slices.DeleteFunc(slices.Clone(s.SpecEvents), func(e types.SpecEvent) bool {
				return e.SpecEventType.Is(types.SpecEventNodeStart | types.SpecEventNodeEnd)
			})
		}
		kept = append(kept, s)
	}
	r.SpecReports = kept
	return r
}

var _ = ReportAfterSuite("live reports", func(r Report) {
	r = withInvariants(r)
	s := summarize(r)
	summary = &s
	if n, spent, held := Checkpoints(); n > 0 {
		fmt.Println(contract.CheckpointsLine(n, spent, held))
	}
	if caseLines {
		// The results of broken invariants end no spec: their case lines
		// come here, before the init's own.
		writeCases(os.Stdout, summarize(types.Report{SpecReports: invariantResults()}))
	}
	if verdictPath != "" {
		if err := os.WriteFile(verdictPath, fmt.Appendf(nil, "%d\n", s.ExitCode()), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "writing the verdict: %v\n", err)
		}
	}
	if ktapPath == "" && junitPath == "" {
		return
	}
	run := liveRun(r, s, machine())
	if ktapPath != "" {
		if err := writeOut(ktapPath, []byte(run.KTAP(nil))); err != nil {
			fmt.Fprintf(os.Stderr, "writing KTAP: %v\n", err)
		}
	}
	if junitPath != "" {
		b, err := run.JUnit()
		if err == nil {
			err = writeOut(junitPath, b)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "writing JUnit: %v\n", err)
		}
	}
})

// liveRun is the run as the host's reports describe a QEMU run, on a
// machine of arch.
func liveRun(r Report, s report.Summary, arch string) report.Run {
	run := report.Run{Name: "live", Arch: arch, Image: "live mode: this machine's running kernel", Machine: "this machine (live mode)",
		Profile: profile, Seed: r.SuiteConfig.RandomSeed, Verdict: s.Verdict(requireWhy), Started: r.StartTime, Plans: []string{bootName}, Summary: s}
	if requireFeature == report.RequireStackmap {
		run.Require = contract.LabelStackmap + " (" + requireWhy + ")"
	}
	if len(s.Specs) == 0 {
		run.NoVerdict = "no spec ran"
		if len(s.SuiteProblems) > 0 {
			run.NoVerdict = "suite: " + s.SuiteProblems[0]
		}
	}
	return run
}

// writeOut writes a report to path, or to stdout for "-".
func writeOut(path string, b []byte) error {
	b = []byte(report.Plain(string(b)))
	if path == "-" {
		_, err := os.Stdout.Write(b)
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// machine is this machine's arch as the QEMU runs name it (arm64,
// x86_64): the suite binary is built for the guest's arch, and the arch
// table names it, so no second mapping is kept here.
func machine() string {
	if a, err := arch.ByGOARCH(runtime.GOARCH); err == nil {
		return a.Name
	}
	return runtime.GOARCH
}

// ExitCode is the test binary's exit status in the convention asked for
// with -smct.exit-codes; code is what Go's testing package chose.
func ExitCode(code int) int {
	if code == 0 && len(invariantResults()) > 0 {
		code = 1 // a clause broken at a checkpoint fails the run
	}
	if exitCodes != report.ExitCodesKselftest || summary == nil {
		return code
	}
	smct := summary.ExitCode()
	if smct == 0 && code != 0 {
		smct = 1 // the run failed outside the specs (the final restore)
	}
	return report.Kselftest(smct, *summary)
}
