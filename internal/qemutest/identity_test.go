// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

func TestRequired(t *testing.T) {
	lock := "../../images.lock"
	for _, tc := range []struct {
		choice        report.Require
		entry, source string
		want          bool
		why           string
	}{
		{"", "reference", "", true, "default for build entries: IMAGE=reference"},
		{"", "stackmap-v4", "", true, "default for b4 entries: IMAGE=stackmap-v4"},
		{"", "", "KERNEL=/tmp/bzImage", true, "default for KERNEL=/tmp/bzImage"},
		{"", "debian-6.12", "", false, "images.lock marks debian-6.12 has_stackmap: false"},
		{report.RequireStackmap, "debian-6.12", "", true, "REQUIRE=stackmap"},
		{report.RequireNone, "reference", "", false, "REQUIRE=none"},
	} {
		got, why, err := required(tc.choice, lock, tc.entry, tc.source)
		if err != nil || got != tc.want || !strings.Contains(why, tc.why) {
			t.Errorf("required(%q, %q) = %v, %q, %v; want %v and %q", tc.choice, tc.entry, got, why, err, tc.want, tc.why)
		}
	}
}

func TestSuiteID(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	if got := suiteID(dir); got != "" {
		t.Errorf("outside a checkout: %q, want nothing", got)
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	os.WriteFile(filepath.Join(dir, "f"), []byte("1"), 0o644)
	git("add", "f")
	git("commit", "-qm", "one")
	got := suiteID(dir)
	if !strings.HasPrefix(got, modulePath+" ") || strings.HasSuffix(got, "-dirty") {
		t.Errorf("clean checkout without a remote: %q", got)
	}
	os.WriteFile(filepath.Join(dir, "f"), []byte("2"), 0o644)
	git("remote", "add", "origin", "https://example.org/suite.git")
	if got := suiteID(dir); !strings.HasPrefix(got, "https://example.org/suite.git ") || !strings.HasSuffix(got, "-dirty") {
		t.Errorf("changed checkout with a remote: %q", got)
	}
}
