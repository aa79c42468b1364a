// SPDX-License-Identifier: GPL-2.0-only

package lava

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/ftrace-stackmap/conformance/internal/apt"
	"github.com/ftrace-stackmap/conformance/internal/contract"
)

// The test definition for boards, as the repository holds it.
var (
	testdefDir    = filepath.Join("..", "..", "lava")
	testdef       = filepath.Join(testdefDir, "stackmap-conformance.yaml")
	testdefScript = filepath.Join(testdefDir, "stackmap-conformance.sh")
	testdefSend   = filepath.Join(testdefDir, "send-to-lava.sh")
)

func TestTestDefinitionPassesLAVAsSchema(t *testing.T) {
	needDispatcher(t)
	if err := CheckSchema(context.Background(), "testdef", testdef); err != nil {
		t.Fatal(err)
	}
}

// testdefFormats are the formats Linaro's test-definitions accept.
var testdefFormats = []string{"Lava-Test Test Definition 1.0", "Manual Test Definition 1.0"}

// checkTestdef applies the rules Linaro's test-definitions (validate.py)
// apply to a test definition, a YAML document with a run section: a
// metadata section whose name, format, description, maintainer, os and
// devices are all there and not empty (a string or a list of something;
// a null, a number or a boolean has no length there and fails), a name
// without spaces, one of the two formats, and run.steps. It returns what
// breaks them.
func checkTestdef(data []byte) []string {
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return []string{"not valid YAML: " + err.Error()}
	}
	var problems []string
	run, ok := doc["run"].(map[string]any)
	if _, has := run["steps"]; !ok || !has {
		problems = append(problems, "run.steps section missing")
	}
	meta, ok := doc["metadata"].(map[string]any)
	if !ok {
		return append(problems, "metadata section missing")
	}
	var missing []string
	for _, key := range []string{"name", "format", "description", "maintainer", "os", "devices"} {
		v, has := meta[key]
		switch {
		case !has:
			missing = append(missing, key)
		case !hasContent(v):
			problems = append(problems, key+" has no content")
		}
	}
	if len(missing) > 0 {
		problems = append(problems, "mandatory keys missing: "+strings.Join(missing, ", "))
	}
	if name, ok := meta["name"].(string); meta["name"] != nil && (!ok || strings.Contains(name, " ")) {
		problems = append(problems, "'name' contains whitespace or is no string")
	}
	if format, ok := meta["format"].(string); meta["format"] != nil && (!ok || !slices.Contains(testdefFormats, format)) {
		problems = append(problems, fmt.Sprintf("'format' has incorrect value %v (want %q)", meta["format"], testdefFormats))
	}
	return problems
}

// hasContent is Python's len(v) > 0 for a value of a YAML document.
func hasContent(v any) bool {
	switch v := v.(type) {
	case string:
		return v != ""
	case []any:
		return len(v) > 0
	case map[string]any:
		return len(v) > 0
	}
	return false
}

// The definition keeps Linaro's metadata rules, and the check finds each
// way of breaking them.
func TestTestDefinitionMetadata(t *testing.T) {
	data, err := os.ReadFile(testdef)
	if err != nil {
		t.Fatal(err)
	}
	if p := checkTestdef(data); len(p) > 0 {
		t.Fatalf("%s: %s", testdef, strings.Join(p, "; "))
	}
	for name, c := range map[string]struct {
		edit func(doc, meta map[string]any)
		want string
	}{
		"no devices":        {func(_, m map[string]any) { delete(m, "devices") }, "mandatory keys missing: devices"},
		"no os, no name":    {func(_, m map[string]any) { delete(m, "os"); delete(m, "name") }, "mandatory keys missing: name, os"},
		"empty devices":     {func(_, m map[string]any) { m["devices"] = []any{} }, "devices has no content"},
		"null maintainer":   {func(_, m map[string]any) { m["maintainer"] = nil }, "maintainer has no content"},
		"empty description": {func(_, m map[string]any) { m["description"] = "" }, "description has no content"},
		"name with a space": {func(_, m map[string]any) { m["name"] = "stackmap conformance" }, "'name' contains whitespace"},
		"another format":    {func(_, m map[string]any) { m["format"] = "Lava-Test Test Definition 2.0" }, "'format' has incorrect value"},
		"no run.steps":      {func(d, _ map[string]any) { d["run"] = map[string]any{} }, "run.steps section missing"},
		"no metadata":       {func(d, _ map[string]any) { delete(d, "metadata") }, "metadata section missing"},
	} {
		var doc map[string]any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		c.edit(doc, doc["metadata"].(map[string]any))
		edited, err := yaml.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if p := strings.Join(checkTestdef(edited), "; "); !strings.Contains(p, c.want) {
			t.Errorf("%s: problems %q, want %q", name, p, c.want)
		}
	}
	if p := checkTestdef([]byte("metadata: [\n")); len(p) != 1 || !strings.HasPrefix(p[0], "not valid YAML") {
		t.Errorf("broken YAML: %q", p)
	}
}

// A board runs what the default boot runs: the same default label filter
// in the test definition and its script, so a spec a boot of its own must
// make (the torture's stackmap from the command line) is never asked of a
// board that did not boot for it.
func TestDefaultLabelsAreTheDefaultBoots(t *testing.T) {
	var want string
	for _, p := range contract.Plans() {
		if p.IsDefault() {
			want = p.Labels.String()
		}
	}
	data, err := os.ReadFile(testdef)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Params map[string]string `yaml:"params"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Params["LABELS"]; got != want {
		t.Errorf("%s: LABELS %q, the default boot's filter is %q", testdef, got, want)
	}
	script, err := os.ReadFile(testdefScript)
	if err != nil {
		t.Fatal(err)
	}
	if line := "LABELS='" + want + "'"; !slices.Contains(strings.Split(string(script), "\n"), line) {
		t.Errorf("%s: no line %s", testdefScript, line)
	}
}

// The scripts pass shellcheck as POSIX sh, at every severity (Linaro's
// own check stops at warnings). make test installs shellcheck; go test
// alone skips without it.
func TestTestDefinitionShellcheck(t *testing.T) {
	if _, err := exec.LookPath("shellcheck"); err != nil {
		if os.Getenv("SMCT_E2E") != "1" {
			t.Skip("shellcheck is not installed (apt-get install shellcheck; make test installs it)")
		}
		if err := apt.Ensure(os.Stderr, apt.Need{Program: "shellcheck", Package: "shellcheck"}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command("shellcheck", "-s", "sh", testdefScript, testdefSend).CombinedOutput()
	if err != nil {
		t.Fatalf("shellcheck -s sh: %v\n%s", err, out)
	}
}

// testdefRun is a run of the test definition on a stand-in for the suite
// binary that writes a KTAP and exits with a status.
type testdefRun struct {
	dir, bin string
	ktap     string
	status   int
	// lavaTestCase puts a stand-in for LAVA's lava-test-case on PATH.
	lavaTestCase bool
}

// newTestdefRun copies the definition's directory into a temporary
// checkout, so that its output stays out of the repository.
func newTestdefRun(t *testing.T, ktap string, status int) *testdefRun {
	t.Helper()
	dir := t.TempDir()
	r := &testdefRun{dir: dir, bin: filepath.Join(dir, "bin"), ktap: ktap, status: status, lavaTestCase: true}
	os.MkdirAll(filepath.Join(dir, "repo", "lava"), 0o755)
	os.Mkdir(r.bin, 0o755)
	for _, f := range []string{testdef, testdefScript, testdefSend} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "repo", "lava", filepath.Base(f)), b, 0o755)
	}
	os.WriteFile(filepath.Join(dir, "ktap.in"), []byte(ktap), 0o644)
	os.WriteFile(r.suite(), []byte(`#!/bin/sh
for a; do echo "$a" >>`+filepath.Join(dir, "args")+`; case "$a" in -smct.ktap=*) k=${a#-smct.ktap=} ;; esac; done
echo "the suite's own output"
[ -s `+filepath.Join(dir, "ktap.in")+` ] && cp `+filepath.Join(dir, "ktap.in")+` "$k"
exit `+fmt.Sprint(status)+"\n"), 0o755)
	return r
}

func (r *testdefRun) suite() string { return filepath.Join(r.dir, "suites.test") }

// env is the environment of a run: lava-test-case when asked for, and
// none of LAVA's variables.
func (r *testdefRun) env() []string {
	bin := filepath.Join(r.dir, "nolava")
	if r.lavaTestCase {
		bin = r.bin
		os.WriteFile(filepath.Join(bin, "lava-test-case"), []byte("#!/bin/sh\necho \"$*\" >>"+filepath.Join(r.dir, "cases")+"\n"), 0o755)
	}
	env := []string{"PATH=" + bin + ":/usr/sbin:/usr/bin:/sbin:/bin"}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "PATH=") && !strings.HasPrefix(e, "KMSG=") {
			env = append(env, e)
		}
	}
	return env
}

func posixShell() string {
	if sh, err := exec.LookPath("dash"); err == nil {
		return sh
	}
	return "/bin/sh"
}

// runSh writes the definition's run.sh as LAVA's dispatcher writes it:
// the definition's params and then the job's parameters as shell
// variables, "set -e", with lava-signal: kmsg "export KMSG=true", then
// the steps; LAVA's test shell runs it with "sh -e" in the checkout.
func (r *testdefRun) runSh(t *testing.T, params map[string]string, lavaSignalKmsg bool) string {
	t.Helper()
	data, err := os.ReadFile(testdef)
	if err != nil {
		t.Fatal(err)
	}
	var def struct {
		Params map[string]string
		Run    struct{ Steps []string }
	}
	if err := yaml.Unmarshal(data, &def); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, p := range []map[string]string{def.Params, params} {
		for k, v := range p {
			fmt.Fprintf(&b, "%s='%s'\n", k, v)
		}
	}
	b.WriteString("set -e\n")
	if lavaSignalKmsg {
		b.WriteString("export KMSG=true\n")
	}
	for _, s := range def.Run.Steps {
		b.WriteString(s + "\n")
	}
	f := filepath.Join(r.dir, "run.sh")
	os.WriteFile(f, []byte(b.String()), 0o644)
	return f
}

// lava runs the definition as LAVA would, SUITE the stand-in, and returns
// the lava-test-case calls, the signals printed and result.txt.
func (r *testdefRun) lava(t *testing.T, params map[string]string) (cases, out, results string) {
	t.Helper()
	if params == nil {
		params = map[string]string{}
	}
	params["SUITE"] = r.suite()
	cmd := exec.Command(posixShell(), "-e", r.runSh(t, params, false))
	cmd.Dir = filepath.Join(r.dir, "repo")
	cmd.Env = r.env()
	o, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run.sh: %v\n%s", err, o)
	}
	return r.read("cases"), string(o), r.read(filepath.Join("repo", "lava", "output", "result.txt"))
}

// script runs the script alone, as a lab's user would without LAVA, and
// returns its output, result.txt and exit status.
func (r *testdefRun) script(t *testing.T, args ...string) (out, results string, status int) {
	t.Helper()
	out_ := filepath.Join(r.dir, "out")
	cmd := exec.Command(posixShell(), append([]string{filepath.Join(r.dir, "repo", "lava", "stackmap-conformance.sh"), "-s", r.suite(), "-o", out_}, args...)...)
	cmd.Env = r.env()
	o, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		status = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(o), r.read(filepath.Join("out", "result.txt")), status
}

func (r *testdefRun) read(name string) string {
	b, _ := os.ReadFile(filepath.Join(r.dir, name))
	return string(b)
}

const fiveSpecs = `KTAP version 1
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

// Each spec of the KTAP is a line of result.txt and a LAVA test case: a
// pass, a failure, a skip, and an UNRESOLVED spec (ERROR, TIMEOUT) a
// failure, never a pass; a subtest's lines are not the suite's. A failed
// spec does not stop LAVA's steps before the cases are reported, and the
// script alone exits 1.
func TestTestDefinitionReportsEachSpec(t *testing.T) {
	r := newTestdefRun(t, fiveSpecs, 1)
	want := "default.BASE-ONOFF-01 pass\ndefault.SM-RESET-01 fail\ndefault.SM-BIN-01 skip\ndefault.SM-NODE-01 fail\ndefault.SM-INST-01 fail\n"
	cases, _, results := r.lava(t, map[string]string{"LABELS": "SM-RESET-01 || baseline", "REQUIRE": "stackmap"})
	if results != want {
		t.Errorf("result.txt:\n%s\nwant\n%s", results, want)
	}
	wantCases := strings.ReplaceAll(want, " ", " --result ")
	if cases != wantCases {
		t.Errorf("lava-test-case calls:\n%s\nwant\n%s", cases, wantCases)
	}
	args := r.read("args")
	for _, a := range []string{"-ginkgo.label-filter=SM-RESET-01 || baseline", "-smct.require=stackmap", "-smct.exit-codes=kselftest", "-smct.profile=v4"} {
		if !strings.Contains(args, a+"\n") {
			t.Errorf("the suite's arguments lack %q:\n%s", a, args)
		}
	}
	if strings.Contains(args, "-smct.force") || strings.Contains(args, "-ginkgo.seed") {
		t.Errorf("the suite's arguments have -smct.force or a seed by default:\n%s", args)
	}

	out, results, status := r.script(t, "-f", "true", "-e", "7")
	if status != 1 || results != want || !strings.Contains(out, want) || !strings.Contains(out, "the suite's own output") {
		t.Errorf("the script alone: exit %d, result.txt\n%s\noutput\n%s", status, results, out)
	}
	if args := r.read("args"); !strings.Contains(args, "-smct.force\n") || !strings.Contains(args, "-ginkgo.seed=7\n") {
		t.Errorf("-f true -e 7: the suite's arguments\n%s", args)
	}
}

// The script's exit status: 0 when no spec failed (every one skipped
// included), 1 when one failed or the suite failed outside its specs (a
// case of its own, stackmap-run), 2 without a verdict (the suite's
// kselftest status 5, no KTAP, no suite), with stackmap-run failed.
func TestTestDefinitionStatus(t *testing.T) {
	for name, c := range map[string]struct {
		ktap    string
		status  int
		want    int
		last    string
		noSuite bool
	}{
		"passed":         {"KTAP version 1\n1..1\nok 1 default.BASE-ONOFF-01\n", 0, 0, "default.BASE-ONOFF-01 pass", false},
		"all skipped":    {"KTAP version 1\n1..1\nok 1 default.SM-NODE-01 # SKIP no feature\n", 4, 0, "default.SM-NODE-01 skip", false},
		"failed outside": {"KTAP version 1\n1..1\nok 1 default.BASE-ONOFF-01\n", 1, 1, "stackmap-run fail", false},
		"restore failed": {"KTAP version 1\n1..1\nok 1 default.BASE-ONOFF-01\n# SUITE: tracefs settings differ after restore\n", 5, 2, "stackmap-run fail", false},
		"no KTAP":        {"", 2, 2, "stackmap-run fail", false},
		"no spec ran":    {"KTAP version 1\n1..0\n", 0, 2, "stackmap-run fail", false},
		"no suite":       {"", 0, 2, "stackmap-run fail", true},
		"tracefs in use": {"KTAP version 1\n1..1\n# NO VERDICT: suite: tracefs is in use (instances foo)\nnot ok 1 default # ERROR suite: tracefs is in use (instances foo)\n", 5, 2, "stackmap-run fail", false},
	} {
		r := newTestdefRun(t, c.ktap, c.status)
		if c.noSuite {
			os.Remove(r.suite())
		}
		out, results, status := r.script(t)
		lines := strings.Split(strings.TrimSpace(results), "\n")
		if status != c.want || lines[len(lines)-1] != c.last {
			t.Errorf("%s: exit %d, result.txt\n%s\nwant exit %d, last %q\noutput:\n%s", name, status, results, c.want, c.last, out)
		}
		if name == "tracefs in use" && !strings.Contains(out, "NO VERDICT: the suite exited 5: suite: tracefs is in use (instances foo)\n") {
			t.Errorf("%s: the output does not give the suite's reason:\n%s", name, out)
		}
		if c.want == 2 && !strings.Contains(out, "NO VERDICT: ") {
			t.Errorf("%s: the output does not say why there is no verdict:\n%s", name, out)
		}
		if cases, _, results2 := r.lava(t, nil); results2 != results || strings.Count(cases, "\n") != len(lines) {
			t.Errorf("%s: under LAVA, cases\n%s\nresult.txt\n%s", name, cases, results2)
		}
	}
}

// Outside LAVA's test shell (no lava-test-case), send-to-lava.sh prints
// LAVA's test case signals, measurements with their units.
func TestSendToLAVAWithoutLAVA(t *testing.T) {
	r := newTestdefRun(t, "", 0)
	r.lavaTestCase = false
	f := filepath.Join(r.dir, "result.txt")
	os.WriteFile(f, []byte("default.A-01 pass\ndefault.B-01 fail\ndefault.C-01 skip\nrate pass 99.5 %\nsize pass 4096\nnot a result line\n"), 0o644)
	cmd := exec.Command(posixShell(), testdefSend, f)
	cmd.Env = r.env()
	out, err := cmd.CombinedOutput()
	want := `<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=default.A-01 RESULT=pass>
<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=default.B-01 RESULT=fail>
<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=default.C-01 RESULT=skip>
<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=rate RESULT=pass MEASUREMENT=99.5 UNITS=%>
<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=size RESULT=pass MEASUREMENT=4096>
`
	if err != nil || string(out) != want {
		t.Errorf("send-to-lava.sh: %v\n%s\nwant\n%s", err, out, want)
	}
}

// kmsgWrapper binds a FIFO over /dev/kmsg in the mount namespace of
// unshare, keeps it open for writing so that its reader sees no end
// between writes, and runs run.sh under "sh -e"; the reader copies what
// is written to the log.
const kmsgWrapper = `mkfifo "$1" && mount --bind "$1" /dev/kmsg || exit 9
cat "$1" >"$2" &
exec 3>"$1"
st=0
"$3" -e "$4" || st=$?
exec 3>&-
wait
exit $st
`

// kmsgRun runs run.sh with /dev/kmsg read into a file; it returns the
// output and what was written to /dev/kmsg.
func kmsgRun(t *testing.T, r *testdefRun, unshare []string, runSh string) (out, kmsg string) {
	t.Helper()
	cmd := exec.Command("unshare", append(unshare, posixShell(), "-c", kmsgWrapper, "sh",
		filepath.Join(r.dir, "kmsg.fifo"), filepath.Join(r.dir, "kmsg"), posixShell(), runSh)...)
	cmd.Dir = filepath.Join(r.dir, "repo")
	cmd.Env = r.env()
	o, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, o)
	}
	return string(o), r.read("kmsg")
}

// KMSG: the script's progress and result lines and send-to-lava.sh's
// signals go to /dev/kmsg too, whether the job's parameter or LAVA's
// lava-signal: kmsg sets it; off, nothing does. /dev/kmsg is a FIFO bound
// over it in a mount namespace of the run's own.
func TestTestDefinitionKMSG(t *testing.T) {
	unshare := []string{"-m", "--propagation", "private"}
	if os.Geteuid() != 0 {
		unshare = append([]string{"-r"}, unshare...)
	}
	tmp := filepath.Join(t.TempDir(), "kmsg")
	os.WriteFile(tmp, nil, 0o644)
	if out, err := exec.Command("unshare", append(unshare, "mount", "--bind", tmp, "/dev/kmsg")...).CombinedOutput(); err != nil {
		t.Skipf("cannot bind a file over /dev/kmsg in a mount namespace: %v %s", err, out)
	}
	const ktap = "KTAP version 1\n1..2\nok 1 default.BASE-ONOFF-01\nok 2 default.SM-NODE-01 # SKIP no feature\n"
	for name, lavaSignal := range map[string]bool{"KMSG=true": false, "lava-signal: kmsg": true} {
		r := newTestdefRun(t, ktap, 4)
		r.lavaTestCase = false
		params := map[string]string{"SUITE": r.suite()}
		if !lavaSignal {
			params["KMSG"] = "true"
		}
		out, kmsg := kmsgRun(t, r, unshare, r.runSh(t, params, lavaSignal))
		for _, want := range []string{
			"<0>stackmap-conformance: running " + r.suite(),
			"<0>stackmap-conformance: default.BASE-ONOFF-01 pass\n",
			"<0>stackmap-conformance: default.SM-NODE-01 skip\n",
			"<0>stackmap-conformance: pass:1 fail:0 skip:1, exit status 0\n",
			"<0><LAVA_SIGNAL_TESTCASE TEST_CASE_ID=default.BASE-ONOFF-01 RESULT=pass>\n",
			"<0><LAVA_SIGNAL_TESTCASE TEST_CASE_ID=default.SM-NODE-01 RESULT=skip>\n",
		} {
			if !strings.Contains(kmsg, want) {
				t.Errorf("%s: /dev/kmsg lacks %q:\n%s", name, want, kmsg)
			}
		}
		if strings.Contains(out, "LAVA_SIGNAL") || !strings.Contains(out, "default.BASE-ONOFF-01 pass") {
			t.Errorf("%s: stdout has signals, or not the results:\n%s", name, out)
		}
	}
	r := newTestdefRun(t, ktap, 4)
	r.lavaTestCase = false
	out, kmsg := kmsgRun(t, r, unshare, r.runSh(t, map[string]string{"SUITE": r.suite()}, false))
	if kmsg != "" || !strings.Contains(out, "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=default.BASE-ONOFF-01 RESULT=pass>") {
		t.Errorf("KMSG off: /dev/kmsg %q, output\n%s", kmsg, out)
	}
}
