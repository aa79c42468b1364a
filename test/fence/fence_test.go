// SPDX-License-Identifier: GPL-2.0-only

// Package fence keeps the host and the guest apart, in both directions, as
// data: each binary the project builds, and what it may link. The host
// command must not carry the guest's specs or Ginkgo's DSL; the guest's
// binaries link only the project's packages named for them, so a package
// new to the guest (a host runner, a kernel builder, a run-level report)
// fails here until someone adds it on purpose.
package fence

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/ftrace-stackmap/conformance"

// A fence is one binary and what it may link. A rule that ends in "/..."
// covers the package and everything below it; any other that package alone.
type fence struct {
	binary string // the import path of a main package, or of a test binary's
	test   bool   // the binary is `go test -c` of it, as the guest's suite is
	// guest: of the project's packages the binary links only itself and
	// may, an allow-list of exact import paths.
	guest  bool
	may    []string
	mayNot []string // rules for any package, the project's or another module's
	why    string
}

// own names a package of this module.
func own(names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, module+"/"+n)
	}
	return out
}

var fences = []fence{
	{binary: module + "/cmd/smct", mayNot: []string{
		module + "/harness/...",
		module + "/suites/...",
		module + "/initramfs/init/...",
		module + "/initramfs/poweroff",
		"github.com/onsi/ginkgo/v2", // the DSL; its types and reporters are data
		"github.com/onsi/ginkgo/v2/dsl/...",
		"github.com/onsi/gomega/...",
	}, why: "the host command links no guest code"},
	{binary: module + "/suites", test: true, guest: true, may: own(
		"suites/baseline", "suites/claims", "suites/stackmap",
		"harness", "initramfs/guest",
		"internal/claims", // the claims' samples and part names, shared with the host's judge
		"internal/consoleframe", "internal/contract", "internal/results/report",
		"internal/stackmapfmt", "internal/textlines",
		"internal/kernellog", // the marks it leaves in the kernel's log for the kernel-log reader
		"internal/labels",    // the boot plans' filters, in the contract it shares with the host
		"internal/arch",      // the arch table names the machine the suite runs on (live mode's reports)
	), why: "the guest's suite links no host runner"},
	{binary: module + "/initramfs/init", guest: true, may: own("initramfs/guest", "internal/consoleframe",
		"internal/kernellog"), // its kernel-log case judged by the host's rule
		mayNot: []string{"github.com/onsi/ginkgo/v2/..."},
		why:    "the guest's init only runs the suite and sends its reports"},
	{binary: module + "/initramfs/poweroff", guest: true, why: "the bare boot's program only powers off"},
	// Not a binary, but linked by every command that writes a run's reports.
	{binary: module + "/internal/results", mayNot: []string{module + "/internal/kernels/kbuild"},
		why: "the reports need what a kernel was made from (korigin), not its builder"},
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
				self := pkg == f.binary || pkg == f.binary+".test"
				if f.guest && !self && forbids(module+"/...", pkg) && !slices.Contains(f.may, pkg) {
					t.Errorf("%s links %s, which is not on its allow-list (%s): if the guest needs it, add it to the fence", f.binary, pkg, f.why)
				}
			}
			// The list says what the guest needs now, no more.
			for _, pkg := range f.may {
				if !slices.Contains(linked, pkg) {
					t.Errorf("%s no longer links %s: take it off its allow-list", f.binary, pkg)
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
