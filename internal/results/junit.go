// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/contract"
)

// JUnitFile is the run's JUnit XML, for CI systems' test views.
const JUnitFile = "junit.xml"

// The JUnit XML that Jenkins, GitLab and GitHub reporters read: one
// testsuite per run, one testcase per spec of the summary, so that its
// counts are the closing line's (failures + errors = failed).
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
		Name       string          `xml:"name,attr"`
		Tests      int             `xml:"tests,attr"`
		Failures   int             `xml:"failures,attr"`
		Errors     int             `xml:"errors,attr"`
		Skipped    int             `xml:"skipped,attr"`
		Time       string          `xml:"time,attr"`
		Timestamp  string          `xml:"timestamp,attr,omitempty"`
		Properties []junitProperty `xml:"properties>property"`
		Cases      []junitCase     `xml:"testcase"`
		SystemErr  string          `xml:"system-err,omitempty"`
	}
	junitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitProblem `xml:"failure,omitempty"`
		Error     *junitProblem `xml:"error,omitempty"`
		Skipped   *junitProblem `xml:"skipped,omitempty"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	junitProblem struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr,omitempty"`
		Text    string `xml:",chardata"`
	}
)

// JUnit is the run as JUnit XML: suite "<image> <arch>", each spec a
// testcase named by its requirement IDs in class "<arch>.<boot>", the
// sentence as its output. FAIL is a failure, UNRESOLVED an error,
// UNSUPPORTED skipped. A run without a verdict has one erroring testcase
// per boot, saying why; a boot whose kernel logged problems fails a
// testcase "kernel-log" of its class. Timestamps are the host's.
func JUnit(res *Result) ([]byte, error) {
	o := res.Request
	suite := junitSuite{Name: suiteName(res) + " " + o.Arch}
	if !res.Started.IsZero() {
		suite.Timestamp = res.Started.UTC().Format("2006-01-02T15:04:05")
	}
	for _, p := range [][2]string{{"kernel", res.Summary.Kernel}, {"image", res.Source}, {"sha256", res.KernelSHA},
		{"machine", res.Machine}, {"profile", o.Profile}, {"seed", fmt.Sprint(o.Seed)}, {"suite", res.Suite},
		{"require", requireLine(res)}, {"verdict", OneLine(res.Verdict())}} {
		if p[1] != "" {
			suite.Properties = append(suite.Properties, junitProperty{p[0], Plain(p[1])})
		}
	}
	var total time.Duration
	if res.NoVerdict != "" {
		for _, boot := range plans(res) {
			suite.Cases = append(suite.Cases, junitCase{Name: boot, Classname: o.Arch + "." + boot, Time: "0",
				Error: &junitProblem{Message: OneLine("NO VERDICT: " + res.NoVerdict), Type: "NO VERDICT", Text: Plain(res.NoVerdict)}})
			suite.Errors++
		}
	}
	for _, sp := range res.Summary.Specs {
		c := junitCase{Name: caseName(sp), Classname: o.Arch + "." + sp.Boot, Time: seconds(sp.Duration), SystemOut: Plain(sp.Text)}
		problem := &junitProblem{Message: Plain(sp.Message), Type: string(sp.Class), Text: Plain(sp.Detail)}
		if sp.Location != "" {
			problem.Text += "\nat " + sp.Location
		}
		switch sp.Class {
		case contract.Fail:
			c.Failure = problem
			suite.Failures++
		case contract.Unresolved:
			c.Error = problem
			suite.Errors++
		case contract.Unsupported:
			c.Skipped = &junitProblem{Message: Plain(sp.Message)}
			suite.Skipped++
		}
		total += sp.Duration
		suite.Cases = append(suite.Cases, c)
	}
	for _, l := range res.KernelLogs() {
		suite.Cases = append(suite.Cases, junitCase{Name: "kernel-log", Classname: o.Arch + "." + l.Boot, Time: "0",
			Failure: &junitProblem{Message: Plain(l.Lines[0]), Type: "KERNEL", Text: Plain(strings.Join(l.Lines, "\n"))}})
		suite.Failures++
	}
	if d := res.Decoder; d != nil {
		c := junitCase{Name: "decoder", Classname: o.Arch + ".default", Time: "0"}
		if !d.Agrees() {
			c.Failure = &junitProblem{Message: Plain(d.Problems[0]), Type: "FAIL", Text: Plain(strings.Join(d.Problems, "\n"))}
			suite.Failures++
		}
		suite.Cases = append(suite.Cases, c)
	}
	var errs string
	for _, p := range res.Summary.SuiteProblems {
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

// WriteJUnit writes the run's junit.xml into its directory.
func WriteJUnit(res *Result) error {
	b, err := JUnit(res)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(res.Dir, JUnitFile), b, 0o644)
}

// caseName is a spec's testcase name: its name without the boot, which
// the class carries.
func caseName(sp Spec) string {
	if sp.Boot != "" && len(sp.Name) > len(sp.Boot)+1 {
		return sp.Name[len(sp.Boot)+1:]
	}
	return sp.Name
}

// suiteName names what was booted: the lock entry, KERNEL=path or TREE=dir.
func suiteName(res *Result) string {
	switch {
	case res.Entry != "":
		return res.Entry
	case res.Request.Kernel != "":
		return "KERNEL=" + res.Request.Kernel
	case res.Request.Tree != "":
		return "TREE=" + res.Request.Tree
	case res.Request.Image != "":
		return res.Request.Image
	}
	return "lock-default" // the run stopped before reading images.lock
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
