// SPDX-License-Identifier: GPL-2.0-only

// Package report turns the Ginkgo report of a run into what its readers
// get: a verdict per spec in ftracetest's classes, requirement coverage,
// totals, an exit status, and the specs as text, KTAP and JUnit. It is the
// part of the results both sides link: the suite binary writes live mode's
// reports with it, without the host's QEMU runner.
package report

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/textlines"
)

// Spec is one spec's verdict.
type Spec struct {
	// Name is the spec's stable name for programs, unique in its boot: its
	// boot, its requirement IDs and, where specs share the IDs, its case
	// key ("default.SM-RESET-01.sleeper"); prose edits do not change it.
	Name     string
	Boot     string // the boot plan that ran it
	Text     string
	IDs      []string
	Labels   []string
	Duration time.Duration
	Class    contract.Class
	Message  string   // the failure or skip reason squeezed into one line
	Detail   string   // the reason as the spec gave it, lines kept (KTAP shows it)
	Location string   // where a failing spec failed: file:line in the module
	Warnings []string // misses of informational requirements
	Notes    []string // what a spec that passed could not check
	// TimedOut marks an UNRESOLVED spec that ran out of time: KTAP has a
	// directive of its own for it.
	TimedOut bool
	// FeatureAbsent is why the kernel lacks the stackmap feature, for an
	// UNSUPPORTED spec that found it missing (its report entry; a boot not
	// made gives its specs the default boot's), rather than something else
	// it needs (a profile, a boot, memory, another tracing feature); "" for
	// any other spec.
	FeatureAbsent string
	// Unsupported is why a spec turned FAIL by Require was UNSUPPORTED:
	// the run requires the feature it lacks. "" for any other spec.
	Unsupported string
}

// Summary is one run's result.
type Summary struct {
	Specs []Spec
	// SuiteProblems are failures outside any spec (suite setup, the final
	// restore of tracefs settings): the run cannot be trusted with them.
	SuiteProblems []string
	Succeeded     bool   // Ginkgo's own verdict on the suite
	Kernel        string // the guest's uname: release, version, machine
}

// modulePath is trimmed from failure locations: the files are the suite's.
const modulePath = "github.com/ftrace-stackmap/conformance"

// Parse reads Ginkgo's JSON report (a list of suite reports).
func Parse(data []byte) ([]types.Report, error) {
	var reports []types.Report
	if err := json.Unmarshal(data, &reports); err != nil {
		return nil, fmt.Errorf("report.json: %v", err)
	}
	if len(reports) == 0 {
		return nil, fmt.Errorf("report.json: no suite report")
	}
	return reports, nil
}

// Summarize classifies every spec of the reports one boot made, named
// after that boot.
func Summarize(boot string, reports []types.Report) Summary {
	s := Summary{Succeeded: true}
	for _, r := range reports {
		s.Succeeded = s.Succeeded && r.SuiteSucceeded
		for _, sr := range r.SpecReports {
			for _, e := range sr.ReportEntries {
				if e.Name == contract.KernelEntry {
					s.Kernel = e.StringRepresentation()
				}
			}
			if sr.LeafNodeType != types.NodeTypeIt {
				if sr.State.Is(types.SpecStateFailureStates) {
					s.SuiteProblems = append(s.SuiteProblems, fmt.Sprintf("%s: %s", sr.LeafNodeType, textlines.First(sr.Failure.Message)))
				}
				continue
			}
			c := contract.ClassOf(sr)
			if c == contract.NotRun {
				continue
			}
			var warnings, notes []string
			absent := ""
			for _, e := range sr.ReportEntries {
				switch e.Name {
				case contract.WarningEntry:
					warnings = append(warnings, e.StringRepresentation())
				case contract.NoteEntry:
					notes = append(notes, e.StringRepresentation())
				case contract.FeatureEntry:
					absent = e.StringRepresentation()
				}
			}
			reason := plainWords(sr.Failure.Message)
			ids := contract.IDsOf(sr.Labels())
			sp := Spec{
				Name:          specName(boot, ids, contract.CaseKeyOf(sr.Labels()), sr.LeafNodeText),
				Boot:          boot,
				Warnings:      warnings,
				Notes:         notes,
				Text:          strings.TrimSpace(sr.FullText()),
				IDs:           ids,
				Labels:        sr.Labels(),
				Duration:      sr.RunTime,
				FeatureAbsent: absentIf(c, absent),
				TimedOut:      sr.State == types.SpecStateTimedout,
				Class:         c,
				Message:       squeeze(headline(reason)),
				Detail:        strings.TrimSpace(reason),
			}
			if loc := sr.Failure.Location; (c == contract.Fail || c == contract.Unresolved) && loc.FileName != "" {
				sp.Location = fmt.Sprintf("%s:%d", strings.TrimPrefix(loc.FileName, modulePath+"/"), loc.LineNumber)
			}
			s.Specs = append(s.Specs, sp)
		}
	}
	return s
}

// Join is the summary of a run whose boots the summaries summarize, in
// that order.
func Join(summaries ...Summary) Summary {
	s := Summary{Succeeded: true}
	for _, o := range summaries {
		s.Specs = append(s.Specs, o.Specs...)
		s.SuiteProblems = append(s.SuiteProblems, o.SuiteProblems...)
		s.Succeeded = s.Succeeded && o.Succeeded
		if o.Kernel != "" {
			s.Kernel = o.Kernel
		}
	}
	return s
}

// absentIf is why the feature is absent, when the spec is UNSUPPORTED.
func absentIf(c contract.Class, why string) string {
	if c != contract.Unsupported {
		return ""
	}
	return why
}

// specName is "<boot>.<ID>", IDs joined by "+", then ".<key>" for a spec
// with a case key; a spec without an ID is named by its words, lower case
// and hyphenated.
// SpecName is a spec's case name in the reports of boot.
func SpecName(boot string, sr types.SpecReport) string {
	return specName(boot, contract.IDsOf(sr.Labels()), contract.CaseKeyOf(sr.Labels()), sr.LeafNodeText)
}

func specName(boot string, ids []string, key, leaf string) string {
	if len(ids) > 0 && key != "" {
		return boot + "." + strings.Join(ids, "+") + "." + key
	}
	if len(ids) > 0 {
		return boot + "." + strings.Join(ids, "+")
	}
	slug := strings.Trim(nonWord.ReplaceAllString(strings.ToLower(leaf), "-"), "-")
	if len(slug) > 40 {
		slug = strings.TrimRight(slug[:40], "-")
	}
	return boot + "." + slug
}

var nonWord = regexp.MustCompile(`[^a-z0-9]+`)

// Require turns the specs labelled feature that found it absent into
// failures: the run requires that feature (why says who asked), so its
// absence is a defect, not a reason to skip. A spec UNSUPPORTED for
// another reason (a requirement of another profile, memory) stays so. It
// returns how many it turned.
func (s *Summary) Require(feature, why string) int {
	n := 0
	for i := range s.Specs {
		sp := &s.Specs[i]
		if sp.FeatureAbsent == "" || !slices.Contains(sp.Labels, feature) {
			continue
		}
		sp.Class, sp.Unsupported = contract.Fail, sp.FeatureAbsent
		head := fmt.Sprintf("%s is required (%s), but: ", feature, why)
		sp.Message = squeeze(head + sp.Message)
		sp.Detail = head + sp.Detail
		n++
	}
	return n
}

// required counts the specs Require turned FAIL, and gives the first one's
// reason for being UNSUPPORTED.
func (s Summary) required() (n int, why string) {
	for _, sp := range s.Specs {
		if sp.Unsupported != "" {
			if n++; n == 1 {
				why = sp.Unsupported
			}
		}
	}
	return n, why
}

// Count returns how many specs are in a class.
func (s Summary) Count(c contract.Class) int {
	n := 0
	for _, sp := range s.Specs {
		if sp.Class == c {
			n++
		}
	}
	return n
}

// Totals are the three numbers of the closing line. UNRESOLVED counts as
// failed: it is not a pass, and not a reasoned skip.
func (s Summary) Totals() (passed, failed, skipped int) {
	return s.Count(contract.Pass), s.Count(contract.Fail) + s.Count(contract.Unresolved), s.Count(contract.Unsupported)
}

// ExitCode is 1 when a spec failed, 2 when the run cannot be trusted
// (unresolved specs, suite problems, no spec at all), else 0.
func (s Summary) ExitCode() int {
	switch {
	case s.Count(contract.Fail) > 0:
		return 1
	case s.Count(contract.Unresolved) > 0, len(s.SuiteProblems) > 0, len(s.Specs) == 0:
		return 2
	}
	return 0
}

// Coverage is each requirement's verdict: the worst class among its specs.
func (s Summary) Coverage() map[string]contract.Class {
	rank := map[contract.Class]int{contract.Pass: 0, contract.Unsupported: 1, contract.Unresolved: 2, contract.Fail: 3}
	cov := map[string]contract.Class{}
	for _, sp := range s.Specs {
		for _, id := range sp.IDs {
			c := sp.ClassOf(id)
			if old, ok := cov[id]; !ok || rank[c] > rank[old] {
				cov[id] = c
			}
		}
	}
	return cov
}

// ClassOf is the class the spec gives one of its requirements. A spec of
// several requirements (the torture) that failed by a clause of one of
// them fails that one alone: the others were neither shown broken nor,
// the spec having stopped at its failure, shown to hold, and are
// UNRESOLVED.
func (sp Spec) ClassOf(id string) contract.Class {
	if sp.Class != contract.Fail || len(sp.IDs) < 2 {
		return sp.Class
	}
	clause, _ := contract.ClauseOf(sp.Message)
	if blamed := contract.RequirementOf(clause); slices.Contains(sp.IDs, blamed) && blamed != id {
		return contract.Unresolved
	}
	return sp.Class
}

// ClosingLine is the last line of every run.
func (s Summary) ClosingLine() string { return Closing(s.Totals()) }

// Closing is a run's last line: its totals.
func Closing(passed, failed, skipped int) string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", passed, failed, skipped)
}

// Verdict is the specs' verdict on one line: "ok", "FAIL" or "NO VERDICT:
// <reason>", matching ExitCode's 0, 1 and 2. requiredWhy says who required
// the feature of the specs Require turned FAIL.
func (s Summary) Verdict(requiredWhy string) string {
	switch s.ExitCode() {
	case 0:
		return "ok"
	case 1:
		n, why := s.required()
		switch other := s.Count(contract.Fail) - n; {
		case n == 0:
			return "FAIL"
		case other == 0:
			return fmt.Sprintf("FAIL: %d stackmap specs UNSUPPORTED, and this run requires stackmap (%s): %s", n, requiredWhy, why)
		default:
			return fmt.Sprintf("FAIL: %d specs failed, and %d stackmap specs UNSUPPORTED while this run requires stackmap (%s): %s", other, n, requiredWhy, why)
		}
	}
	switch {
	case len(s.SuiteProblems) > 0:
		return "NO VERDICT: suite: " + s.SuiteProblems[0]
	case len(s.Specs) == 0:
		return "NO VERDICT: no spec ran"
	}
	return fmt.Sprintf("NO VERDICT: %d specs UNRESOLVED", s.Count(contract.Unresolved))
}

// headline is a failure on one line, as a reviewer reads it. Gomega puts
// an assertion's description first and its matcher's "Expected <type>: value
// to ..." below: when the description already says what was got, that is
// all; otherwise the matcher's part follows without its type tags. Detail
// keeps the message as it was.
func headline(reason string) string {
	first, rest, found := strings.Cut(reason, "\n")
	rest = strings.TrimSpace(rest)
	if !found || strings.TrimSpace(first) == "" || !strings.HasPrefix(rest, "Expected") {
		return reason
	}
	if strings.Contains(first, "got ") {
		return first
	}
	return first + ": expected" + typeTag.ReplaceAllString(strings.TrimPrefix(rest, "Expected"), " ")
}

// plainWords puts Go's spellings of values in a reason into words a
// reader of the list knows: no pointer addresses, no "<nil>".
func plainWords(reason string) string {
	reason = goPointer.ReplaceAllString(reason, ">")
	reason = strings.ReplaceAll(reason, "<nil>: nil", "nothing")
	reason = strings.ReplaceAll(reason, "<nil>", "nothing")
	return goTypeLine.ReplaceAllString(reason, "$1")
}

// goTypeLine is Gomega's "<type>: " before a value at the start of a line
// ("    <syscall.Errno>: 16"): Go's name for the type, not the kernel's.
var goTypeLine = regexp.MustCompile(`(?m)^([ \t]*)<[^<>\n]+>:[ \t]*`)

// goPointer is the address Gomega prints after a pointer's type, as in
// "<*fs.PathError | 0xc000123450>": it differs in every run and means
// nothing to a reader.
var goPointer = regexp.MustCompile(` \| 0x[0-9a-f]+>`)

// typeTag is Gomega's "<type>: " or "<type | 0xc000123>: " before a value.
var typeTag = regexp.MustCompile(`\s*<[^<>\n]*>: `)
