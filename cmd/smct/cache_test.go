// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/cachelimit"
)

// The door prunes the cache when a command ends: the tests' commands
// prune a cache of their own, never this machine's.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "smct-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("SMCT_CACHE", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fakeCache is a cache with two built kernels (the older used an hour
// ago), an unpacked vmlinux and the lab's state, and a results/ of three
// runs.
func fakeCache(t *testing.T) (cache, results string) {
	t.Helper()
	cache, results = t.TempDir(), t.TempDir()
	t.Setenv("SMCT_CACHE", cache)
	files := map[string]int{
		"kernels/arm64-1111111111111111/Image": 64 << 10, "kernels/arm64-1111111111111111/inputs.json": 100,
		"kernels/x86_64-2222222222222222/vmlinux": 64 << 10, "vmlinux/abc.elf": 32 << 10, "lab/token": 40,
	}
	for name, size := range files {
		p := filepath.Join(cache, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, bytes.Repeat([]byte{1}, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(cache, "kernels/arm64-1111111111111111"), old, old)
	for _, r := range []string{"20260101-100000-arm64", "mutants-20260101-110000-x86_64", "20260101-120000-arm64"} {
		os.MkdirAll(filepath.Join(results, r), 0o755)
	}
	os.Symlink("20260101-120000-arm64", filepath.Join(results, "latest"))
	return cache, results
}

// smct cache: a line per area with its size, cap and entries, then
// results/'s runs; nothing is removed.
func TestCacheShowsEachArea(t *testing.T) {
	cache, results := fakeCache(t)
	t.Setenv("CACHE_LIMIT", "kernels=100K")
	t.Setenv("KEEP_RUNS", "2")
	var stdout, stderr strings.Builder
	if code := smct([]string{"cache", "-results", results}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
	out := stdout.String()
	t.Logf("\n%s", out)
	for _, want := range []string{
		`(?m)^cache ` + regexp.QuoteMeta(cache) + ` `,
		`(?m)^area +size +cap +entries +holds$`,
		`(?m)^kernels +1[0-9]{2}K +100K +2 +built kernels`,
		`(?m)^vmlinux +3[0-9]K +512M +1 +`,
		`(?m)^kbuild +0B +2\.5G +0 +`,
		`(?m)^ccache +0B +1\.0G +- +`,
		`(?m)^lab +[0-9.]+K +kept +- +`,
		`(?m)^results ` + regexp.QuoteMeta(results) + `: 3 runs, [0-9.]+K, the newest 2 kept \(KEEP_RUNS=\)$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("no line matching %s", want)
		}
	}
	if _, err := os.Stat(filepath.Join(cache, "kernels/arm64-1111111111111111")); err != nil {
		t.Errorf("smct cache removed an entry: %v", err)
	}
}

// smct cache -clean removes every entry and says so; the lab's state
// stays.
func TestCacheClean(t *testing.T) {
	cache, _ := fakeCache(t)
	var stdout strings.Builder
	if code := smct([]string{"cache", "-clean"}, &stdout, io.Discard); code != 0 {
		t.Fatalf("exit %d:\n%s", code, stdout.String())
	}
	out := stdout.String()
	t.Logf("\n%s", out)
	if !strings.Contains(out, "kernels: removed arm64-1111111111111111 x86_64-2222222222222222 (") ||
		!strings.Contains(out, "vmlinux: removed abc.elf (") {
		t.Errorf("the output does not say what went")
	}
	if left, _ := os.ReadDir(filepath.Join(cache, "kernels")); len(left) > 0 {
		t.Errorf("kernels left: %v", left)
	}
	if _, err := os.Stat(filepath.Join(cache, "lab/token")); err != nil {
		t.Errorf("the lab's state went: %v", err)
	}
}

// A command that fills the cache prunes the areas it used when it ends,
// however it ends: the least recently used kernel goes, the unused
// vmlinux area over its cap is not walked, and results/ keeps its newest
// runs.
func TestCommandEndPrunes(t *testing.T) {
	cache, results := fakeCache(t)
	t.Setenv("CACHE_LIMIT", "kernels=100K,vmlinux=1K")
	t.Setenv("KEEP_RUNS", "1")
	// As a run that found its kernel in the cache does.
	cachelimit.Use(filepath.Join(cache, "kernels/x86_64-2222222222222222"))
	var stdout, stderr strings.Builder
	smct([]string{"lava-results", "-results", results}, &stdout, &stderr)
	t.Logf("stderr:\n%s", stderr.String())
	if _, err := os.Stat(filepath.Join(cache, "kernels/arm64-1111111111111111")); err == nil {
		t.Errorf("the least recently used kernel stayed")
	}
	if _, err := os.Stat(filepath.Join(cache, "kernels/x86_64-2222222222222222")); err != nil {
		t.Errorf("the most recently used kernel went: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cache, "vmlinux/abc.elf")); err != nil {
		t.Errorf("an area the command did not use was pruned: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(results, "2026*"))
	if len(left) != 1 || filepath.Base(left[0]) != "20260101-120000-arm64" {
		t.Errorf("results/ left %v, want the newest run only", left)
	}
	if !strings.Contains(stderr.String(), "removed 1 least recently used") || !strings.Contains(stderr.String(), "removed 2 runs") {
		t.Errorf("the notes do not say what was pruned")
	}
}

// A cap the door cannot read refuses the command before it does anything.
func TestBadCacheLimitRefused(t *testing.T) {
	_, results := fakeCache(t)
	for env, v := range map[string]string{"CACHE_LIMIT": "kernels=lots", "KEEP_RUNS": "-3"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, v)
			var stdout strings.Builder
			code := smct([]string{"lava-results", "-results", results}, &stdout, io.Discard)
			if code != exitNoVerdict || !strings.Contains(stdout.String(), "NO VERDICT: "+env+"=") {
				t.Errorf("exit %d:\n%s", code, stdout.String())
			}
		})
	}
}
