// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/buildlock"
)

// Every command names its run directory the same way, and latest points
// at the newest.
func TestNewRunDirNames(t *testing.T) {
	for _, tc := range []struct{ kind, arch, want string }{
		{"", "arm64", `^\d{8}-\d{6}-arm64$`},
		{"", "sparc", `^\d{8}-\d{6}-unknown-arch$`},
		{"mutants", "x86_64", `^mutants-\d{8}-\d{6}-x86_64$`},
		{"matrix", "", `^matrix-\d{8}-\d{6}$`},
		{"review", "", `^review-\d{8}-\d{6}$`},
		{"bench", "", `^bench-\d{8}-\d{6}$`},
	} {
		parent := t.TempDir()
		dir, err := NewRunDir(parent, tc.kind, tc.arch)
		if err != nil {
			t.Fatal(err)
		}
		if name := filepath.Base(dir); !regexp.MustCompile(tc.want).MatchString(name) {
			t.Errorf("NewRunDir(%q, %q) = %s, want %s", tc.kind, tc.arch, name, tc.want)
		}
		if target, err := os.Readlink(filepath.Join(parent, "latest")); err != nil || target != filepath.Base(dir) {
			t.Errorf("latest -> %q (%v), want %s", target, err, filepath.Base(dir))
		}
	}
}

// Runs side by side in one parent get directories of their own and must
// not fail on each other's latest link.
func TestNewRunDirSideBySide(t *testing.T) {
	parent := t.TempDir()
	var wg sync.WaitGroup
	dirs := make([]string, 8)
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dirs[i], errs[i] = NewRunDir(parent, "", "arm64")
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
		if seen[dirs[i]] {
			t.Errorf("%s given twice", dirs[i])
		}
		seen[dirs[i]] = true
	}
	target, err := os.Readlink(filepath.Join(parent, "latest"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(parent, target)); err != nil {
		t.Errorf("latest -> %s: %v", target, err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(parent, ".latest-*")); len(leftovers) > 0 {
		t.Errorf("temporary links left: %v", leftovers)
	}
}

// Boots ending side by side each add their console whole.
func TestConsoleKeepsBootsWhole(t *testing.T) {
	dir := t.TempDir()
	c := NewConsole(dir)
	var wg sync.WaitGroup
	for _, name := range []string{"a", "b", "c", "d"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Add(name, "qemu "+name, []byte(strings.Repeat(name+" line\n", 2000))); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	data, err := os.ReadFile(filepath.Join(dir, "console.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range strings.Split(string(data), "===== boot ")[1:] {
		name := part[:1]
		if want := name + ": qemu " + name + " =====\n" + strings.Repeat(name+" line\n", 2000); part != want {
			t.Errorf("boot %s's console is not whole", name)
		}
	}
}

func TestRerunAndCommand(t *testing.T) {
	dir := t.TempDir()
	cmd := []string{"qemu-system-x86_64", "-append", "console=ttyS0 panic=-1"}
	if err := WriteRerun(dir, "Boots default of this run again, as it was made.", cmd); err != nil {
		t.Fatal(err)
	}
	if err := WriteQEMUCommand(dir, cmd); err != nil {
		t.Fatal(err)
	}
	script, _ := os.ReadFile(filepath.Join(dir, "rerun.sh"))
	want := "#!/bin/sh\n# Boots default of this run again, as it was made.\nexec qemu-system-x86_64 -append 'console=ttyS0 panic=-1'\n"
	if string(script) != want {
		t.Errorf("rerun.sh = %q, want %q", script, want)
	}
	if fi, err := os.Stat(filepath.Join(dir, "rerun.sh")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("rerun.sh not executable: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "qemu-command.txt")); string(got) != "qemu-system-x86_64 -append 'console=ttyS0 panic=-1'\n" {
		t.Errorf("qemu-command.txt = %q", got)
	}
}

// A report that cannot be written (here a directory in the way of
// summary.txt) leaves the run without a verdict: the error names the
// file, and the reports that can still be written say so.
func TestReportNotWrittenIsNoVerdict(t *testing.T) {
	t.Setenv(KCIDBOriginEnv, "")
	res := result(pass)
	res.Dir = t.TempDir()
	if err := os.Mkdir(filepath.Join(res.Dir, SummaryFile), 0o755); err != nil {
		t.Fatal(err)
	}
	summary, err := Write(res)
	t.Logf("error: %v", err)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(res.Dir, SummaryFile)) {
		t.Fatalf("Write() = %v, want an error naming %s", err, SummaryFile)
	}
	verdict, _ := os.ReadFile(filepath.Join(res.Dir, VerdictFile))
	t.Logf("%s: %s", VerdictFile, verdict)
	if res.ExitCode() != 2 || !strings.HasPrefix(string(verdict), "NO VERDICT: writing the reports: ") ||
		!strings.Contains(string(verdict), SummaryFile) || !strings.Contains(summary, "\nNO VERDICT: writing the reports: ") {
		t.Errorf("exit %d, %s %q; want 2 and no verdict naming %s, in the summary too", res.ExitCode(), VerdictFile, verdict, SummaryFile)
	}
}

// results/ keeps the newest runs, a matrix's or mutants' directory one run
// whatever it holds; the run latest points at stays, and so does a run a
// process still makes; what is not a run is not touched.
func TestPruneRunsKeepsTheNewest(t *testing.T) {
	parent := t.TempDir()
	runs := []string{"20260101-100000-arm64", "mutants-20260101-110000-x86_64", "matrix-20260101-120000",
		"20260101-130000-arm64", "20260101-130000-arm64.2", "review-20260101-140000", "lava-job-20260101-150000-x86_64"}
	for _, r := range runs {
		os.MkdirAll(filepath.Join(parent, r, "inner-20260101-120000-arm64"), 0o755)
	}
	os.Mkdir(filepath.Join(parent, "notes"), 0o755)
	os.Symlink(runs[0], filepath.Join(parent, "latest"))
	if err := buildlock.Share(filepath.Join(parent, runs[3])); err != nil {
		t.Fatal(err)
	}
	removed, err := PruneRuns(parent, 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{runs[4], runs[2], runs[1]}; !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	left, _ := Runs(parent)
	if want := []string{runs[6], runs[5], runs[3], runs[0]}; !slices.Equal(left, want) {
		t.Errorf("left %v, want %v (the newest two, a run in the making and latest's)", left, want)
	}
	if _, err := os.Stat(filepath.Join(parent, "notes")); err != nil {
		t.Errorf("a directory that is not a run went: %v", err)
	}
	if removed, _ := PruneRuns(parent, 0); len(removed) > 0 {
		t.Errorf("KEEP_RUNS=0 removed %v", removed)
	}
}

// The run this process makes stays, even when newer ones are kept and
// latest points elsewhere.
func TestPruneRunsKeepsTheNewRun(t *testing.T) {
	parent := t.TempDir()
	dir, err := NewRunDir(parent, "", "arm64")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"29991231-235958-arm64", "29991231-235959-arm64"} {
		os.Mkdir(filepath.Join(parent, r), 0o755)
	}
	os.Remove(filepath.Join(parent, "latest"))
	if _, err := PruneRuns(parent, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("the new run went: %v", err)
	}
	if _, err := os.Stat(filepath.Join(parent, "29991231-235958-arm64")); err == nil {
		t.Errorf("a run beyond the newest stayed")
	}
}

func TestKeepRuns(t *testing.T) {
	for v, want := range map[string]int{"": DefaultKeepRuns, "0": 0, "7": 7} {
		t.Setenv("KEEP_RUNS", v)
		if n, err := KeepRuns(); err != nil || n != want {
			t.Errorf("KEEP_RUNS=%s: %d, %v; want %d", v, n, err, want)
		}
	}
	for _, v := range []string{"-1", "many"} {
		t.Setenv("KEEP_RUNS", v)
		if _, err := KeepRuns(); err == nil {
			t.Errorf("KEEP_RUNS=%s accepted", v)
		}
	}
}
