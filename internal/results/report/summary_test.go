// SPDX-License-Identifier: GPL-2.0-only

package report

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/internal/contract"
)

// marked is spec with a class mark, as the harness leaves it.
func marked(c contract.Class, id string, state types.SpecState, msg string) types.SpecReport {
	r := spec(id, state, msg)
	r.ReportEntries = types.ReportEntries{contract.Mark(c)}
	return r
}

func spec(id string, state types.SpecState, msg string) types.SpecReport {
	return types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[" + id + "] does it",
		LeafNodeLabels: []string{id}, State: state, Failure: types.Failure{Message: msg}}
}

func TestSummaryCountsAndExitCode(t *testing.T) {
	for _, tc := range []struct {
		name    string
		specs   types.SpecReports
		closing string
		exit    int
	}{
		{"all pass, stackmap unsupported", types.SpecReports{
			spec("BASE-ONOFF-01", types.SpecStatePassed, ""),
			marked(contract.Unsupported, "SM-NODE-01", types.SpecStateSkipped, "no stack_map"),
			spec("SM-NODE-02", types.SpecStateSkipped, ""), // filtered out: not counted
		}, "1 passed, 0 failed, 1 skipped", 0},
		{"a failure", types.SpecReports{
			spec("SM-MODE-01", types.SpecStateFailed, "stack_map_bin mode 0444, want 0440\nExpected ..."),
			spec("SM-NODE-01", types.SpecStatePassed, ""),
		}, "1 passed, 1 failed, 0 skipped", 1},
		{"unresolved only", types.SpecReports{
			marked(contract.Unresolved, "SM-RESET-01", types.SpecStateFailed, "cannot write tracing_on"),
		}, "0 passed, 1 failed, 0 skipped", 2},
		{"nothing ran", nil, "0 passed, 0 failed, 0 skipped", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Summarize(contract.DefaultBoot, []types.Report{{SpecReports: tc.specs}})
			if got := s.ClosingLine(); got != tc.closing {
				t.Errorf("ClosingLine() = %q, want %q", got, tc.closing)
			}
			if got := s.ExitCode(); got != tc.exit {
				t.Errorf("ExitCode() = %d, want %d", got, tc.exit)
			}
		})
	}
}

func TestSuiteProblemsAreKept(t *testing.T) {
	s := Summarize(contract.DefaultBoot, []types.Report{{SpecReports: types.SpecReports{
		spec("BASE-ONOFF-01", types.SpecStatePassed, ""),
		{LeafNodeType: types.NodeTypeCleanupAfterSuite, State: types.SpecStateFailed, Failure: types.Failure{Message: "tracefs settings differ"}},
	}}})
	if len(s.SuiteProblems) != 1 || s.ExitCode() != 2 {
		t.Fatalf("SuiteProblems = %q, ExitCode() = %d, want one problem and 2", s.SuiteProblems, s.ExitCode())
	}
}

func TestCoverageTakesTheWorstClass(t *testing.T) {
	s := Summarize(contract.DefaultBoot, []types.Report{{SpecReports: types.SpecReports{
		spec("SM-RESET-03", types.SpecStatePassed, ""),
		spec("SM-RESET-03", types.SpecStateFailed, "accepted 00"),
		spec("SM-NODE-01", types.SpecStatePassed, ""),
	}}})
	cov := s.Coverage()
	if cov["SM-RESET-03"] != contract.Fail || cov["SM-NODE-01"] != contract.Pass {
		t.Fatalf("Coverage() = %v", cov)
	}
	var b strings.Builder
	s.WriteSpecs(&b)
	if !strings.Contains(b.String(), "FAIL        [SM-RESET-03] does it -- accepted 00") {
		t.Fatalf("WriteSpecs() =\n%s", b.String())
	}
}

func TestDetailAndLocation(t *testing.T) {
	failed := spec("SM-RESET-01", types.SpecStateFailed, "accepted\nExpected\n    <bool>: false\nto be true\n")
	failed.Failure.Location = types.CodeLocation{FileName: "github.com/ftrace-stackmap/conformance/suites/stackmap/reset.go", LineNumber: 42}
	unresolved := marked(contract.Unresolved, "SM-OPT-01", types.SpecStateFailed, "cannot write \"1\"")
	unsupported := marked(contract.Unsupported, "SM-BIN-01", types.SpecStateSkipped, "no stack_map")
	unsupported.Failure.Location = types.CodeLocation{FileName: "harness/suite.go", LineNumber: 9}
	s := Summarize(contract.DefaultBoot, []types.Report{{SpecReports: types.SpecReports{failed, unresolved, unsupported}}})
	for i, want := range []Spec{
		{Message: "accepted: expected false to be true", Detail: "accepted\nExpected\n    false\nto be true", Location: "suites/stackmap/reset.go:42"},
		{Message: `cannot write "1"`, Detail: `cannot write "1"`},
		{Message: "no stack_map", Detail: "no stack_map"}, // a skip's location is the harness's, not the spec's
	} {
		got := s.Specs[i]
		if got.Message != want.Message || got.Detail != want.Detail || got.Location != want.Location {
			t.Errorf("spec %d: Message %q, Detail %q, Location %q; want %q, %q, %q",
				i, got.Message, got.Detail, got.Location, want.Message, want.Detail, want.Location)
		}
	}
}

func TestHeadline(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"writing 0 to stack_map with tracing_on=1: got <nil>, want EBUSY\nExpected\n    <syscall.Errno>: 0\nto equal\n    <syscall.Errno>: 16",
			"writing 0 to stack_map with tracing_on=1: got <nil>, want EBUSY"},
		{"stack_map blocks after a reset\nExpected\n    <[]int | len:2, cap:2>: [1, 2]\nto be empty",
			"stack_map blocks after a reset: expected [1, 2]\nto be empty"},
		{"Expected\n    <int>: 3\nto equal\n    <int>: 0", "Expected\n    <int>: 3\nto equal\n    <int>: 0"},
		{"no stack_map", "no stack_map"},
	} {
		if got := headline(c.in); got != c.want {
			t.Errorf("headline(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestNoGoPointersInReasons(t *testing.T) {
	msg := "opening stack_map_bin\nExpected\n    <*fs.PathError | 0xc000123450>: open /sys/kernel/tracing/stack_map_bin: no such file"
	s := Summarize(contract.DefaultBoot, []types.Report{{SpecReports: types.SpecReports{spec("SM-BIN-02", types.SpecStateFailed, msg)}}})
	for _, text := range []string{s.Specs[0].Message, s.Specs[0].Detail} {
		if strings.Contains(text, "0xc000123450") || !strings.Contains(text, "no such file") {
			t.Errorf("reason %q: want the error without its Go address", text)
		}
	}
}

// TestPlainWords: what Go calls values does not reach a report; the
// kernel's own angle brackets do.
func TestPlainWords(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"writing 0 to stack_map with tracing_on=1: got <nil>, want EBUSY", "writing 0 to stack_map with tracing_on=1: got nothing, want EBUSY"},
		{"Expected\n    <nil>: nil\nnot to be nil", "Expected\n    nothing\nnot to be nil"},
		{"Expected\n    <syscall.Errno>: \n    errno 0\n    0x0\nto equal\n    <syscall.Errno>: \n    device or resource busy",
			"Expected\n    \n    errno 0\n    0x0\nto equal\n    \n    device or resource busy"},
		{"Expected\n    <*fs.PathError | 0xc000123450>: open x: no such file", "Expected\n    open x: no such file"},
		{"trace line 3: <stack_id 5>: not in stack_map", "trace line 3: <stack_id 5>: not in stack_map"},
	} {
		if got := plainWords(c.in); got != c.want {
			t.Errorf("plainWords(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestFeatureAbsent: only a spec that found the feature missing is marked,
// so that REQUIRE= fails it and nothing UNSUPPORTED for another reason.
func TestFeatureAbsent(t *testing.T) {
	absent := marked(contract.Unsupported, "SM-NODE-01", types.SpecStateSkipped, "kernel has no stackmap feature")
	absent.ReportEntries = append(absent.ReportEntries, types.ReportEntry{Name: contract.FeatureEntry, Value: types.WrapEntryValue("kernel has no stackmap feature")})
	profile := marked(contract.Unsupported, "SM-INIT-01", types.SpecStateSkipped, "SM-INIT-01 belongs to the v4 profile only")
	s := Summarize(contract.DefaultBoot, []types.Report{{SpecReports: types.SpecReports{absent, profile}}})
	if s.Specs[0].FeatureAbsent == "" || s.Specs[1].FeatureAbsent != "" {
		t.Fatalf("FeatureAbsent = %q, %q; want the reason, nothing", s.Specs[0].FeatureAbsent, s.Specs[1].FeatureAbsent)
	}
}

func TestTimedOut(t *testing.T) {
	s := Summarize(contract.DefaultBoot, []types.Report{{SpecReports: types.SpecReports{
		spec("SM-ROBUST-01", types.SpecStateTimedout, "A spec timeout occurred"),
		spec("SM-OPT-01", types.SpecStatePanicked, "runtime error"),
	}}})
	if !s.Specs[0].TimedOut || s.Specs[0].Class != contract.Unresolved || s.Specs[1].TimedOut {
		t.Errorf("TimedOut %v (%s), %v; want true (UNRESOLVED), false", s.Specs[0].TimedOut, s.Specs[0].Class, s.Specs[1].TimedOut)
	}
}

// A run's summary is its boots' in plan order; one failed suite fails it.
func TestJoinKeepsBootsInOrder(t *testing.T) {
	def := Summarize(contract.DefaultBoot, []types.Report{{SuiteSucceeded: true, SpecReports: types.SpecReports{spec("SM-RESET-01", types.SpecStatePassed, "")}}})
	bits := Summarize("bits-12", []types.Report{{SuiteSucceeded: false, SpecReports: types.SpecReports{spec("SM-BOOT-02", types.SpecStateFailed, "clamped to 11")}}})
	s := Join(def, bits)
	var names []string
	for _, sp := range s.Specs {
		names = append(names, sp.Name)
	}
	if fmt.Sprint(names) != "[default.SM-RESET-01 bits-12.SM-BOOT-02]" || s.Succeeded {
		t.Errorf("Join = %v, succeeded %v; want the default boot's spec, then bits-12's, and not succeeded", names, s.Succeeded)
	}
	if !Join().Succeeded {
		t.Error("a run of no boot failed")
	}
}

// A spec of several requirements that failed by one's clause blames that
// one; a failure that names no clause of them blames them all.
func TestCoverageOfASpecOfSeveralRequirements(t *testing.T) {
	several := func(msg string) types.SpecReport {
		sp := spec("SM-ROBUST-01", types.SpecStateFailed, msg)
		sp.LeafNodeLabels = []string{"SM-ROBUST-01", "SM-RESET-01", "SM-INST-01"}
		return sp
	}
	for msg, want := range map[string]map[string]contract.Class{
		"[SM-ROBUST-01.1] stack_map_bin header: 0 bytes (actor reader stack_map_bin)": {
			"SM-ROBUST-01": contract.Fail, "SM-RESET-01": contract.Unresolved, "SM-INST-01": contract.Unresolved},
		"[SM-INST-01.1] a fresh instance has options/stackmap (actor instances)": {
			"SM-ROBUST-01": contract.Unresolved, "SM-RESET-01": contract.Unresolved, "SM-INST-01": contract.Fail},
		"[SM-STAT-03.1] entries 3, blocks 2": {
			"SM-ROBUST-01": contract.Fail, "SM-RESET-01": contract.Fail, "SM-INST-01": contract.Fail},
		"the workload exited 1": {
			"SM-ROBUST-01": contract.Fail, "SM-RESET-01": contract.Fail, "SM-INST-01": contract.Fail},
	} {
		s := Summarize(contract.DefaultBoot, []types.Report{{SpecReports: types.SpecReports{several(msg)}}})
		if got := s.Coverage(); !maps.Equal(got, want) {
			t.Errorf("%s: Coverage() = %v, want %v", msg, got, want)
		}
	}
}
