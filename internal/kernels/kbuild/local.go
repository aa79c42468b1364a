// SPDX-License-Identifier: GPL-2.0-only

package kbuild

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/apt"
	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/buildlock"
	"github.com/ftrace-stackmap/conformance/internal/cachelimit"
	"github.com/ftrace-stackmap/conformance/internal/kernels/images"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kchoice"
)

// FeatureOption is the stackmap's Kconfig line in the fragments. A tree
// without the series has no such symbol; its build goes on without it and
// the stackmap specs are UNSUPPORTED.
const FeatureOption = "CONFIG_FTRACE_STACKMAP=y"

// LocalTree builds a kernel source tree on this machine (TREE=): any tree,
// clean or not, git or not, configured with the reference kernel's
// fragments and built out of tree in the cache. The tree is only read.
type LocalTree struct {
	Dir string // absolute
	Env
}

// TreeState is what the tree held when it was built, for the reports.
type TreeState struct {
	Dir      string `json:"dir"`
	Commit   string `json:"commit,omitempty"`   // HEAD; "" outside git
	Describe string `json:"describe,omitempty"` // git describe --always --dirty
	Dirty    bool   `json:"dirty"`
	// Changes hashes what HEAD does not hold: the uncommitted diff and the
	// untracked files; outside git, every file's name, size and time.
	Changes string `json:"changes_sha256,omitempty"`
	// HasFeature says the tree defines the stackmap's Kconfig symbol.
	HasFeature bool `json:"has_feature"`
}

// String names the tree in one line: where, which commit, dirty or not.
func (s TreeState) String() string {
	switch {
	case s.Commit == "":
		return s.Dir + " (not a git tree)"
	case s.Dirty:
		return fmt.Sprintf("%s (%s, HEAD %s, with uncommitted changes)", s.Dir, s.Describe, s.Commit[:12])
	}
	return fmt.Sprintf("%s (%s, HEAD %s, clean)", s.Dir, s.Describe, s.Commit[:12])
}

// LocalInputs are what a tree's build depends on; their hash keys the
// cached kernel, so a second run of an unchanged tree builds nothing.
type LocalInputs struct {
	Arch     string            `json:"arch"`
	Commit   string            `json:"commit"`
	Changes  string            `json:"changes_sha256"`
	Files    map[string]string `json:"files"` // fragments: path under kernel/ -> sha256
	Compiler string            `json:"compiler"`
	// Lane is the sanitized lane, and DebugConfig the sha256 of the
	// tree's debug.config it merges; both absent from a plain build's key.
	Lane        kchoice.Lane `json:"sanitize,omitempty"`
	DebugConfig string       `json:"debug_config_sha256,omitempty"`
}

// CheckTree checks, before anything is fetched or built, that dir is a
// kernel source tree that can be built out of tree for arch.
func CheckTree(dir string, a arch.Arch) error {
	for _, p := range []string{"Makefile", "kernel/trace", filepath.Join("arch", a.SrcDir)} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			return fmt.Errorf("TREE=%s is not a kernel source tree for %s (no %s)", dir, a.Name, p)
		}
	}
	// kbuild refuses O= when the source tree was configured in place.
	for _, p := range []string{".config", "include/config"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			return fmt.Errorf("TREE=%s was configured in place (it has %s); the suite builds out of tree, which kbuild allows only from a clean source: run `make mrproper` there, or give a separate worktree", dir, p)
		}
	}
	return nil
}

// Build returns the tree's kernel, building it when this state of the tree
// was not built before. Each tree has one build directory per arch, kept:
// after a small change, make rebuilds only what it touched.
func (t LocalTree) Build() (*Result, TreeState, error) {
	a := t.Arch
	if err := CheckTree(t.Dir, a); err != nil {
		return nil, TreeState{}, err
	}
	state, err := ReadTree(t.Dir)
	if err != nil {
		return nil, state, err
	}
	if t.Lane.IsSanitized() {
		if err := needDebugConfig(t.Dir); err != nil {
			return nil, state, err
		}
	}
	work := localWork(t.CacheDir, t.Dir, a.Name, t.Lane)
	what := "building the " + a.Name + " kernel of " + t.Dir
	if t.Lane.IsSanitized() {
		what += ", " + t.Lane.Words()
	}
	release, err := buildlock.Hold(work+".lock", what, t.Progress.Always())
	if err != nil {
		return nil, state, err
	}
	defer release()
	kb := t.builder()
	fragments := kb.laneFragments(t.Dir)
	in, err := t.inputs(state, fragments)
	if err != nil {
		return nil, state, err
	}
	if err := apt.Ensure(t.Progress, append(Tools, compiler(a), apt.Need{Program: "gcc", Package: "build-essential"})...); err != nil {
		return nil, state, err
	}
	if in.Compiler, err = Compiler(a); err != nil {
		return nil, state, err
	}
	key := inputsKey(in)
	origin := in.origin(state, fragments)
	if image, sum, ok := kb.Cached(key); ok {
		return &Result{Image: image, ImageSHA256: sum, Key: key, Cached: true, Origin: origin}, state, nil
	}
	var absent []string
	if !state.HasFeature {
		t.Progress.Notef("note: %s defines no FTRACE_STACKMAP option (the series is not applied?): built without it, the stackmap specs will find the feature absent (they fail the run unless REQUIRE=none)\n", t.Dir)
		absent = append(absent, FeatureOption)
	}
	start := time.Now()
	out := filepath.Join(work, "out")
	cachelimit.Touch(work) // used: pruning keeps the most recently used
	if err := kb.Make(work, t.Dir, out, filepath.Join(work, "build.log"), fragments, absent...); err != nil {
		return nil, state, err
	}
	res, err := kb.keep(key, out, start, struct {
		LocalInputs
		Tree TreeState `json:"tree"`
	}{in, state})
	if res != nil {
		res.Origin = origin
	}
	return res, state, err
}

func (t LocalTree) builder() Builder {
	return Builder{t.Env}
}

// inputs are the build's inputs but the compiler: the tree's state, the
// project's fragments by their path under kernel/, and in the sanitized
// lane the tree's own debug.config, hashed apart.
func (t LocalTree) inputs(state TreeState, fragments []string) (LocalInputs, error) {
	in := LocalInputs{Arch: t.Arch.Name, Commit: state.Commit, Changes: state.Changes, Files: map[string]string{}, Lane: t.Lane}
	if t.Lane.IsSanitized() {
		sum, err := images.FileSHA256(filepath.Join(t.Dir, DebugConfig))
		if err != nil {
			return in, err
		}
		in.DebugConfig = sum
	}
	for _, f := range treeless(fragments, t.Dir) {
		sum, err := images.FileSHA256(f)
		if err != nil {
			return in, err
		}
		rel, _ := filepath.Rel(t.KernelDir, f)
		in.Files[rel] = sum
	}
	return in, nil
}

var featureSymbol = regexp.MustCompile(`(?m)^config FTRACE_STACKMAP\s*$`)

// localWork is the directory of a tree's builds for arch and lane: one
// per tree, and one more for its sanitized builds.
func localWork(cache, dir, arch string, l kchoice.Lane) string {
	sum := sha256.Sum256([]byte(dir))
	return cachelimit.Treebuild.In(cache, "local-"+hex.EncodeToString(sum[:6])+"-"+arch+l.Suffix())
}

// LocalBuildLog is make's output of the last build of the tree at dir for
// arch in the lane, if it was built here.
func LocalBuildLog(cache, dir, arch string, l kchoice.Lane) string {
	return filepath.Join(localWork(cache, dir, arch, l), "build.log")
}

// treeless leaves out the fragments of the tree at dir: the project's,
// keyed by their path under kernel/.
func treeless(fragments []string, dir string) []string {
	own := treeFragments(fragments, dir)
	var out []string
	for _, f := range fragments {
		if !slices.Contains(own, f) {
			out = append(out, f)
		}
	}
	return out
}

// ReadTree reads what the tree at dir holds now, without changing it.
func ReadTree(dir string) (TreeState, error) {
	s := TreeState{Dir: dir}
	kconfig, _ := os.ReadFile(filepath.Join(dir, "kernel", "trace", "Kconfig"))
	s.HasFeature = featureSymbol.Match(kconfig)
	top, err := treeGit(dir, "rev-parse", "--show-toplevel")
	if err != nil || filepath.Clean(strings.TrimSpace(string(top))) != filepath.Clean(dir) {
		// Not the top of a git tree (a tarball's source, say): its files key the build.
		s.Changes, err = manifest(dir)
		return s, err
	}
	head, err := treeGit(dir, "rev-parse", "HEAD")
	if err != nil {
		return s, fmt.Errorf("TREE=%s: git rev-parse HEAD: %v (a repository without commits?)", dir, err)
	}
	s.Commit = strings.TrimSpace(string(head))
	desc, _ := treeGit(dir, "describe", "--always", "--dirty", "--abbrev=12")
	s.Describe = strings.TrimSpace(string(desc))
	h := sha256.New()
	diff, err := treeGit(dir, "diff", "HEAD", "--binary", "--no-ext-diff", "--no-textconv")
	if err != nil {
		return s, fmt.Errorf("TREE=%s: git diff: %v", dir, err)
	}
	h.Write(diff)
	untracked, err := treeGit(dir, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return s, fmt.Errorf("TREE=%s: git ls-files: %v", dir, err)
	}
	names := strings.Split(strings.TrimRight(string(untracked), "\x00"), "\x00")
	for _, name := range names {
		if name == "" {
			continue
		}
		fmt.Fprintf(h, "\x00untracked %s\x00", name)
		if err := hashFile(h, filepath.Join(dir, name)); err != nil {
			return s, err
		}
	}
	s.Dirty = len(diff) > 0 || len(names) > 0 && names[0] != ""
	if s.Dirty {
		s.Changes = hex.EncodeToString(h.Sum(nil))
	}
	return s, nil
}

// treeGit runs git in a user's tree without taking its optional locks: a
// read must not race the user's own git commands.
func treeGit(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

func hashFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// manifest hashes the name, size and modification time of every file
// under dir: outside git, what tells one state of a tree from another.
func manifest(dir string) (string, error) {
	var lines []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		lines = append(lines, fmt.Sprintf("%s %d %d", rel, fi.Size(), fi.ModTime().UnixNano()))
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("reading TREE=%s: %w", dir, err)
	}
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:]), nil
}
