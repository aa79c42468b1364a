// SPDX-License-Identifier: GPL-2.0-only

package kbuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/kernels/images"
	"github.com/ftrace-stackmap/conformance/internal/progress"
)

var arm64 = arch.MustLookup("arm64")

func entry() *images.Entry {
	return &images.Entry{Name: "t", Kind: images.KindB4, Tree: "https://git.example.org/linux.git", Base: "v1",
		MessageID: "1.2-1-someone@example.org", SeriesVersion: 2, Config: []string{"common"},
		Arches: map[string]images.ArchImage{"arm64": {}, "x86_64": {}}}
}

func TestCheckNeedsTheFragments(t *testing.T) {
	if err := Check(entry(), "../../../kernel"); err != nil {
		t.Fatal(err)
	}
	e := entry()
	e.Config = []string{"common", "nosuch"}
	if err := Check(e, "../../../kernel"); err == nil || !strings.Contains(err.Error(), "nosuch.config") {
		t.Errorf("missing fragment: %v", err)
	}
	e = entry()
	e.MessageID = "<1.2@example.org>"
	if err := Check(e, "../../../kernel"); err == nil || !strings.Contains(err.Error(), "message_id") {
		t.Errorf("bad message-id: %v", err)
	}
	e = entry()
	e.Kind = images.KindBuild
	if err := Check(e, "../../../kernel"); err == nil {
		t.Errorf("a build entry passed as b4")
	}
	if got := Fragments(entry(), "arm64", "k"); strings.Join(got, " ") != "k/config/common.config k/config/arm64.config" {
		t.Errorf("Fragments = %v", got)
	}
}

func TestUnreachableTreeIsNamed(t *testing.T) {
	_, err := fetchTree(filepath.Join(t.TempDir(), "src"), "https://git.invalid/linux.git", "v1")
	t.Log(err)
	if err == nil || !strings.Contains(err.Error(), "cannot reach https://git.invalid/linux.git to fetch v1") {
		t.Fatalf("fetchTree: %v", err)
	}
}

// fakeB4 puts a b4 on PATH that runs script.
func fakeB4(t *testing.T, script string) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "b4"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
}

func TestUnreachableLoreIsNamed(t *testing.T) {
	fakeB4(t, `echo "Grabbing thread from lore.kernel.org/all/x/t.mbox.gz" >&2
echo "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='lore.kernel.org', port=443): Max retries exceeded (Caused by NewConnectionError('Failed to establish a new connection: [Errno -2] Name or service not known'))" >&2
exit 1`)
	err := fetchSeries("1.2-1-someone@example.org", 2, filepath.Join(t.TempDir(), "mbox"))
	want := "cannot reach lore.kernel.org to fetch the series 1.2-1-someone@example.org (v2): Name or service not known"
	if err == nil || err.Error() != want {
		t.Fatalf("fetchSeries: %v\nwant: %s", err, want)
	}
}

func gitOK(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := git(dir, append([]string{"-c", "user.name=t", "-c", "user.email=t@example.org"}, args...)...)
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(out)
}

// TestPrepare fetches a local tree by tag and by commit and applies a
// series that a fake b4 hands out, as the real one would from lore.
func TestPrepare(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	up := t.TempDir()
	gitOK(t, "", "init", "--quiet", up)
	os.WriteFile(filepath.Join(up, "Makefile"), []byte("all:\n"), 0o644)
	gitOK(t, up, "add", "Makefile")
	gitOK(t, up, "commit", "--quiet", "-m", "base")
	gitOK(t, up, "tag", "v1")
	base := gitOK(t, up, "rev-parse", "HEAD")
	os.WriteFile(filepath.Join(up, "feature.c"), []byte("int feature;\n"), 0o644)
	gitOK(t, up, "add", "feature.c")
	gitOK(t, up, "commit", "--quiet", "-m", "add the feature")
	mbox := filepath.Join(t.TempDir(), "series.mbox")
	os.WriteFile(mbox, []byte(gitOK(t, up, "format-patch", "--stdout", "-1")+"\n"), 0o644)
	gitOK(t, up, "reset", "--quiet", "--hard", "v1")
	fakeB4(t, `[ "$*" = "am -o - -v 2 1.2-1-someone@example.org" ] || { echo "unexpected: $*" >&2; exit 2; }
cat `+mbox)

	for _, b := range []string{"v1", base} {
		e := entry()
		e.Tree, e.Base = up, b
		work := t.TempDir()
		src := filepath.Join(work, "src")
		got, err := TreeBuilder{Entry: e, Env: Env{Host: Host{Progress: progress.Discard()}}}.prepare(work, src)
		if err != nil {
			t.Fatalf("base %s: %v", b, err)
		}
		if got.Commit != base || got.Patches != 1 || len(got.SeriesSHA256) != 64 || len(got.PatchSHA256) != 1 {
			t.Errorf("base %s: %+v", b, got)
		}
		if _, err := os.Stat(filepath.Join(src, "feature.c")); err != nil {
			t.Errorf("base %s: the series was not applied: %v", b, err)
		}
		// Prepared once, the same recipe needs no network again; another does.
		if again, err := (TreeBuilder{Entry: e, Env: Env{Host: Host{Progress: progress.Discard()}}}).prepare(work, src); err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("base %s: second prepare: %+v, %v", b, again, err)
		}
		e.Tree = "https://git.invalid/linux.git"
		if _, err := (TreeBuilder{Entry: e, Env: Env{Host: Host{Progress: progress.Discard()}}}).prepare(work, src); err == nil || !strings.Contains(err.Error(), "git.invalid") {
			t.Errorf("base %s: a changed recipe: %v", b, err)
		}
	}
}

// gitRepo makes a repository at dir with a first commit and a second one,
// whose patch it returns as an mbox; dir is left at the first.
func gitRepo(t *testing.T, dir string) string {
	t.Helper()
	must := func(args ...string) string {
		out, err := git(dir, append([]string{"-c", "user.name=t", "-c", "user.email=t@example.org"}, args...)...)
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return out
	}
	os.MkdirAll(dir, 0o755)
	must("init", "--quiet")
	os.WriteFile(filepath.Join(dir, "Makefile"), []byte("all:\n"), 0o644)
	must("add", ".")
	must("commit", "--quiet", "-m", "base")
	must("tag", "base")
	os.WriteFile(filepath.Join(dir, "Makefile"), []byte("all:\n\ttrue\n"), 0o644)
	must("commit", "--quiet", "-am", "the series")
	mbox := must("format-patch", "--stdout", "-1")
	must("checkout", "--quiet", "base")
	return mbox
}

// A local tree at any revision and a series from a local mbox need no
// network and no b4: the series is applied as git am applies it.
func TestPrepareFromLocalTreeAndMbox(t *testing.T) {
	fakeB4(t, "echo b4 must not run >&2; exit 1\n")
	tmp := t.TempDir()
	tree := filepath.Join(tmp, "linux")
	mbox := filepath.Join(tmp, "v5.mbox")
	os.WriteFile(mbox, []byte(gitRepo(t, tree)), 0o644)
	e := entry()
	e.Tree, e.Base, e.MessageID, e.Series = "file://"+tree, "base", "", mbox
	if err := images.CheckEntry(e); err != nil {
		t.Fatal(err)
	}
	b := TreeBuilder{Entry: e, Env: Env{Host: Host{Arch: arm64, KernelDir: "../../../kernel", CacheDir: tmp, Progress: progress.Discard()}}}
	in, err := b.inputs(arm64)
	if err != nil && !strings.Contains(err.Error(), "gcc") { // the compiler is asked last
		t.Fatal(err)
	}
	if len(in.BaseCommit) != 40 || len(in.SeriesFileSHA256) != 64 {
		t.Fatalf("inputs %+v: want the base's commit and the mbox's hash", in)
	}
	b.in = in
	work := filepath.Join(tmp, "work")
	got, err := b.prepare(work, filepath.Join(work, "src"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Commit != in.BaseCommit || got.Patches != 1 {
		t.Errorf("prepared %+v, want base %s and one patch", got, in.BaseCommit)
	}
	if data, _ := os.ReadFile(filepath.Join(work, "src", "Makefile")); !strings.Contains(string(data), "true") {
		t.Errorf("the series was not applied: Makefile is %q", data)
	}

	os.WriteFile(mbox, []byte("From: nobody\n\nno patch here\n"), 0o644)
	os.Remove(filepath.Join(work, "prepared.json"))
	if _, err := b.prepare(work, filepath.Join(work, "src")); err == nil || !strings.Contains(err.Error(), "holds no patch") {
		t.Errorf("an mbox without a patch: %v", err)
	}
	e.Base = "nosuch"
	if _, err := b.inputs(arm64); err == nil || !strings.Contains(err.Error(), "no revision nosuch") {
		t.Errorf("a base the tree lacks: %v", err)
	}
}
