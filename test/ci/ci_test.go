// SPDX-License-Identifier: GPL-2.0-only

// Package ci checks ci.yml, the GitHub Actions workflow, against the
// project: a lock entry without its CI cells, a make target that is gone
// or a b4 recipe that does not validate fails here, not on GitHub.
package ci

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"gopkg.in/yaml.v3"

	"github.com/ftrace-stackmap/conformance/internal/cachelimit"
	"github.com/ftrace-stackmap/conformance/internal/kernels/images"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kbuild"
)

const root = "../.."

// step is one step of a job as actionlint parsed it, its strings unwrapped.
type step struct {
	Run, Uses, If string
	With          map[string]string
}

// job is a job's steps and, for a matrix job, its fail-fast and its matrix
// in the form GitHub's expansion (cells) reads.
type job struct {
	Steps    []step
	FailFast *bool
	Matrix   map[string]any
}

// read parses ci.yml with actionlint's parser, the one its checks use.
func read(t *testing.T) map[string]job {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "ci.yml"))
	if err != nil {
		t.Fatal(err)
	}
	w, errs := actionlint.Parse(data)
	if len(errs) > 0 {
		t.Fatalf("ci.yml: %v", errs[0])
	}
	jobs := map[string]job{}
	for name, j := range w.Jobs {
		var out job
		for _, s := range j.Steps {
			st := step{If: str(s.If), With: map[string]string{}}
			switch e := s.Exec.(type) {
			case *actionlint.ExecRun:
				st.Run = str(e.Run)
			case *actionlint.ExecAction:
				st.Uses = str(e.Uses)
				for k, in := range e.Inputs {
					st.With[k] = str(in.Value)
				}
			}
			out.Steps = append(out.Steps, st)
		}
		if j.Strategy != nil {
			if j.Strategy.FailFast != nil {
				v := j.Strategy.FailFast.Value
				out.FailFast = &v
			}
			out.Matrix = matrixOf(j.Strategy.Matrix)
		}
		jobs[name] = out
	}
	for _, name := range []string{"test", "conformance"} {
		if _, ok := jobs[name]; !ok {
			t.Fatalf("ci.yml has no job %q", name)
		}
	}
	return jobs
}

func str(s *actionlint.String) string {
	if s == nil {
		return ""
	}
	return s.Value
}

// matrixOf turns actionlint's matrix into lists and selections of plain
// values, for cells.
func matrixOf(m *actionlint.Matrix) map[string]any {
	out := map[string]any{}
	if m == nil {
		return out
	}
	for name, row := range m.Rows {
		var vs []any
		for _, v := range row.Values {
			vs = append(vs, raw(v))
		}
		out[name] = vs
	}
	for key, cs := range map[string]*actionlint.MatrixCombinations{"include": m.Include, "exclude": m.Exclude} {
		if cs == nil {
			continue
		}
		var list []any
		for _, c := range cs.Combinations {
			sel := map[string]any{}
			for k, a := range c.Assigns {
				sel[k] = raw(a.Value)
			}
			list = append(list, sel)
		}
		out[key] = list
	}
	return out
}

// raw is a scalar's text (other values as actionlint prints them).
func raw(v actionlint.RawYAMLValue) any {
	if s, ok := v.(*actionlint.RawYAMLString); ok {
		return s.Value
	}
	return v.String()
}

func TestTheTestJobRunsTheCIScript(t *testing.T) {
	if !slices.ContainsFunc(read(t)["test"].Steps, func(s step) bool { return strings.TrimSpace(s.Run) == ".ci/run" }) {
		t.Errorf("job test does not run .ci/run")
	}
}

// TestTheMatrixIsTheLock: one cell per images.lock entry and arch, no more.
func TestTheMatrixIsTheLock(t *testing.T) {
	c := read(t)["conformance"]
	if c.FailFast == nil || *c.FailFast {
		t.Errorf("conformance: want fail-fast: false, so one cell does not cancel the others")
	}
	cs, err := cells(c.Matrix)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cs {
		got = append(got, c["image"]+"/"+c["arch"])
	}
	lock, err := images.Read(filepath.Join(root, "images.lock"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range lock.Entries {
		for arch := range e.Arches {
			want = append(want, e.Name+"/"+arch)
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	for _, p := range want {
		if !slices.Contains(got, p) {
			t.Errorf("ci.yml's conformance matrix lacks %s (an images.lock entry and arch)", p)
		}
	}
	for _, p := range got {
		if !slices.Contains(want, p) {
			t.Errorf("ci.yml's conformance matrix has %s, which images.lock does not", p)
		}
	}
	if d := len(got) - len(slices.Compact(slices.Clone(got))); d > 0 {
		t.Errorf("ci.yml's conformance matrix repeats cells: %v", got)
	}
}

// cachedDirs are what the jobs cache: the areas the cache's table marks
// as kept by CI (built kernels, unpacked vmlinux, fetched images, ccache);
// never the build trees (kbuild, treebuild), gigabytes each, against the
// repository's cache limit.
func cachedDirs() []string {
	var out []string
	for _, n := range cachelimit.KeptByCI() {
		out = append(out, string(n))
	}
	return out
}

// cachesKernels: a restore before the runs and a save after them even when
// they fail, of the same key, with only the cached directories.
func cachesKernels(t *testing.T, name string, steps []step) {
	t.Helper()
	var restore, save *step
	for i, s := range steps {
		switch s.Uses {
		case "actions/cache@v4":
			t.Errorf("%s: actions/cache saves only on success: restore and save apart", name)
		case "actions/cache/restore@v4":
			restore = &steps[i]
		case "actions/cache/save@v4":
			save = &steps[i]
		}
	}
	if restore == nil || save == nil {
		t.Fatalf("%s: want actions/cache/restore@v4 and actions/cache/save@v4", name)
	}
	if !strings.Contains(restore.With["key"], "hashFiles('images.lock'") {
		t.Errorf("%s: cache key %q does not follow images.lock", name, restore.With["key"])
	}
	if !strings.HasPrefix(save.If, "always()") || !strings.Contains(save.With["key"], "cache-primary-key") {
		t.Errorf("%s: the save (if %q, key %q) must run after a failure too, under the key the restore looked for", name, save.If, save.With["key"])
	}
	for _, st := range []*step{restore, save} {
		var dirs []string
		for _, p := range strings.Fields(st.With["path"]) {
			dir, ok := strings.CutPrefix(p, "~/.cache/stackmap-conformance/")
			if !ok || !slices.Contains(cachedDirs(), dir) {
				t.Errorf("%s: %s caches %s: want only %v under ~/.cache/stackmap-conformance", name, st.Uses, p, cachedDirs())
			}
			dirs = append(dirs, dir)
		}
		for _, d := range cachedDirs() {
			if !slices.Contains(dirs, d) {
				t.Errorf("%s: %s does not cache %s", name, st.Uses, d)
			}
		}
	}
}

func TestCaches(t *testing.T) {
	for name, j := range read(t) {
		cachesKernels(t, name, j.Steps)
	}
}

func TestTheConformanceCellsRunAndKeepTheSuite(t *testing.T) {
	steps := read(t)["conformance"].Steps
	has := func(what string, f func(step) bool) {
		if !slices.ContainsFunc(steps, f) {
			t.Errorf("conformance: no step %s", what)
		}
	}
	has("running make qemu-test for the cell", func(s step) bool {
		return strings.TrimSpace(s.Run) == "make qemu-test ARCH=${{ matrix.arch }} IMAGE=${{ matrix.image }}"
	})
	has("resolving results/latest to the run directory, always", func(s step) bool {
		return s.If == "always()" && strings.Contains(s.Run, "readlink -e results/latest") && strings.Contains(s.Run, "GITHUB_OUTPUT")
	})
	has("uploading the run directory itself (not the results/latest link), always", func(s step) bool {
		return s.Uses == "actions/upload-artifact@v4" && s.If == "always()" && s.With["path"] == "${{ steps.results.outputs.dir }}"
	})
	has("showing junit.xml as a check, always", func(s step) bool {
		return strings.HasPrefix(s.Uses, "mikepenz/action-junit-report@") && s.If == "always()" &&
			s.With["report_paths"] == "${{ steps.results.outputs.dir }}/junit.xml"
	})
	has("writing the summary into the step summary as a fenced block, always", func(s step) bool {
		return s.If == "always()" && strings.Contains(s.Run, "GITHUB_STEP_SUMMARY") &&
			strings.Count(s.Run, "echo '```'") == 2 && strings.Contains(s.Run, "summary.txt")
	})
}

// TestWorkflowSettings: superseded runs are cancelled, the JUnit check may
// be written, and /dev/kvm reaches the containers where the runner has it.
func TestWorkflowSettings(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "ci.yml"))
	if err != nil {
		t.Fatal(err)
	}
	w, errs := actionlint.Parse(data)
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	c := w.Concurrency
	if c == nil || c.CancelInProgress == nil || !c.CancelInProgress.Value || !strings.Contains(str(c.Group), "github.ref") {
		t.Errorf("want concurrency: a group per ref, cancel-in-progress: true")
	}
	for name, j := range w.Jobs {
		if j.Container == nil || j.Container.Options == nil || !strings.Contains(j.Container.Options.Value, "--privileged") {
			t.Errorf("job %s: want container options --privileged, so /dev/kvm is passed where the runner has it", name)
		}
	}
	if p := w.Jobs["conformance"].Permissions; p == nil || p.Scopes["checks"] == nil || p.Scopes["checks"].Value.Value != "write" {
		t.Errorf("job conformance: want permissions checks: write for the JUnit check run")
	}
}

// TestStepsCallOnlyMakeTargetsThatExist, in the workflow and in the
// scripts it runs.
func TestStepsCallOnlyMakeTargetsThatExist(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([A-Za-z0-9_-]+(?:[ \t]+[A-Za-z0-9_-]+)*)[ \t]*:(?:[^=]|$)`).FindAllStringSubmatch(string(mk), -1) {
		for _, name := range strings.Fields(m[1]) {
			targets[name] = true
		}
	}
	if !targets["qemu-test"] {
		t.Fatalf("read no targets from the Makefile (%v)", targets)
	}
	calls := 0
	for name, j := range read(t) {
		for _, s := range j.Steps {
			for _, c := range makeCalls(s.Run) {
				calls++
				for _, target := range c {
					if !targets[target] {
						t.Errorf("job %s runs `make %s`: the Makefile has no target %q", name, strings.Join(c, " "), target)
					}
				}
			}
		}
	}
	if calls < 2 {
		t.Errorf("found %d make calls, want make qemu-test and .ci/run's make test", calls)
	}
}

// makeCalls are the targets of each make command in a shell script, and
// in the project's scripts it runs.
func makeCalls(script string) [][]string {
	var calls [][]string
	// ${{ expr }} holds spaces; it is one word to the shell.
	script = regexp.MustCompile(`\$\{\{[^}]*\}\}`).ReplaceAllString(script, "EXPR")
	for _, line := range strings.Split(script, "\n") {
		line, _, _ = strings.Cut(line, "#")
		for _, cmd := range regexp.MustCompile(`&&|\|\||;|\|`).Split(line, -1) {
			f := strings.Fields(cmd)
			switch {
			case len(f) == 0:
			case f[0] == "make":
				var targets []string
				for _, a := range f[1:] {
					if !strings.HasPrefix(a, "-") && !strings.Contains(a, "=") {
						targets = append(targets, a)
					}
				}
				calls = append(calls, targets)
			case strings.HasPrefix(f[0], "./") || strings.HasPrefix(f[0], ".ci/"):
				if sub, err := os.ReadFile(filepath.Join(root, f[0])); err == nil {
					calls = append(calls, makeCalls(string(sub))...)
				}
			}
		}
	}
	return calls
}

// cells expands a matrix as GitHub does: the product of its lists, less
// exclude, plus include (which extends the cells it matches, or adds one).
func cells(m map[string]any) ([]map[string]string, error) {
	var keys []string
	for k := range m {
		if k != "include" && k != "exclude" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := []map[string]string{{}}
	for _, k := range keys {
		vs, ok := m[k].([]any)
		if !ok {
			return nil, fmt.Errorf("matrix %s: %v is not a literal list", k, m[k])
		}
		var next []map[string]string
		for _, c := range out {
			for _, v := range vs {
				n := map[string]string{k: fmt.Sprint(v)}
				for ck, cv := range c {
					n[ck] = cv
				}
				next = append(next, n)
			}
		}
		out = next
	}
	matches := func(c map[string]string, sel map[string]any) bool {
		for k, v := range sel {
			if slices.Contains(keys, k) && c[k] != fmt.Sprint(v) {
				return false
			}
		}
		return true
	}
	list := func(name string) []map[string]any {
		var l []map[string]any
		raw, _ := m[name].([]any)
		for _, r := range raw {
			if mm, ok := r.(map[string]any); ok {
				l = append(l, mm)
			}
		}
		return l
	}
	for _, ex := range list("exclude") {
		out = slices.DeleteFunc(out, func(c map[string]string) bool { return matches(c, ex) })
	}
	if len(keys) == 0 {
		out = nil
	}
	for _, in := range list("include") {
		added := false
		for _, c := range out {
			if matches(c, in) {
				for k, v := range in {
					c[k] = fmt.Sprint(v)
				}
				added = true
			}
		}
		if !added {
			n := map[string]string{}
			for k, v := range in {
				n[k] = fmt.Sprint(v)
			}
			out = append(out, n)
		}
	}
	return out, nil
}

func TestCellsExpandsLikeGitHub(t *testing.T) {
	var m map[string]any
	yaml.Unmarshal([]byte(`{image: [a, b], arch: [arm64, x86_64], exclude: [{image: b, arch: arm64}], include: [{image: c, arch: arm64}, {image: a, runner: big}]}`), &m)
	cs, err := cells(m)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cs {
		got = append(got, c["image"]+"/"+c["arch"]+"/"+c["runner"])
	}
	sort.Strings(got)
	if want := "a/arm64/big a/x86_64/big b/x86_64/ c/arm64/"; strings.Join(got, " ") != want {
		t.Errorf("cells = %v, want %s", got, want)
	}
}

// TestB4RowsValidate: every b4 entry the matrix builds has a recipe that
// checks offline (form, and fragments present in kernel/config).
func TestB4RowsValidate(t *testing.T) {
	lock, err := images.Read(filepath.Join(root, "images.lock"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, e := range lock.Entries {
		if e.Kind == images.KindB4 {
			n++
			if err := kbuild.Check(&lock.Entries[i], filepath.Join(root, "kernel")); err != nil {
				t.Error(err)
			}
		}
	}
	if n == 0 {
		t.Errorf("images.lock has no b4 entry")
	}
}

// TestActionlint runs actionlint's checks (syntax, expressions, the inputs
// of known actions); shellcheck and pyflakes are left out.
func TestActionlint(t *testing.T) {
	path := filepath.Join(root, "ci.yml")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lint := func(src []byte) []*actionlint.Error {
		l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		errs, err := l.Lint("ci.yml", src, nil)
		if err != nil {
			t.Fatal(err)
		}
		return errs
	}
	for _, e := range lint(src) {
		t.Errorf("ci.yml:%d:%d: %s [%s]", e.Line, e.Column, e.Message, e.Kind)
	}
	// And it does look: an input upload-artifact does not have.
	if errs := lint([]byte(strings.Replace(string(src), "if-no-files-found:", "if-no-file-found:", 1))); len(errs) == 0 {
		t.Errorf("actionlint found nothing wrong with a misspelt input")
	}
}
