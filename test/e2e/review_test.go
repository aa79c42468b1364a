// SPDX-License-Identifier: GPL-2.0-only

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/kernels"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=smct e2e", "-c", "user.email=e2e@localhost"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// linuxBase is a git repository of Debian's linux-source-6.12, the base
// the reference kernel's patches apply on, made once and kept in the cache.
// It is only read: walks check out from its objects elsewhere.
func linuxBase(t *testing.T) string {
	t.Helper()
	cache := kernels.CacheDir()
	dir := filepath.Join(cache, "e2e", "linux-6.12")
	if _, err := os.Stat(filepath.Join(dir, ".git", "smct-e2e-done")); err == nil {
		return dir
	}
	// The reference kernel's build unpacks the source; make sure it has.
	if out, err := exec.Command(smct, "-C", rootDir, "kernel", "-arch", "x86_64").CombinedOutput(); err != nil {
		t.Fatalf("smct kernel: %v\n%s", err, out)
	}
	pristine := filepath.Join(cache, "kbuild", "pristine")
	os.RemoveAll(dir)
	os.MkdirAll(filepath.Dir(dir), 0o755)
	if out, err := exec.Command("cp", "-a", pristine, dir).CombinedOutput(); err != nil {
		t.Fatalf("copying %s: %v\n%s", pristine, err, out)
	}
	git(t, dir, "init", "--quiet")
	// Debian's .gitignore ignores the top level: add everything anyway.
	git(t, dir, "add", "--force", "--all")
	git(t, dir, "commit", "--quiet", "-m", "Debian linux-source-6.12")
	os.WriteFile(filepath.Join(dir, ".git", "smct-e2e-done"), nil, 0o644)
	return dir
}

// review runs `smct review args...` with reports in a temporary directory
// and returns its exit status, output and the walk's directory.
func review(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	results := t.TempDir()
	cmd := exec.Command(smct, append([]string{"review", "-results", results}, args...)...)
	cmd.Dir = rootDir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, _ := cmd.Output()
	t.Logf("smct review %s: exit %d\n%s\n%s", strings.Join(args, " "), cmd.ProcessState.ExitCode(), stderr.String(), out)
	dirs, _ := filepath.Glob(filepath.Join(results, "review-*"))
	if len(dirs) != 1 {
		t.Fatalf("review made %d directories, want one", len(dirs))
	}
	return cmd.ProcessState.ExitCode(), string(out), dirs[0]
}

// row is a requirement's cells in series.txt.
func row(t *testing.T, table, id string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(id) + `\s+(.*)$`).FindStringSubmatch(table)
	if m == nil {
		t.Fatalf("series.txt has no row %s:\n%s", id, table)
	}
	return strings.Fields(m[1])
}

// The reference kernel's own patches, walked on Debian's 6.12 source: the
// base has no feature (UNSUPPORTED), the patch that adds the ABI makes it
// pass from there on, the baseline passes throughout, and the walk passes.
func TestReviewWalksTheReferenceSeries(t *testing.T) {
	needBoots(t)
	base := linuxBase(t)
	patches, _ := filepath.Glob(filepath.Join(rootDir, "kernel", "patches", "*.patch"))
	var mbox []byte
	for _, p := range patches {
		data, _ := os.ReadFile(p)
		mbox = append(mbox, data...)
	}
	series := filepath.Join(t.TempDir(), "reference.mbox")
	os.WriteFile(series, mbox, 0o644)

	code, out, dir := review(t, "-series", series, "-tree", base, "-arches", "x86_64")
	if code != 0 {
		t.Fatalf("exit %d, want 0 for a clean walk of a conforming series", code)
	}
	table, err := os.ReadFile(filepath.Join(dir, "series.txt"))
	if err != nil || !strings.Contains(out, string(table)) {
		t.Fatalf("series.txt (%v) is not what was printed", err)
	}
	n := len(patches)
	node := row(t, string(table), "SM-NODE-01")
	if len(node) != n+1 || node[0] != "UNSUP" {
		t.Fatalf("SM-NODE-01 row %q: want %d cells, UNSUP at 0/%d", node, n+1, n)
	}
	appears := -1
	for k, c := range node {
		switch {
		case strings.HasPrefix(c, "PASS") && appears < 0:
			appears = k
			if c != "PASS*" {
				t.Errorf("the patch that brings the feature (%d/%d) is not marked: %q", k, n, c)
			}
		case appears >= 0 && c != "PASS":
			t.Errorf("SM-NODE-01 at %d/%d is %q after the feature appeared at %d/%d", k, n, c, appears, n)
		case appears < 0 && c != "UNSUP":
			t.Errorf("SM-NODE-01 at %d/%d is %q before the feature appeared", k, n, c)
		}
	}
	if appears <= 0 {
		t.Fatalf("the feature never appeared: %q", node)
	}
	for _, c := range row(t, string(table), "BASE-ONOFF-01") {
		if c != "PASS" {
			t.Errorf("BASE-ONOFF-01 row has %q, want PASS throughout", c)
		}
	}
	for _, f := range []string{"series.json", "series-ktap.txt", "evidence-cover.txt", "evidence-patch-1.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the walk wrote no %s", f)
		}
	}

	// The last prefix's tree, as a TREE= run sees it: its kernel is cached.
	src := filepath.Join(kernels.CacheDir(), "review", "src")
	r := qemuTest(t, "-arch", "x86_64", "-tree", src, "-labels", "SM-NODE-01")
	if r.code != 0 || !strings.Contains(r.stdout, "cached build") || !strings.Contains(r.stdout, "clean)") {
		t.Fatalf("TREE= on the walked tree: exit %d, want 0 from a cached build of a clean tree", r.code)
	}

	// Two runs of a tree changed since: both need its build at once. One
	// builds, the other waits for the build lock and finds the kernel.
	file := filepath.Join(src, "kernel", "trace", "trace_output.c")
	orig, _ := os.ReadFile(file)
	defer os.WriteFile(file, orig, 0o644)
	os.WriteFile(file, append([]byte(fmt.Sprintf("/* changed by the e2e test at %d */\n", time.Now().UnixNano())), orig...), 0o644)
	built := 0
	for i, r := range atOnce(t, 2, "-arch", "x86_64", "-tree", src, "-labels", "SM-NODE-01") {
		if r.code != 0 || r.last != "1 passed, 0 failed, 0 skipped" || !strings.Contains(r.stdout, "with uncommitted changes") {
			t.Errorf("run %d at once: exit %d, last line %q; want 1 passed on the changed tree", i, r.code, r.last)
		}
		if strings.Contains(r.stdout, "(built, inputs") {
			built++
		}
	}
	if built != 1 {
		t.Errorf("%d of the two runs built the kernel, want one (the other finds it cached)", built)
	}
}

// A middle patch that does not build fails the walk, named with the
// compiler's error, and the walk goes on with the next prefix.
func TestReviewReportsAPatchThatDoesNotBuild(t *testing.T) {
	needBoots(t)
	base := linuxBase(t)
	work := filepath.Join(t.TempDir(), "linux")
	git(t, "", "clone", "--quiet", "--shared", base, work)
	file := filepath.Join(work, "kernel", "trace", "trace_output.c") // built whenever tracing is
	edit := func(subject, old, new string) {
		data, _ := os.ReadFile(file)
		os.WriteFile(file, []byte(strings.Replace(string(data), old, new, 1)), 0o644)
		git(t, work, "commit", "--quiet", "-am", subject)
	}
	edit("trace: a comment", "#include", "/* walked by the e2e test */\n#include")
	edit("trace: a patch that does not build", "#include", "#error this patch does not build\n#include")
	edit("trace: the fix", "#error this patch does not build\n", "")
	code, out, dir := review(t, "-series", "HEAD~3..HEAD", "-tree", work, "-arches", "x86_64", "-labels", "BASE-ONOFF-01")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	table, _ := os.ReadFile(filepath.Join(dir, "series.txt"))
	// A prefix built before (the base, by another walk) comes from the cache.
	if got := strings.ReplaceAll(strings.Join(row(t, string(table), "build"), " "), "cached", "ok"); got != "ok ok FAIL ok" {
		t.Errorf("build row %q, want ok ok FAIL ok", got)
	}
	if got := row(t, string(table), "verdict"); strings.Join(got, " ") != "ok ok FAIL ok" {
		t.Errorf("verdict row %q, want ok ok FAIL ok", got)
	}
	if !strings.Contains(out, "2/3 x86_64: does not build") || !strings.Contains(out, "this patch does not build") {
		t.Errorf("the problems do not name the patch and the compiler's error:\n%s", out)
	}
}
