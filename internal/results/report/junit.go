// SPDX-License-Identifier: GPL-2.0-only

package report

import (
	"encoding/xml"
	"fmt"
	"time"

	"github.com/onsi/ginkgo/v2/reporters"

	"github.com/ftrace-stackmap/conformance/internal/contract"
)

// The JUnit XML that Jenkins, GitLab and GitHub reporters read: one
// testsuite per run, one testcase per spec of the summary, so that its
// counts are the closing line's (failures + errors = failed). A case's
// failure, error and skip, and the suite's properties, are Ginkgo's own
// types; the suites, suite and case are not, as Ginkgo's carry attributes
// these reports never had (status, disabled, package) and its times in
// full precision.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Skipped  int          `xml:"skipped,attr"`
		Time     string       `xml:"time,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name       string                    `xml:"name,attr"`
		Tests      int                       `xml:"tests,attr"`
		Failures   int                       `xml:"failures,attr"`
		Errors     int                       `xml:"errors,attr"`
		Skipped    int                       `xml:"skipped,attr"`
		Time       string                    `xml:"time,attr"`
		Timestamp  string                    `xml:"timestamp,attr,omitempty"`
		Properties []reporters.JUnitProperty `xml:"properties>property"`
		Cases      []JUnitCase               `xml:"testcase"`
		SystemErr  string                    `xml:"system-err,omitempty"`
	}
)

// JUnitCase is one testcase of a run's JUnit: a spec, or a test of a QEMU
// run's own.
type JUnitCase struct {
	Name      string                  `xml:"name,attr"`
	Classname string                  `xml:"classname,attr"`
	Time      string                  `xml:"time,attr"`
	Failure   *reporters.JUnitFailure `xml:"failure,omitempty"`
	Error     *reporters.JUnitError   `xml:"error,omitempty"`
	Skipped   *reporters.JUnitSkipped `xml:"skipped,omitempty"`
	SystemOut string                  `xml:"system-out,omitempty"`
}

// JUnit is the run as JUnit XML: suite "<name> <arch>", each spec a
// testcase named by its requirement IDs in class "<arch>.<boot>", the
// sentence as its output. FAIL is a failure, UNRESOLVED an error,
// UNSUPPORTED skipped. A run without a verdict has first one erroring
// testcase per boot, saying why; more are the cases that follow the
// specs'. The suite's problems are its error output. Timestamps are the
// host's.
func (r Run) JUnit(more ...JUnitCase) ([]byte, error) {
	suite := junitSuite{Name: r.Name + " " + r.Arch}
	if !r.Started.IsZero() {
		suite.Timestamp = r.Started.UTC().Format("2006-01-02T15:04:05")
	}
	for _, p := range [][2]string{{"kernel", r.Summary.Kernel}, {"image", r.Image}, {"sha256", r.SHA256},
		{"machine", r.Machine}, {"profile", r.Profile.String()}, {"seed", fmt.Sprint(r.Seed)}, {"suite", r.Suite},
		{"require", r.Require}, {"verdict", OneLine(r.Verdict)}} {
		if p[1] != "" {
			suite.Properties = append(suite.Properties, reporters.JUnitProperty{Name: p[0], Value: Plain(p[1])})
		}
	}
	if r.NoVerdict != "" {
		for _, boot := range r.boots() {
			suite.Cases = append(suite.Cases, JUnitCase{Name: boot, Classname: r.Arch + "." + boot, Time: "0",
				Error: &reporters.JUnitError{Message: OneLine("NO VERDICT: " + r.NoVerdict), Type: "NO VERDICT", Description: Plain(r.NoVerdict)}})
		}
	}
	var total time.Duration
	for _, sp := range r.Summary.Specs {
		c := JUnitCase{Name: caseName(sp), Classname: r.Arch + "." + sp.Boot, Time: seconds(sp.Duration), SystemOut: Plain(sp.Text)}
		text := Plain(sp.Detail)
		if sp.Location != "" {
			text += "\nat " + sp.Location
		}
		switch sp.Class {
		case contract.Fail:
			c.Failure = &reporters.JUnitFailure{Message: Plain(sp.Message), Type: string(sp.Class), Description: text}
		case contract.Unresolved:
			c.Error = &reporters.JUnitError{Message: Plain(sp.Message), Type: string(sp.Class), Description: text}
		case contract.Unsupported:
			c.Skipped = &reporters.JUnitSkipped{Message: Plain(sp.Message)}
		}
		total += sp.Duration
		suite.Cases = append(suite.Cases, c)
	}
	suite.Cases = append(suite.Cases, more...)
	for _, c := range suite.Cases {
		switch {
		case c.Failure != nil:
			suite.Failures++
		case c.Error != nil:
			suite.Errors++
		case c.Skipped != nil:
			suite.Skipped++
		}
	}
	var errs string
	for _, p := range r.Summary.SuiteProblems {
		errs += "SUITE: " + p + "\n"
	}
	suite.SystemErr = Plain(errs)
	suite.Tests, suite.Time = len(suite.Cases), seconds(total)
	doc := junitSuites{Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors, Skipped: suite.Skipped,
		Time: suite.Time, Suites: []junitSuite{suite}}
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(out, '\n')...), nil
}

// caseName is a spec's testcase name: its name without the boot, which
// the class carries.
func caseName(sp Spec) string {
	if sp.Boot != "" && len(sp.Name) > len(sp.Boot)+1 {
		return sp.Name[len(sp.Boot)+1:]
	}
	return sp.Name
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
