// SPDX-License-Identifier: GPL-2.0-only

package lava

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/internal/consoleframe"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// failingLogs are recorded LAVA logs of runs that failed: lava-run's
// stderr for the reference kernel with a fault switch on.
var failingLogs = []string{"testdata/no_ebusy-arm64.log"}

// FuzzResults damages LAVA's log of a failing run in every way a fuzzer
// finds and judges it as smct lava-results does: whatever the damage, the
// run never passes, and every frame a guest listed in its manifest that
// did not arrive whole is named in the run's reports.
func FuzzResults(f *testing.F) {
	var specs types.SpecReports
	for _, name := range failingLogs {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		specs = append(specs, specsIn(f, data)...)
	}
	rn := new(qemutest.Runner)
	rn.KnownSpecs(specs)
	f.Fuzz(func(t *testing.T, log []byte) {
		path := filepath.Join(t.TempDir(), "lava.log")
		if err := os.WriteFile(path, log, 0o644); err != nil {
			t.Fatal(err)
		}
		o := qemutest.Options{ResultsDir: t.TempDir(), Progress: progress.Discard()}
		res, l, err := Results(context.Background(), rn, o, path)
		if err == nil && res.ExitCode() == 0 {
			t.Fatalf("a damaged log of a failing run passes: %s", res.Verdict())
		}
		if err != nil || l == nil {
			return
		}
		said := saidOf(res)
		for ns, b := range l.Boots {
			c, derr := consoleframe.Decode(strings.NewReader(strings.Join(b.Console, "\n")))
			if derr != nil || !c.HaveManifest {
				continue
			}
			for _, lost := range c.Lost() {
				if !strings.Contains(said, lost) {
					t.Fatalf("boot %s: %s did not arrive and nothing says so:\n%s", ns, lost, said)
				}
			}
		}
	})
}

// specsIn are the specs the report.json frames of a log hold: the suite's,
// as its listing would give them.
func specsIn(f *testing.F, log []byte) types.SpecReports {
	l, err := ParseLog(bytes.NewReader(log))
	if err != nil {
		f.Fatal(err)
	}
	var specs types.SpecReports
	for _, b := range l.Boots {
		c, err := consoleframe.Decode(strings.NewReader(strings.Join(b.Console, "\n")))
		if err != nil || c.Files["report.json"] == nil {
			continue
		}
		reports, err := report.Parse(c.Files["report.json"])
		if err != nil {
			f.Fatal(err)
		}
		for _, r := range reports {
			specs = append(specs, r.SpecReports.WithLeafNodeType(types.NodeTypeIt)...)
		}
	}
	if len(specs) == 0 {
		f.Fatal("the recorded log has no spec")
	}
	return specs
}

// saidOf is everything a run's reports say of what could not be judged
// or did not arrive.
func saidOf(res *results.Result) string {
	var b strings.Builder
	for _, n := range append(res.Unjudged, res.Lost...) {
		b.WriteString(n.Boot + ": " + n.Note + "\n")
	}
	for _, k := range res.KernelLogs {
		if k.Missing {
			b.WriteString(k.Boot + ": " + results.KernelLogMissing + "\n")
		}
	}
	return b.String()
}
