// SPDX-License-Identifier: GPL-2.0-only

package matrix

import (
	"errors"
	"strings"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

func result(classes ...contract.Class) *results.Result {
	s := report.Summary{Succeeded: true}
	for _, c := range classes {
		s.Specs = append(s.Specs, report.Spec{Text: "spec", Class: c})
	}
	return &results.Result{Summary: s}
}

func TestTableVerdictsAndWorstStatus(t *testing.T) {
	cells := []Cell{
		{Entry: "debian-6.12", Arch: "arm64", Result: result(contract.Pass, contract.Unsupported)},
		{Entry: "debian-6.12", Arch: "x86_64", Result: result(contract.Pass, contract.Fail)},
	}
	// What each cell expects of its kernel: the table shows it.
	cells[0].Result.RequiredWhy = "images.lock: debian-6.12 has_stackmap: false"
	cells[1].Result.Required, cells[1].Result.RequiredWhy = true, "REQUIRE=stackmap"
	var b strings.Builder
	if worst := WriteTable(&b, cells); worst != 1 {
		t.Errorf("worst = %d, want 1", worst)
	}
	cells = append(cells, Cell{Entry: "reference", Arch: "arm64", Err: errors.New("guest kernel panicked\nmore")})
	b.Reset()
	if worst := WriteTable(&b, cells); worst != 2 {
		t.Errorf("worst = %d, want 2", worst)
	}
	out := b.String()
	for _, want := range []string{
		"entry        arch    requires  passed  failed  unsupported  verdict\n",
		"debian-6.12  arm64   -              1       0            1  ok\n",
		"debian-6.12  x86_64  stackmap       1       1            0  FAIL\n",
		"reference    arm64   ?              0       0            0  NO VERDICT: guest kernel panicked\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if got := Totals(cells); got != "2 passed, 1 failed, 1 skipped" {
		t.Errorf("totals %q", got)
	}
}

func TestUnresolvedIsNoVerdict(t *testing.T) {
	c := Cell{Entry: "e", Arch: "arm64", Result: result(contract.Pass, contract.Unresolved)}
	if c.Code() != 2 || c.Verdict() != "NO VERDICT: 1 specs UNRESOLVED" {
		t.Errorf("code %d verdict %q", c.Code(), c.Verdict())
	}
}
