// SPDX-License-Identifier: GPL-2.0-only

// Package dryrun lists the specs the suite would run, from a dry run of its
// binary: the tests of what the suite's names and states are read it.
package dryrun

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// Suite builds the suite's test binary once for t and returns its path.
func Suite(t *testing.T) string {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	suites := filepath.Join(filepath.Dir(here), "..", "..", "suites")
	bin := filepath.Join(t.TempDir(), "suites.test")
	if b, err := exec.Command("go", "test", "-c", "-o", bin, suites).CombinedOutput(); err != nil {
		t.Fatalf("building the suite: %v\n%s", err, b)
	}
	return bin
}

// List is the specs a label filter selects ("" for all), in the order a
// seed gives them, named as boot's report names them.
func List(t *testing.T, suite, boot, filter string, seed int) []report.Spec {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report.json")
	args := []string{"-ginkgo.dry-run", "-ginkgo.json-report=" + out, "-ginkgo.seed=" + strconv.Itoa(seed), "-ginkgo.randomize-all"}
	if filter != "" {
		args = append(args, "-ginkgo.label-filter="+filter)
	}
	if b, err := exec.Command(suite, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", suite, args, err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	reports, err := report.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return report.Summarize(boot, reports).Specs
}
