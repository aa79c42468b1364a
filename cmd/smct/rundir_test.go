// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A review points results/latest at its directory when it starts, as a run
// does: here its walk ends at once (the base is not in the tree), and latest
// is that walk's.
func TestReviewPointsLatestAtItsDirectory(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	tree := t.TempDir()
	for _, d := range []string{"kernel/trace", "arch/x86"} {
		os.MkdirAll(filepath.Join(tree, d), 0o755)
	}
	os.WriteFile(filepath.Join(tree, "Makefile"), nil, 0o644)
	series := filepath.Join(t.TempDir(), "one.mbox")
	os.WriteFile(series, []byte("From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"+
		"From: A <a@example.org>\nSubject: [PATCH] one\n\n---\ndiff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n"), 0o644)
	results := t.TempDir()
	var stdout, stderr strings.Builder
	code := smct([]string{"review", "-results", results, "-series", series, "-tree", tree, "-base", "no-such-revision", "-arches", "x86_64"}, &stdout, &stderr)
	if code != exitNoVerdict || !strings.Contains(stdout.String()+stderr.String(), "no-such-revision") {
		t.Fatalf("exit %d, stderr %q; want %d and the missing base", code, stderr.String(), exitNoVerdict)
	}
	dirs, _ := filepath.Glob(filepath.Join(results, "review-*"))
	if len(dirs) != 1 {
		t.Fatalf("review made %v, want one directory", dirs)
	}
	if target, err := os.Readlink(filepath.Join(results, "latest")); err != nil || target != filepath.Base(dirs[0]) {
		t.Errorf("latest -> %q (%v), want %s", target, err, filepath.Base(dirs[0]))
	}
}
