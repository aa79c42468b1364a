// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ftrace-stackmap/conformance/internal/page"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// The reports Write puts into the run's directory, besides JUnitFile.
const (
	SummaryFile  = "summary.txt"
	KTAPFile     = "ktap.txt"
	EvidenceFile = "evidence.txt"
	// VerdictFile keeps the verdict on one line ("ok", "FAIL", "NO VERDICT:
	// ..."): make turns every failing status into its own 2.
	VerdictFile = "verdict.txt"
	// ClaimsFile and ClaimsJSONFile hold what the claims plan measured,
	// when the run made it.
	ClaimsFile     = "claims.txt"
	ClaimsJSONFile = "claims.json"
)

// Write puts the summary, the KTAP, the JUnit, the evidence, the verdict
// and the KCIDB data (for KCIDB_ORIGIN=) into the run's directory, and
// returns the summary: what qemu-test prints. A run without a verdict
// (Result.NoVerdict) gets them too, saying why.
//
// A report that cannot be written leaves the run without a verdict: Write
// sets NoVerdict, writes what it still can saying so, and returns the
// error, which names the file. The caller ends the run as one without a
// verdict (ExitCode is 2 from then on).
func Write(res *Result) (string, error) {
	summary, err := write(res)
	if err == nil {
		return summary, nil
	}
	err = fmt.Errorf("writing the reports: %w", err)
	if res.NoVerdict == "" {
		res.NoVerdict = err.Error()
		summary, _ = write(res) // its error is err again
	}
	return summary, err
}

// write writes every report, going on past one that fails so that as
// many as can say the verdict, and returns the summary and the errors.
func write(res *Result) (string, error) {
	summary := Text(res)
	junit, err := JUnit(res)
	if err != nil {
		return summary, err
	}
	var errs []error
	for _, f := range []struct{ name, text string }{
		{SummaryFile, summary}, {KTAPFile, KTAP(res)}, {JUnitFile, string(junit)}, {EvidenceFile, Evidence(res)},
		{VerdictFile, report.OneLine(res.Verdict()) + "\n"},
	} {
		errs = append(errs, os.WriteFile(filepath.Join(res.Dir, f.name), []byte(report.Plain(f.text)), 0o644))
	}
	errs = append(errs, writeClaims(res), writePage(res))
	origin, err := KCIDBOrigin()
	if err == nil {
		err = WriteKCIDB(res.Dir, origin, res)
	}
	return summary, errors.Join(append(errs, err)...)
}

// writePage writes the run's page, index.html.
func writePage(res *Result) error {
	html, err := page.Render(Page(res))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(res.Dir, page.File), html, 0o644)
}

// writeClaims writes claims.txt and claims.json when the run measured
// the claims.
func writeClaims(res *Result) error {
	if res.Claims == nil {
		return nil
	}
	data, err := res.Claims.JSON()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(res.Dir, ClaimsJSONFile), append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(res.Dir, ClaimsFile), []byte(res.Claims.Text()), 0o644)
}

// WriteClaimsRun writes the reports of a claims run alone (make claims):
// claims.txt, claims.json, its page and the KCIDB data of its
// measurements.
func WriteClaimsRun(res *Result) error {
	if err := writeClaims(res); err != nil {
		return err
	}
	html, err := page.Render(ClaimsPage(res))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(res.Dir, page.File), html, 0o644); err != nil {
		return err
	}
	origin, err := KCIDBOrigin()
	if err != nil {
		return err
	}
	return WriteKCIDB(res.Dir, origin, res)
}
