// SPDX-License-Identifier: GPL-2.0-only

package lava

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The test definition for boards, as the repository holds it.
var (
	testdef       = filepath.Join("..", "..", "lava", "stackmap-conformance.yaml")
	testdefScript = filepath.Join("..", "..", "lava", "stackmap-conformance.sh")
)

func TestTestDefinitionPassesLAVAsSchema(t *testing.T) {
	needDispatcher(t)
	if err := CheckSchema(context.Background(), "testdef", testdef); err != nil {
		t.Fatal(err)
	}
}

// runTestdef runs the test definition's script as LAVA's shell would,
// under POSIX sh with set -e, on a stand-in for the suite that writes ktap
// and exits with status; it returns the lava-test-case calls and the
// suite's arguments.
func runTestdef(t *testing.T, ktap string, status string, extra ...string) (cases, args string) {
	t.Helper()
	sh, err := exec.LookPath("dash")
	if err != nil {
		sh = "/bin/sh"
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	os.WriteFile(filepath.Join(dir, "ktap.in"), []byte(ktap), 0o644)
	os.WriteFile(filepath.Join(bin, "lava-test-case"), []byte("#!/bin/sh\necho \"$1 $3\" >>"+filepath.Join(dir, "cases")+"\n"), 0o755)
	suite := filepath.Join(dir, "suites.test")
	os.WriteFile(suite, []byte(`#!/bin/sh
for a; do echo "$a" >>`+filepath.Join(dir, "args")+`; case "$a" in -smct.ktap=*) k=${a#-smct.ktap=} ;; esac; done
[ -s `+filepath.Join(dir, "ktap.in")+` ] && cp `+filepath.Join(dir, "ktap.in")+` "$k"
exit `+status+"\n"), 0o755)
	script, _ := filepath.Abs(testdefScript)
	cmd := exec.Command(sh, append([]string{"-e", script, "-s", suite, "-o", filepath.Join(dir, "out")}, extra...)...)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	c, _ := os.ReadFile(filepath.Join(dir, "cases"))
	a, _ := os.ReadFile(filepath.Join(dir, "args"))
	return string(c), string(a)
}

// Each spec of the KTAP is a case: a pass, a failure, a skip, and an
// UNRESOLVED spec (ERROR) a failure, never a pass; a subtest's lines are
// not the suite's.
func TestTestDefinitionReportsEachSpec(t *testing.T) {
	ktap := `KTAP version 1
1..5
ok 1 default.BASE-ONOFF-01
not ok 2 default.SM-RESET-01
ok 3 default.SM-BIN-01 # SKIP kernel has no stackmap feature
not ok 4 default.SM-NODE-01 # ERROR cannot write 1 to options/stackmap
  KTAP version 1
  1..1
  ok 1 ftrace/stackmap.tc
not ok 5 default.SM-INST-01 # TIMEOUT the spec ran out of time
# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:2
`
	cases, args := runTestdef(t, ktap, "1", "-l", "SM-RESET-01 || baseline", "-r", "stackmap")
	want := "default.BASE-ONOFF-01 pass\ndefault.SM-RESET-01 fail\ndefault.SM-BIN-01 skip\ndefault.SM-NODE-01 fail\ndefault.SM-INST-01 fail\n"
	if cases != want {
		t.Errorf("cases:\n%s\nwant\n%s", cases, want)
	}
	for _, a := range []string{"-ginkgo.label-filter=SM-RESET-01 || baseline", "-smct.require=stackmap", "-smct.exit-codes=kselftest"} {
		if !strings.Contains(args, a+"\n") {
			t.Errorf("the suite's arguments lack %q:\n%s", a, args)
		}
	}
}

// A run without a verdict (the suite's kselftest status 5, or no KTAP)
// is a failed case of its own, whatever its specs said.
func TestTestDefinitionWithoutVerdict(t *testing.T) {
	for name, tc := range map[string]struct{ ktap, status string }{
		"restore failed": {"KTAP version 1\n1..1\nok 1 default.BASE-ONOFF-01\n# SUITE: tracefs settings differ after restore\n", "5"},
		"no KTAP":        {"", "2"},
	} {
		cases, _ := runTestdef(t, tc.ktap, tc.status)
		if !strings.HasSuffix(cases, "stackmap-run fail\n") {
			t.Errorf("%s: cases %q, want stackmap-run failed", name, cases)
		}
	}
}
