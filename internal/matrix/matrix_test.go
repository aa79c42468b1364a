// SPDX-License-Identifier: GPL-2.0-only

package matrix

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/kernels/korigin"
	"github.com/ftrace-stackmap/conformance/internal/page"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/results/golden"
	"github.com/ftrace-stackmap/conformance/internal/results/kcidbschema"
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
		{Entry: "debian-6.12", Arch: arch.MustLookup("arm64"), Result: result(contract.Pass, contract.Unsupported)},
		{Entry: "debian-6.12", Arch: arch.MustLookup("x86_64"), Result: result(contract.Pass, contract.Fail)},
	}
	// What each cell expects of its kernel: the table shows it.
	cells[0].Result.RequiredWhy = "images.lock: debian-6.12 has_stackmap: false"
	cells[1].Result.Required, cells[1].Result.RequiredWhy = true, "REQUIRE=stackmap"
	var b strings.Builder
	if worst := WriteTable(&b, cells); worst != 1 {
		t.Errorf("worst = %d, want 1", worst)
	}
	cells = append(cells, Cell{Entry: "reference", Arch: arch.MustLookup("arm64"), Err: errors.New("guest kernel panicked\nmore")})
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
	c := Cell{Entry: "e", Arch: arch.MustLookup("arm64"), Result: result(contract.Pass, contract.Unresolved)}
	if c.Code() != 2 || c.Verdict() != "NO VERDICT: 1 specs UNRESOLVED" {
		t.Errorf("code %d verdict %q", c.Code(), c.Verdict())
	}
}

// The matrix's kcidb.json holds every cell's run, and the source its cells
// share once: it is valid KCIDB data.
func TestWriteKCIDB(t *testing.T) {
	t.Setenv(results.KCIDBOriginEnv, "lab_1")
	started := time.Date(2026, 11, 22, 16, 45, 52, 0, time.UTC)
	source := korigin.Origin{Package: "linux-source-6.12 6.12.117-1~deb12u1", Config: "tinyconfig+common"}
	var cells []Cell
	for _, a := range []string{"arm64", "x86_64"} {
		res := result(contract.Pass, contract.Fail)
		res.Summary.Specs[0].Name, res.Summary.Specs[1].Name = "default.SM-RESET-01", "default.SM-BIN-01"
		res.Request.Arch, res.Dir, res.Started = arch.MustLookup(a), "results/matrix-x/reference-"+a+"/20261122-164552-"+a, started
		res.KernelSHA, res.Origin = strings.Repeat(a[:1], 64), source
		cells = append(cells, Cell{Entry: "reference", Arch: arch.MustLookup(a), Result: res})
	}
	cells = append(cells, Cell{Entry: "debian-6.1", Arch: arch.MustLookup("arm64"), Err: errors.New("no run directory")})
	dir := t.TempDir()
	if err := WriteKCIDB(dir, cells); err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(dir, results.KCIDBFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := kcidbschema.Validate(js); err != nil {
		t.Error(err)
	}
	var doc struct{ Checkouts, Builds, Tests []map[string]any }
	json.Unmarshal(js, &doc)
	if len(doc.Checkouts) != 1 || len(doc.Builds) != 2 || len(doc.Tests) != 6 {
		t.Errorf("%d checkouts, %d builds, %d tests; want 1, 2 and 6 (two specs and the verdict a run)", len(doc.Checkouts), len(doc.Builds), len(doc.Tests))
	}
	if id, _ := doc.Tests[0]["id"].(string); !strings.HasPrefix(id, "lab_1:") {
		t.Errorf("test id %q, want KCIDB_ORIGIN's", id)
	}
}

// The matrix's page: entries × arches, a cell per run, held to a golden
// file that the browser test opens.
func TestPageGolden(t *testing.T) {
	cells := []Cell{
		{Entry: "debian-6.12", Arch: arch.MustLookup("arm64"), Result: result(contract.Pass, contract.Unsupported)},
		{Entry: "debian-6.12", Arch: arch.MustLookup("x86_64"), Result: result(contract.Pass, contract.Fail)},
		{Entry: "reference", Arch: arch.MustLookup("arm64"), Result: result(contract.Pass, contract.Pass)},
		{Entry: "reference", Arch: arch.MustLookup("x86_64"), Err: errors.New("guest kernel panicked")},
	}
	cells[0].Result.RequiredWhy = "images.lock: debian-6.12 has_stackmap: false"
	html, err := page.Render(Page(t.TempDir(), cells))
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "matrix/"+page.File, string(html))
}
