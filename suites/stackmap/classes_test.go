// SPDX-License-Identifier: GPL-2.0-only

package stackmap

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ftrace-stackmap/conformance/harness"
	"github.com/ftrace-stackmap/conformance/internal/contract"
)

// fakeTraceFS lays out plain files shaped like a tracefs root, with the
// given modes; a name ending in "/" is a directory.
func fakeTraceFS(t *testing.T, files map[string]os.FileMode) *harness.TraceFS {
	t.Helper()
	root := t.TempDir()
	for name, mode := range files {
		p := filepath.Join(root, name)
		dir := filepath.Dir(p)
		if strings.HasSuffix(name, "/") {
			dir = p
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if dir == p {
			continue
		}
		content := "0\n"
		if name == "current_tracer" {
			content = "nop\n"
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	return &harness.TraceFS{Root: root}
}

// failingT stands in for *testing.T under RunSpecs, whose specs here are
// meant to fail: what matters is the class each one ends in.
type failingT struct{ failed bool }

func (f *failingT) Fail() { f.failed = true }

// Specs and the helpers they call run on a fake tracefs, never this
// machine's: a setup step that breaks makes a spec UNRESOLVED naming what
// broke, a node that is missing is one failure, its requirement's, and a
// spec fails for its own requirement in its own body.
func TestSpecClassesOnAFakeTraceFS(t *testing.T) {
	// stack_map_bin is missing, trace_options cannot be read and
	// stack_map_stat is out of format.
	harness.UseTraceFS(fakeTraceFS(t, map[string]os.FileMode{
		"trace": 0o644, "tracing_on": 0o644, "current_tracer": 0o644, "trace_options/": 0,
		optionNode: 0o644, mapNode: 0o640, statNode: 0o440, execEnable: 0o644,
	}))
	// options is a file: nothing can be looked up below it.
	unreadable := fakeTraceFS(t, map[string]os.FileMode{"trace": 0o644, "options": 0o644, mapNode + "/": 0})

	reports := map[string]SpecReport{}
	ReportAfterEach(func(r SpecReport) { reports[r.LeafNodeText] = r })
	It("looks for the feature where tracefs cannot be read", Label("unit"), func() { requireFeature(unreadable) })
	It("resets the map as a setup step, refused", Label("unit"), func() { resetAsSetup(unreadable, "0") })
	It("stats an export that is missing", Label("unit"), func() { statExport(harness.Root(), binNode) })

	RegisterFailHandler(Fail)
	suite, reporter := GinkgoConfiguration()
	suite.LabelFilter = "unit || SM-NODE-02 || SM-MODE-01 || SM-OPT-01 || SM-STAT-01"
	reporter.NoColor, reporter.Succinct = true, true
	RunSpecs(&failingT{}, "setup failures", suite, reporter)

	for text, want := range map[string]struct {
		class  contract.Class
		names  string // what the reason must name
		clause string // what a FAIL's reason starts with: the clause broken
	}{
		"[SM-NODE-02] has stack_map, stack_map_stat and stack_map_bin at the top level":            {contract.Fail, "stack_map_bin", "[SM-NODE-02.1] "},
		"[SM-MODE-01] gives stack_map mode 0640, the others 0440, all owned like trace":            {contract.Unresolved, "SM-NODE-02", ""},
		"[SM-OPT-01] reads 0 or 1, round-trips 1 and 0, and trace_options agrees":                  {contract.Unresolved, "reading trace_options", ""},
		"[SM-STAT-01] has exactly the stat keys, and success_rate only once something was counted": {contract.Fail, "stack_map_stat line 1", "[SM-STAT-01.1] "},
		"looks for the feature where tracefs cannot be read":                                       {contract.Unresolved, "not a directory", ""},
		"stats an export that is missing":                                                          {contract.Unresolved, "SM-NODE-02", ""},
		"resets the map as a setup step, refused":                                                  {contract.Unresolved, "SM-RESET-02", ""},
	} {
		r, ok := reports[text]
		if !ok {
			t.Errorf("%q did not run", text)
			continue
		}
		if got := contract.ClassOf(r); got != want.class || !strings.Contains(r.Failure.Message, want.names) || !strings.HasPrefix(r.Failure.Message, want.clause) {
			t.Errorf("%q ended %s: %q; want %s naming %q", text, got, r.Failure.Message, want.class, want.names)
		}
	}
}
