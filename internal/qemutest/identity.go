// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/kernels/images"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// NewSeed chooses the order of a run's specs when the user did not:
// small, so that SEED= is easy to type back. Ginkgo's own default is the
// guest's clock, which on arm64 (no RTC) is the same few seconds every run.
func NewSeed() int64 { return 1 + rand.Int64N(999_999) }

// modulePath names the suite when its checkout has no remote.
const modulePath = "github.com/ftrace-stackmap/conformance"

// suiteID is the suite's repository and commit, as a reviewer cites it:
// the checkout's origin (else the module path) and `git describe`,
// "-dirty" when it has changes. "" outside a git checkout.
func suiteID(dir string) string {
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	commit := git("describe", "--always", "--dirty", "--abbrev=12", "--tags")
	if commit == "" {
		return ""
	}
	repo := git("remote", "get-url", "origin")
	if repo == "" {
		repo = modulePath
	}
	return repo + " " + commit
}

// required decides whether UNSUPPORTED stackmap specs fail the run, and
// says why: REQUIRE= when given, else yes unless images.lock marks the
// entry as a kernel without the feature (has_stackmap: false). Built
// entries, posted series and KERNEL= are meant to have it.
func required(choice report.Require, lockFile, entry, source string) (bool, string, error) {
	switch choice {
	case report.RequireStackmap:
		return true, "REQUIRE=stackmap", nil
	case report.RequireNone:
		return false, "REQUIRE=none", nil
	}
	if entry == "" {
		// KERNEL= or a tree built here: named by its first word.
		what, _, _ := strings.Cut(source, " ")
		return true, "default for " + what, nil
	}
	lock, err := images.Read(lockFile)
	if err != nil {
		return false, "", err
	}
	e, err := lock.Entry(entry)
	if err != nil {
		return false, "", err
	}
	if !e.WithStackmap() {
		return false, fmt.Sprintf("images.lock marks %s has_stackmap: false", e.Name), nil
	}
	return true, fmt.Sprintf("default for %s entries: IMAGE=%s", e.Kind, e.Name), nil
}
