// SPDX-License-Identifier: GPL-2.0-only

package review

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/buildlock"
	"github.com/ftrace-stackmap/conformance/internal/cachelimit"
	"github.com/ftrace-stackmap/conformance/internal/claims"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kbuild"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
	"github.com/ftrace-stackmap/conformance/internal/textlines"
)

// A walk's checkout is the cache's review area, under the walk's lock:
// cachelimit lists and prunes it by asking this package.
func init() {
	cachelimit.Lists(cachelimit.Review, func(cache, dir string) []cachelimit.Entry {
		return cachelimit.Present(nil, cachelimit.Entry{Name: "src", Paths: []string{filepath.Join(dir, "src")}, Locks: []string{cachelimit.Review.Lock(cache)}})
	})
}

// Step is one prefix of the series on one arch: k patches applied.
type Step struct {
	K       int
	Arch    string
	Build   string        // "ok", or why it did not build (the first error)
	Boot    string        // "ok", or why it did not reach the suite; "" when not booted
	Infra   string        // why the suite gave no verdict, when it did not
	Wall    time.Duration // build and boots
	Cached  bool          // the kernel came from the cache
	Kernel  time.Duration // of Wall, building (or finding) the kernel
	RunDir  string
	Classes map[string]contract.Class // per requirement: the worst of its specs
	Reasons map[string]string         // per requirement: why that spec did not pass
	Uname   string                    // the guest's uname
	Machine string                    // QEMU's version and machine settings
	Decoder string                    // the tree's stack_map_bin decoder against the kernel: "agrees", "DIFFERS" or ""
	// Warnings are the compiler's warnings in the files the patch touches,
	// when its prefix was built here (not found in the cache).
	Warnings []string
	built    bool // make ran for this prefix: its build log is this prefix's
	// Claims is what the claims plan measured, on the whole series only
	// (CLAIMS=1): they never change the walk's verdict.
	Claims *claims.Report `json:",omitempty"`
	// Problems are why this prefix fails the walk: a build or boot that
	// failed, failing specs, a BASE- requirement or the feature lost.
	Problems []string
}

// Walk is a series walked on one or more arches.
type Walk struct {
	Series  Series
	Tree    string // the base tree
	Commit  string // the base revision's commit
	Arches  []string
	Steps   map[string][]*Step // per arch, index k
	Dir     string             // where the walk's reports go
	Started time.Time
	Wall    time.Duration
	// Sanitized is kbuild.Sanitized when every prefix was built in the
	// sanitized lane (SANITIZE=1), "" otherwise.
	Sanitized string `json:",omitempty"`
}

// Walker walks series; Options is the template of every prefix's run.
type Walker struct {
	Options qemutest.Options
	Arches  arch.List
	Log     func(format string, args ...any) // progress, one line each
}

// Walk builds and tests every prefix of s applied on its base in tree,
// 0/N to N/N, on every arch. Each prefix is built in one source tree and
// one build directory per arch, reused from prefix to prefix, so a patch
// costs what it changes. Reports go under dir.
func (w Walker) Walk(ctx context.Context, s Series, tree, dir string) (*Walk, error) {
	walk := &Walk{Series: s, Tree: tree, Arches: strings.Split(w.Arches.String(), ","), Steps: map[string][]*Step{}, Dir: dir, Started: time.Now()}
	walk.Sanitized = w.Options.Lane.Words()
	commit, err := gitOut(tree, "rev-parse", "--verify", s.Base+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("TREE=%s has no revision %s: %v", tree, s.Base, err)
	}
	walk.Commit = strings.TrimSpace(string(commit))
	// One walk at a time: they share the walk's source tree and builds.
	cache := w.Options.CacheDir
	release, err := buildlock.Hold(cachelimit.Review.Lock(cache), "walking a series", os.Stderr)
	if err != nil {
		return nil, err
	}
	defer release()
	src := cachelimit.Review.In(cache, "src")
	if err := checkoutBase(src, tree, walk.Commit); err != nil {
		return nil, err
	}
	cachelimit.Touch(src) // used: pruning keeps the most recently used
	n := len(s.Patches)
	applied := true
	for k := 0; k <= n; k++ {
		var applyErr error
		if k > 0 && applied {
			applyErr = apply(src, s.Patches[k-1])
			applied = applyErr == nil
		}
		for _, a := range w.Arches {
			arch := a.Name
			st := &Step{K: k, Arch: arch}
			walk.Steps[arch] = append(walk.Steps[arch], st)
			switch {
			case applyErr != nil:
				st.Build = "does not apply: " + applyErr.Error()
				st.Problems = append(st.Problems, fmt.Sprintf("patch %d/%d does not apply: %v", k, n, applyErr))
				continue
			case !applied:
				st.Build = notMade + ": an earlier patch does not apply"
				continue
			}
			w.logf("%s %d/%d %s", arch, k, n, subjectOf(s, k))
			if err := w.step(ctx, st, a, src, filepath.Join(dir, fmt.Sprintf("%s-%dof%d", arch, k, n)), k == n); err != nil {
				return walk, err
			}
			if k > 0 && st.built {
				st.Warnings = warningsIn(kbuild.LocalBuildLog(w.Options.CacheDir, src, arch, w.Options.Lane), src, touched(s.Patches[k-1]))
			}
		}
	}
	for _, arch := range walk.Arches {
		judge(walk.Steps[arch], n)
	}
	walk.Wall = time.Since(walk.Started)
	return walk, nil
}

func (w Walker) logf(format string, args ...any) {
	if w.Log != nil {
		w.Log(format, args...)
	}
}

func subjectOf(s Series, k int) string {
	if k == 0 {
		return "(the base)"
	}
	return s.Patches[k-1].Subject
}

// step builds and runs the suite on one prefix; it fails only when the
// walk itself cannot go on (interrupted).
func (w Walker) step(ctx context.Context, st *Step, a arch.Arch, src, resultsDir string, whole bool) error {
	o := w.Options
	o.Claims = o.Claims && whole
	o.Arch, o.Tree, o.Kernel, o.Image = a, src, "", ""
	// The feature is absent before the series brings it: the walk, not
	// each run, judges where it must be (judge).
	o.Require = report.RequireNone
	o.ResultsDir = resultsDir
	start := time.Now()
	res, err := qemutest.Run(ctx, o)
	st.Wall = time.Since(start)
	if res != nil {
		st.RunDir = res.Dir
		st.Machine = res.Machine
		st.Kernel = res.KernelTime
		st.Cached = res.KernelCached
		st.built = res.Kernel != "" && !res.KernelCached
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var buildErr *kbuild.BuildError
	var died *qemutest.BootDied
	switch {
	case errors.As(err, &buildErr):
		// Paths in the walk's own checkout read as the tree's.
		st.Build = strings.ReplaceAll(buildErr.FirstError(), src+"/", "")
		st.built = true
		st.Problems = append(st.Problems, "does not build: "+st.Build)
		return nil
	case errors.As(err, &died):
		st.Build = stepOK
		st.Boot = report.OneLine(died.How)
		st.Problems = append(st.Problems, "does not boot: "+st.Boot)
		return nil
	case err != nil:
		st.Build = notMade + ": no verdict before the kernel was ready"
		if res != nil && res.Kernel != "" {
			st.Build = stepOK
		}
		st.Infra = report.OneLine(err.Error())
		return nil
	}
	st.Build, st.Boot = stepOK, stepOK
	for _, u := range res.Unjudged {
		if u.Boot == contract.DefaultBoot && u.Died != "" {
			st.Boot = report.OneLine(u.Died)
			st.Problems = append(st.Problems, "does not boot: "+st.Boot)
			return nil
		}
	}
	if len(res.Unjudged) > 0 && res.ExitCode() == 2 && st.Infra == "" {
		// Nothing that was judged failed: no verdict for this prefix.
		st.Infra = res.Unjudged[0].Unjudged()
	}
	st.Uname = res.Summary.Kernel
	st.Claims = res.Claims
	st.Classes, st.Reasons = map[string]contract.Class{}, map[string]string{}
	for _, sp := range res.Summary.Specs {
		for _, id := range sp.IDs {
			if old, ok := st.Classes[id]; !ok || rank(sp.Class) > rank(old) {
				st.Classes[id], st.Reasons[id] = sp.Class, sp.Message
			}
		}
	}
	for _, p := range res.KernelProblems() {
		st.Problems = append(st.Problems, "kernel log: "+p)
	}
	if missing := res.MissingKernelLogs(); len(missing) > 0 && st.Infra == "" {
		// Whether the kernel warned is unknown: no verdict for this prefix.
		st.Infra = fmt.Sprintf("%s: %s", results.KernelLogTest(missing[0]), results.KernelLogMissing)
	}
	if d := res.Decoder; d != nil {
		st.Decoder = "agrees"
		if !d.Agrees() {
			st.Decoder = "DIFFERS"
			st.Problems = append(st.Problems, "the tree's stackmap_dump.py disagrees with the kernel: "+d.Problems[0])
		}
	}
	if _, err := results.Write(res); err != nil {
		return fmt.Errorf("%s: %w", res.Dir, err)
	}
	return nil
}

// rank orders classes by how much they say against the kernel: a
// requirement's cell shows the worst of its specs.
func rank(c contract.Class) int {
	switch c {
	case contract.Fail:
		return 4
	case contract.Unresolved:
		return 3
	case contract.Unsupported:
		return 2
	case contract.Pass:
		return 1
	}
	return 0
}

// judge names what fails each prefix: its failing specs, a BASE-
// requirement that passed on the base and no longer does, a requirement
// that passed at an earlier prefix and is UNSUPPORTED now (the feature
// went away).
func judge(steps []*Step, n int) {
	base := steps[0]
	passedBefore := map[string]int{}
	for _, st := range steps {
		if st.Classes == nil {
			continue
		}
		for _, id := range sortedIDs(st.Classes) {
			c := st.Classes[id]
			switch {
			case c == contract.Fail:
				st.Problems = append(st.Problems, id+" FAIL")
			case strings.HasPrefix(id, "BASE-") && st != base && base.Classes[id] == contract.Pass && c != contract.Pass:
				st.Problems = append(st.Problems, fmt.Sprintf("%s passed at 0/%d, %s here", id, n, c))
			case c == contract.Unsupported && passedBefore[id] > 0:
				st.Problems = append(st.Problems, fmt.Sprintf("%s passed at %d/%d, UNSUPPORTED here", id, passedBefore[id], n))
			}
			if c == contract.Pass && passedBefore[id] == 0 && st.K > 0 {
				passedBefore[id] = st.K
			}
		}
	}
	// The whole series must bring the feature, as REQUIRE=stackmap asks of
	// a single run.
	last := steps[len(steps)-1]
	if last.Classes != nil && n > 0 {
		absent := 0
		for id, c := range last.Classes {
			if strings.HasPrefix(id, "SM-") && c == contract.Unsupported {
				absent++
			}
		}
		if absent > 0 && absent == countSM(last.Classes) {
			last.Problems = append(last.Problems, fmt.Sprintf("the whole series (%d/%d) has no stackmap feature: every SM- requirement is UNSUPPORTED", n, n))
		}
	}
}

func countSM(m map[string]contract.Class) int {
	n := 0
	for id := range m {
		if strings.HasPrefix(id, "SM-") {
			n++
		}
	}
	return n
}

// ExitCode is the walk's exit status, by qemu-test's rules: 1 when a
// prefix fails, else 2 when one gave no verdict, else 0.
func (w *Walk) ExitCode() int {
	code := 0
	for _, steps := range w.Steps {
		for _, st := range steps {
			switch {
			case len(st.Problems) > 0:
				return 1
			case st.Infra != "":
				code = 2
			}
		}
	}
	return code
}

var diffHeader = regexp.MustCompile(`(?m)^diff --git a/(\S+) b/(\S+)$`)

// touched are the files a patch changes.
func touched(p Patch) map[string]bool {
	files := map[string]bool{}
	for _, m := range diffHeader.FindAllStringSubmatch(string(p.Mbox), -1) {
		files[m[1]], files[m[2]] = true, true
	}
	return files
}

var warningLine = regexp.MustCompile(`^(\S+?):\d+:\d+: warning: `)

// warningsIn are the compiler's warning lines of a build log that are in
// the files given (paths relative to src), each once.
func warningsIn(log, src string, files map[string]bool) []string {
	data, err := os.ReadFile(log)
	if err != nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		m := warningLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		file := m[1]
		if i := strings.Index(file, src+"/"); i >= 0 {
			file = file[i+len(src)+1:]
		}
		file = strings.TrimPrefix(filepath.Clean(file), "./")
		if rel := strings.TrimPrefix(l, m[1]); files[file] && !seen[l] {
			seen[l] = true
			out = append(out, file+rel)
		}
	}
	return out
}

// checkoutBase makes src, the walk's own repository, hold commit of tree,
// borrowing the tree's objects (nothing is copied, the tree is not
// touched). Only files that differ are rewritten: the build directories
// then rebuild only what changed since the last walk.
func checkoutBase(src, tree, commit string) error {
	if _, err := os.Stat(filepath.Join(src, ".git")); err != nil {
		os.RemoveAll(src)
		if err := os.MkdirAll(src, 0o755); err != nil {
			return err
		}
		if _, err := gitOut(src, "init", "--quiet"); err != nil {
			return err
		}
	}
	objects, err := gitOut(tree, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return fmt.Errorf("TREE=%s: %v", tree, err)
	}
	alternates := filepath.Join(src, ".git", "objects", "info", "alternates")
	line := filepath.Join(strings.TrimSpace(string(objects)), "objects")
	old, _ := os.ReadFile(alternates)
	if !strings.Contains("\n"+string(old), "\n"+line+"\n") {
		os.MkdirAll(filepath.Dir(alternates), 0o755)
		if err := os.WriteFile(alternates, append(old, line+"\n"...), 0o644); err != nil {
			return err
		}
	}
	gitOut(src, "am", "--abort") // an earlier walk interrupted
	if _, err := gitOut(src, "checkout", "--quiet", "--force", "--detach", commit); err != nil {
		return err
	}
	_, err = gitOut(src, "clean", "--quiet", "-fdx")
	return err
}

// apply applies one patch with git am. The committer and dates are fixed,
// so the same patch on the same base gives the same commit, and a second
// walk finds each prefix's kernel in the cache.
func apply(src string, p Patch) error {
	f, err := os.CreateTemp("", "smct-patch-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(p.Mbox)
	if err := errors.Join(err, f.Close()); err != nil {
		return fmt.Errorf("writing the patch for git am: %w", err)
	}
	cmd := []string{"-c", "user.name=smct", "-c", "user.email=smct@localhost", "am", "--quiet", "--committer-date-is-author-date", f.Name()}
	if _, err := gitOut(src, cmd...); err != nil {
		gitOut(src, "am", "--abort")
		return errors.New(textlines.First(err.Error()))
	}
	return nil
}
