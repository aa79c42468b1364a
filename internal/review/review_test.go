// SPDX-License-Identifier: GPL-2.0-only

package review

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/claims"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// mail is one message of an mbox, as git format-patch writes it.
func mail(subject, body string) string {
	return "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n" +
		"From: A U Thor <author@example.org>\nDate: Thu, 1 Jan 2026 00:00:00 +0000\n" +
		"Subject: " + subject + "\n\n" + body + "\n"
}

func diff(file string) string {
	return "---\n diff --git a/" + file + " b/" + file + "\n--- a/" + file + "\n+++ b/" + file + "\n@@ -1 +1 @@\n-a\n+b\n"
}

// A saved thread holds the cover letter and the patches in any order; the
// walk needs the patches alone, in their [PATCH k/N] order.
func TestSplitOrdersPatchesAndDropsTheCover(t *testing.T) {
	mbox := mail("[PATCH v5 2/2] second", "two\n"+strings.Replace(diff("b.c"), "---\n diff", "---\n\ndiff", 1)) +
		mail("[PATCH v5 0/2] the cover letter", "no diff here") +
		mail("[PATCH v5 1/2] first\n which goes on", "one\n"+strings.Replace(diff("a.c"), "---\n diff", "---\n\ndiff", 1))
	patches, err := Split([]byte(mbox))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range patches {
		got = append(got, p.Subject)
	}
	if want := []string{"first which goes on", "second"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("subjects %q, want %q", got, want)
	}
	if _, err := Split([]byte(mail("[PATCH 0/1] cover", "nothing"))); err == nil {
		t.Errorf("an mbox without a diff split into patches")
	}
}

func classes(pairs ...string) map[string]contract.Class {
	m := map[string]contract.Class{}
	for i := 0; i < len(pairs); i += 2 {
		m[pairs[i]] = contract.Class(pairs[i+1])
	}
	return m
}

// walkOf makes a walk of one arch from its steps' classes; nil is a step
// that did not build.
func walkOf(cls ...map[string]contract.Class) *Walk {
	w := &Walk{Series: Series{Name: "t.mbox", Base: "HEAD"}, Arches: []string{"x86_64"}, Steps: map[string][]*Step{}}
	for k, c := range cls {
		if k > 0 {
			w.Series.Patches = append(w.Series.Patches, Patch{Subject: fmt.Sprintf("patch %d", k)})
		}
		st := &Step{K: k, Arch: "x86_64", Build: "ok", Boot: "ok", Classes: c}
		if c == nil {
			st.Build, st.Boot = "kernel/trace/x.c:1:1: error: oops", ""
			st.Problems = []string{"does not build: " + st.Build}
		}
		w.Steps["x86_64"] = append(w.Steps["x86_64"], st)
	}
	judge(w.Steps["x86_64"], len(cls)-1)
	return w
}

func TestJudgeBlamesThePatchThatBrokeSomething(t *testing.T) {
	w := walkOf(
		classes("BASE-ONOFF-01", "PASS", "SM-NODE-01", "UNSUPPORTED"),
		classes("BASE-ONOFF-01", "PASS", "SM-NODE-01", "PASS"),
		nil,
		classes("BASE-ONOFF-01", "FAIL", "SM-NODE-01", "UNSUPPORTED"),
		classes("BASE-ONOFF-01", "PASS", "SM-NODE-01", "PASS"),
	)
	steps := w.Steps["x86_64"]
	for k, want := range []string{"", "", "does not build", "SM-NODE-01 passed at 1/4, UNSUPPORTED here", ""} {
		got := strings.Join(steps[k].Problems, "; ")
		if want == "" && got != "" || !strings.Contains(got, want) {
			t.Errorf("%d/4: problems %q, want %q", k, got, want)
		}
	}
	if !strings.Contains(strings.Join(steps[3].Problems, "; "), "BASE-ONOFF-01 FAIL") {
		t.Errorf("3/4: a failing BASE spec not named: %q", steps[3].Problems)
	}
	if w.ExitCode() != 1 {
		t.Errorf("exit %d, want 1", w.ExitCode())
	}
	steps[2].Problems = append(steps[2].Problems, strings.Repeat("a long reason ", 12))
	for _, text := range []string{w.Text(), w.Evidence(0), w.Evidence(2), w.Evidence(3)} {
		for i, l := range strings.Split(text, "\n") {
			if len(l) > report.Width {
				t.Errorf("line %d is %d columns: %q", i+1, len(l), l)
			}
		}
	}
	clean := walkOf(classes("SM-NODE-01", "UNSUPPORTED"), classes("SM-NODE-01", "PASS"))
	if clean.ExitCode() != 0 {
		t.Errorf("a clean walk: exit %d, problems %q", clean.ExitCode(), clean.Steps["x86_64"][1].Problems)
	}
}

// A git range names its base and its patches in the tree itself.
func TestReadSeriesFromARange(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.org"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "--quiet")
	for i, name := range []string{"base", "one", "two"} {
		os.WriteFile(filepath.Join(dir, "f"), []byte(name), 0o644)
		run("add", "f")
		run("commit", "--quiet", "-m", name)
		if i == 0 {
			run("tag", "v1")
		}
	}
	s, err := ReadSeries("v1..HEAD", dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if s.Base != "v1" || len(s.Patches) != 2 || s.Patches[0].Subject != "one" || s.Patches[1].Subject != "two" {
		t.Errorf("series %+v", s)
	}
	if _, err := ReadSeries("nosuch", dir, ""); err == nil || !strings.Contains(err.Error(), "want a git range") {
		t.Errorf("a series that is nothing: %v", err)
	}
}

// A series that never brings the feature is not a conforming one.
func TestASeriesWithoutTheFeatureFails(t *testing.T) {
	w := walkOf(classes("SM-NODE-01", "UNSUPPORTED"), classes("SM-NODE-01", "UNSUPPORTED"))
	if w.ExitCode() != 1 || !strings.Contains(strings.Join(w.Steps["x86_64"][1].Problems, ";"), "no stackmap feature") {
		t.Errorf("exit %d, problems %q", w.ExitCode(), w.Steps["x86_64"][1].Problems)
	}
}

// A patch is shown the compiler's warnings in the files it touches, not
// those of the rest of the tree.
func TestWarningsInTheFilesAPatchTouches(t *testing.T) {
	dir := t.TempDir()
	src := "/cache/review/src"
	log := filepath.Join(dir, "build.log")
	os.WriteFile(log, []byte(strings.Join([]string{
		"  CC      kernel/trace/trace_stackmap.o",
		src + "/kernel/trace/trace_stackmap.c:120:7: warning: unused variable 'n' [-Wunused-variable]",
		src + "/kernel/trace/trace_stackmap.c:120:7: warning: unused variable 'n' [-Wunused-variable]",
		"../../review/src/kernel/sched/core.c:10:1: warning: not this patch's",
		"kernel/trace/trace.c:5:2: warning: a relative path [-Wfoo]",
	}, "\n")), 0o644)
	p := Patch{Mbox: []byte("diff --git a/kernel/trace/trace_stackmap.c b/kernel/trace/trace_stackmap.c\n+x\ndiff --git a/kernel/trace/trace.c b/kernel/trace/trace.c\n")}
	got := warningsIn(log, src, touched(p))
	want := []string{
		"kernel/trace/trace_stackmap.c:120:7: warning: unused variable 'n' [-Wunused-variable]",
		"kernel/trace/trace.c:5:2: warning: a relative path [-Wfoo]",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("warnings %q, want %q", got, want)
	}
}

// Two versions' claims side by side: the win of each, and a claim one
// version could not measure.
func TestCompareClaims(t *testing.T) {
	rep := func(value float64, st claims.Status) *claims.Report {
		events := fmt.Sprintf("%.2f", value)
		return &claims.Report{Claims: []claims.Claim{
			{ID: "retention.events", Measured: events + "x", Value: value, Unit: "x", Status: st},
			{ID: "pool.bits14", Measured: "8.4 MB", Value: 8.4, Unit: "MB", Status: claims.Reproduced},
		}}
	}
	walk := func(name string, r *claims.Report) *Walk {
		return &Walk{Series: Series{Name: name}, Arches: []string{"arm64"},
			Steps: map[string][]*Step{"arm64": {{K: 0}, {K: 1, Claims: r}}}}
	}
	out := CompareClaims(walk("v3", rep(1, claims.NotReproduced)), walk("v4", rep(2.74, claims.Reproduced)))
	for _, want := range []string{"v3 against v4", "retention.events     1.00x NOT", "2.74x ok", "8.4 MB ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("comparison lacks %q:\n%s", want, out)
		}
	}
	if CompareClaims(walk("v3", nil), walk("v4", nil)) != "" {
		t.Error("a comparison of walks without claims")
	}
}
