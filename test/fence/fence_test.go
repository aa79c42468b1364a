// SPDX-License-Identifier: GPL-2.0-only

// Package fence keeps the host and the guest apart, in both directions, as
// data: each binary the project builds, and the packages it must not link.
// The host command must not carry the guest's specs or Ginkgo's DSL; the
// guest's test binary and its init must not carry the host's QEMU runner,
// kernel builders or run-level reports.
package fence

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/ftrace-stackmap/conformance"

// A fence is one binary and what it must not link. A path that ends in
// "/..." forbids the package and everything below it; any other forbids
// that package alone.
type fence struct {
	binary string // the import path of a main package, or of a test binary's
	test   bool   // the binary is `go test -c` of it, as the guest's suite is
	mayNot []string
	why    string
}

// hostOnly are the packages that run QEMU, build kernels or write a run's
// reports on the host.
var hostOnly = []string{
	module + "/qemu/...",
	module + "/internal/qemutest/...",
	module + "/internal/results", // the run level; its report core is shared
	module + "/internal/kernels/...",
	module + "/internal/apt/...",
	module + "/internal/matrix/...",
	module + "/internal/bench/...",
	module + "/internal/mutants/...",
	module + "/internal/review/...",
	module + "/internal/dumpcheck/...",
	module + "/internal/ftracetest/...",
	module + "/internal/progress/...",
	module + "/initramfs", // the archive builder; initramfs/guest is shared
}

var fences = []fence{
	{binary: module + "/cmd/smct", mayNot: []string{
		module + "/harness/...",
		module + "/suites/...",
		module + "/initramfs/init/...",
		"github.com/onsi/ginkgo/v2", // the DSL; its types and reporters are data
		"github.com/onsi/ginkgo/v2/dsl/...",
		"github.com/onsi/gomega/...",
	}, why: "the host command links no guest code"},
	{binary: module + "/suites", test: true, mayNot: hostOnly, why: "the guest's suite links no host runner"},
	{binary: module + "/initramfs/init", mayNot: append(append([]string{}, hostOnly...),
		module+"/harness/...", module+"/suites/...", "github.com/onsi/ginkgo/v2/..."),
		why: "the guest's init only runs the suite and sends its reports"},
}

// forbids says whether rule keeps pkg out.
func forbids(rule, pkg string) bool {
	if base, ok := strings.CutSuffix(rule, "/..."); ok {
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return pkg == rule
}

// deps lists what the binary links, as go list sees it.
func deps(t *testing.T, f fence) []string {
	args := []string{"list", "-deps"}
	if f.test {
		args = append(args, "-test")
	}
	out, err := exec.Command("go", append(args, f.binary)...).Output()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Fatalf("go list %s: %v: %s", f.binary, err, ee.Stderr)
	} else if err != nil {
		t.Fatalf("go list %s: %v", f.binary, err)
	}
	var pkgs []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		// A test variant is listed as "pkg [pkg.test]": the package is what counts.
		pkg, _, _ := strings.Cut(l, " ")
		pkgs = append(pkgs, pkg)
	}
	return pkgs
}

func TestFences(t *testing.T) {
	for _, f := range fences {
		t.Run(strings.TrimPrefix(f.binary, module+"/"), func(t *testing.T) {
			linked := deps(t, f)
			if len(linked) < 2 {
				t.Fatalf("go list gave %d packages for %s: the fence would hold nothing", len(linked), f.binary)
			}
			for _, pkg := range linked {
				for _, rule := range f.mayNot {
					if forbids(rule, pkg) {
						t.Errorf("%s links %s (fenced off by %q): %s", f.binary, pkg, rule, f.why)
					}
				}
			}
		})
	}
}

// The rules themselves: a fence that matches nothing guards nothing.
func TestForbids(t *testing.T) {
	for _, tc := range []struct {
		rule, pkg string
		want      bool
	}{
		{module + "/qemu/...", module + "/qemu", true},
		{module + "/qemu/...", module + "/qemu/x", true},
		{module + "/qemu/...", module + "/qemux", false},
		{module + "/internal/results", module + "/internal/results", true},
		{module + "/internal/results", module + "/internal/results/report", false},
		{"github.com/onsi/ginkgo/v2", "github.com/onsi/ginkgo/v2/types", false},
	} {
		if got := forbids(tc.rule, tc.pkg); got != tc.want {
			t.Errorf("forbids(%q, %q) = %v, want %v", tc.rule, tc.pkg, got, tc.want)
		}
	}
}
