// SPDX-License-Identifier: GPL-2.0-only

package report

import (
	"fmt"
	"io"
	"sort"

	"github.com/ftrace-stackmap/conformance/internal/contract"
)

// WriteSpecs prints one line per spec, with the reason for any that did not pass.
func (s Summary) WriteSpecs(w io.Writer) {
	for _, sp := range s.Specs {
		line := fmt.Sprintf("%-11s %s", sp.Class, sp.Text)
		if sp.Class != contract.Pass && sp.Message != "" {
			line += " -- " + sp.Message
		}
		fmt.Fprintln(w, line)
		for _, warning := range sp.Warnings {
			fmt.Fprintf(w, "%-11s   %s\n", "WARNING", warning)
		}
		for _, note := range sp.Notes {
			fmt.Fprintf(w, "%-11s   %s\n", "NOTE", note)
		}
	}
	for _, p := range s.SuiteProblems {
		fmt.Fprintf(w, "%-11s %s\n", "SUITE", p)
	}
}

// WriteCoverage prints requirement coverage, one ID a line, sorted.
func (s Summary) WriteCoverage(w io.Writer) {
	cov := s.Coverage()
	ids := make([]string, 0, len(cov))
	for id := range cov {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		fmt.Fprintf(w, "  %-16s %s\n", id, cov[id])
	}
}
