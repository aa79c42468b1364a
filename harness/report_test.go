// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/results/golden"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// liveReport is a live run's Ginkgo report: a pass, a failure naming the
// clause it broke and a skip, or, without specs, a suite whose setup
// failed.
func liveReport(specs bool) types.Report {
	r := types.Report{StartTime: time.Date(2026, 11, 22, 16, 45, 52, 0, time.UTC),
		SuiteConfig: types.SuiteConfig{RandomSeed: 1700000003, LabelFilter: "baseline || stackmap"}}
	it := func(id string, state types.SpecState, msg string, entries ...types.ReportEntry) types.SpecReport {
		return types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[" + id + "] does it", LeafNodeLabels: []string{id},
			State: state, RunTime: 250 * time.Millisecond, Failure: types.Failure{Message: msg,
				Location: types.CodeLocation{FileName: "github.com/ftrace-stackmap/conformance/suites/stackmap/reset.go", LineNumber: 42}},
			ReportEntries: entries}
	}
	if !specs {
		r.SpecReports = types.SpecReports{{LeafNodeType: types.NodeTypeBeforeSuite, State: types.SpecStateFailed,
			Failure: types.Failure{Message: "tracefs is not mounted at /sys/kernel/tracing"}}}
		return r
	}
	kernel := types.ReportEntry{Name: contract.KernelEntry, Value: types.WrapEntryValue("6.12.117-stackmap #1 SMP PREEMPT_DYNAMIC x86_64")}
	r.SpecReports = types.SpecReports{
		it("BASE-ONOFF-01", types.SpecStatePassed, "", kernel),
		it("SM-RESET-01", types.SpecStateFailed, "[SM-RESET-01.1] writing 0 to stack_map with tracing_on=1: got <nil>, want EBUSY\nExpected\n    <syscall.Errno>: 0\nto equal\n    <syscall.Errno>: 16"),
		it("SM-BIN-01", types.SpecStateSkipped, "kernel has no stackmap feature", contract.Mark(contract.Unsupported)),
	}
	return r
}

// TestLiveReports holds live mode's KTAP and JUnit to testdata: named and
// shaped as a QEMU run's.
func TestLiveReports(t *testing.T) {
	for name, r := range map[string]types.Report{"live": liveReport(true), "live-nospec": liveReport(false)} {
		run := liveRun(r, report.Summarize(contract.DefaultBoot, []types.Report{r}), "x86_64")
		golden.Check(t, name+"/ktap.txt", report.Plain(run.KTAP(nil)))
		b, err := run.JUnit()
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, name+"/junit.xml", report.Plain(string(b)))
	}
}

// A boot of a runner that reads the console (a LAVA job) names its specs
// after the boot and, when the run requires the feature, fails a stackmap
// spec that found it absent, in its case lines as in its reports.
func TestCaseLinesNameTheBootAndRequire(t *testing.T) {
	defer func(b string, r report.Require) { bootName, requireFeature = b, r }(bootName, requireFeature)
	bootName, requireFeature = "bits-12", report.RequireStackmap
	absent := types.ReportEntry{Name: contract.FeatureEntry, Value: types.WrapEntryValue(contract.NoStackmapFeature)}
	r := types.Report{SpecReports: types.SpecReports{
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[SM-BOOT-02] clamps", LeafNodeLabels: []string{"SM-BOOT-02", contract.LabelStackmap},
			State: types.SpecStateSkipped, Failure: types.Failure{Message: contract.NoStackmapFeature},
			ReportEntries: types.ReportEntries{contract.Mark(contract.Unsupported), absent}},
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[BASE-ONOFF-01] turns", LeafNodeLabels: []string{"BASE-ONOFF-01", contract.LabelBaseline},
			State: types.SpecStatePassed},
	}}
	var b strings.Builder
	writeCases(&b, summarize(r))
	want := "SMCT-CASE bits-12.SM-BOOT-02 FAIL\nSMCT-CASE bits-12.BASE-ONOFF-01 PASS\n"
	if b.String() != want {
		t.Errorf("case lines:\n%s\nwant\n%s", b.String(), want)
	}
}

// TestSelectedOnlyKeepsWhatTheHostReads drops the specs a label filter
// left out and a passing spec's node events, and keeps everything of a
// spec that did not pass.
func TestSelectedOnlyKeepsWhatTheHostReads(t *testing.T) {
	events := types.SpecEvents{{SpecEventType: types.SpecEventNodeStart}, {SpecEventType: types.SpecEventByStart, Message: "a step"}, {SpecEventType: types.SpecEventNodeEnd}}
	r := types.Report{SpecReports: types.SpecReports{
		{LeafNodeType: types.NodeTypeBeforeSuite, State: types.SpecStatePassed},
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "left out", State: types.SpecStateSkipped},
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "passed", State: types.SpecStatePassed, SpecEvents: events},
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "failed", State: types.SpecStateFailed, SpecEvents: events},
	}}
	got := selectedOnly(r).SpecReports
	if len(got) != 3 || got[1].LeafNodeText != "passed" || got[2].LeafNodeText != "failed" {
		t.Fatalf("kept %d specs: %v", len(got), got)
	}
	if ev := got[1].SpecEvents; len(ev) != 1 || ev[0].Message != "a step" {
		t.Errorf("a passing spec's events: %v, want its By step alone", ev)
	}
	if len(got[2].SpecEvents) != 3 || len(r.SpecReports[2].SpecEvents) != 3 {
		t.Errorf("a failing spec's events were cut, or the suite's report changed")
	}
}
