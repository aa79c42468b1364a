// SPDX-License-Identifier: GPL-2.0-only

package kbuild

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/apt"
	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/buildlock"
	"github.com/ftrace-stackmap/conformance/internal/cachelimit"
	"github.com/ftrace-stackmap/conformance/internal/kernels/images"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kchoice"
	"github.com/ftrace-stackmap/conformance/internal/textlines"
)

// Check validates a b4 entry offline: its form (images.Read checked it
// already; a hand-made Entry may not have been) and that its fragments
// exist in kernelDir, the project's kernel/.
func Check(e *images.Entry, kernelDir string) error {
	if e.Kind != images.KindB4 {
		return fmt.Errorf("entry %s is of kind %q, not %s", e.Name, e.Kind, images.KindB4)
	}
	if err := images.CheckEntry(e); err != nil {
		return err
	}
	for arch := range e.Arches {
		for _, f := range Fragments(e, arch, kernelDir) {
			if _, err := os.Stat(f); err != nil {
				return fmt.Errorf("entry %s: config fragment %s: %v", e.Name, f, err)
			}
		}
	}
	return nil
}

// Fragments are the config fragments of e for arch: those it names, then
// the arch's own.
func Fragments(e *images.Entry, arch, kernelDir string) []string {
	var fs []string
	for _, c := range append(append([]string{}, e.Config...), arch) {
		fs = append(fs, filepath.Join(kernelDir, "config", c+".config"))
	}
	return fs
}

// TreeInputs are what a build depends on, all known offline: their hash is
// the build's key, so a cached kernel needs no network. A tag or a thread
// could move under the recipe; the commit and the series actually used are
// recorded beside the image (inputs.json).
type TreeInputs struct {
	Arch          string `json:"arch"`
	Tree          string `json:"tree"`
	Base          string `json:"base"`
	MessageID     string `json:"message_id"`
	SeriesVersion int    `json:"series_version,omitempty"`
	// A local tree's base resolved to its commit, and a local mbox's hash:
	// both can change under the same recipe, and are known offline.
	BaseCommit       string            `json:"base_commit,omitempty"`
	SeriesFileSHA256 string            `json:"series_file_sha256,omitempty"`
	Files            map[string]string `json:"files"` // fragments: path under kernel/ -> sha256
	Compiler         string            `json:"compiler"`
	// Lane is the sanitized lane. The tree's debug.config it merges is
	// the tree's at the base with the series, which the key holds as far
	// as it holds the tree: its sum is recorded beside the image
	// (debug_config_sha256), as the commit is.
	Lane kchoice.Lane `json:"sanitize,omitempty"`
}

// Key is the hash of the inputs.
func (in TreeInputs) Key() string { return inputsKey(in) }

// TreeBuilder builds one b4 entry for one arch.
type TreeBuilder struct {
	Env
	Entry *images.Entry
	in    TreeInputs
}

// Build returns the entry's kernel, fetching, applying and building it
// when it is not cached.
func (b TreeBuilder) Build() (*Result, error) {
	a := b.Arch
	if _, pinned := b.Entry.Arches[a.Name]; !pinned {
		return nil, fmt.Errorf("entry %s has no %s kernel", b.Entry.Name, b.Arch.Name)
	}
	if err := Check(b.Entry, b.KernelDir); err != nil {
		return nil, err
	}
	// One builder at a time in this entry's tree and build directory.
	release, err := buildlock.Hold(cachelimit.Treebuild.In(b.CacheDir, b.Entry.Name+"-"+b.Arch.Name+".lock"), "building the "+b.Entry.Name+" "+b.Arch.Name+" kernel", b.Progress.Always())
	if err != nil {
		return nil, err
	}
	defer release()
	needs := append(append([]apt.Need{}, Tools...), compiler(a), apt.Need{Program: "gcc", Package: "build-essential"}, apt.Need{Program: "git", Package: "git"})
	if b.Entry.MessageID != "" {
		needs = append(needs, apt.Need{Program: "b4", Package: "b4"})
	}
	if err := apt.Ensure(b.Progress, needs...); err != nil {
		return nil, err
	}
	in, err := b.inputs(a)
	if err != nil {
		return nil, err
	}
	b.in = in
	kb := Builder{b.Env}
	key := inputsKey(in)
	if image, sum, ok := kb.Cached(key); ok {
		return &Result{Image: image, ImageSHA256: sum, Key: key, Cached: true, Origin: b.origin(in, cachedSource(image))}, nil
	}
	// One tree per entry and arch, and a build directory per lane, at
	// fixed paths, so ccache hits across changes of base or series (as in
	// kbuild), and a plain and a sanitized build never share one.
	work := cachelimit.Treebuild.In(b.CacheDir, b.Entry.Name+"-"+b.Arch.Name)
	src, out := filepath.Join(work, "src"), filepath.Join(work, "out"+b.Lane.Suffix())
	cachelimit.Touch(work) // used: pruning keeps the most recently used
	start := time.Now()
	got, err := b.prepare(work, src)
	if err != nil {
		return nil, err
	}
	if b.Lane.IsSanitized() {
		if err := needDebugConfig(src); err != nil {
			return nil, err
		}
		if got.DebugConfig, err = images.FileSHA256(filepath.Join(src, DebugConfig)); err != nil {
			return nil, err
		}
	}
	fragments := withLane(Fragments(b.Entry, b.Arch.Name, b.KernelDir), b.Lane, src, b.KernelDir)
	if err := kb.Make(work, src, out, filepath.Join(work, "build"+b.Lane.Suffix()+".log"), fragments); err != nil {
		return nil, err
	}
	res, err := kb.keep(key, out, start, struct {
		TreeInputs
		TreeSource
	}{in, got})
	if res != nil {
		res.Origin = b.origin(in, got)
	}
	return res, err
}

func (b TreeBuilder) inputs(a arch.Arch) (TreeInputs, error) {
	e := b.Entry
	in := TreeInputs{Arch: b.Arch.Name, Tree: e.Tree, Base: e.Base, MessageID: e.MessageID, SeriesVersion: e.SeriesVersion, Files: map[string]string{}, Lane: b.Lane}
	fragments := Fragments(e, b.Arch.Name, b.KernelDir)
	if b.Lane.IsSanitized() {
		fragments = append(fragments, filepath.Join(b.KernelDir, SanitizeConfig))
	}
	for _, f := range fragments {
		sum, err := images.FileSHA256(f)
		if err != nil {
			return in, err
		}
		rel, _ := filepath.Rel(b.KernelDir, f)
		in.Files[rel] = sum
	}
	if local := e.LocalTree(); local != "" {
		out, err := git(local, "rev-parse", "--verify", "--quiet", e.Base+"^{commit}")
		if err != nil {
			return in, fmt.Errorf("entry %s: %s has no revision %s", e.Name, local, e.Base)
		}
		in.BaseCommit = strings.TrimSpace(out)
	}
	if e.Series != "" {
		sum, err := images.FileSHA256(e.Series)
		if err != nil {
			return in, fmt.Errorf("entry %s: series: %v", e.Name, err)
		}
		in.SeriesFileSHA256 = sum
	}
	var err error
	in.Compiler, err = Compiler(a)
	return in, err
}

// TreeSource is what a recipe resolved to when its tree was prepared.
type TreeSource struct {
	Commit       string `json:"commit"`        // the base's commit
	SeriesSHA256 string `json:"series_sha256"` // the mbox b4 produced
	Patches      int    `json:"patches"`
	// PatchSHA256 hashes each message of the mbox: the patchset's hash
	// (KCIDB's) is made of them.
	PatchSHA256 []string `json:"patch_sha256,omitempty"`
	// DebugConfig hashes the tree's debug.config a sanitized build merged.
	DebugConfig string `json:"debug_config_sha256,omitempty"`
}

// prepare makes src the tree at base with the series applied, unless it
// already is; the series comes first, as it is the smaller download.
func (b TreeBuilder) prepare(work, src string) (TreeSource, error) {
	e := b.Entry
	var got TreeSource
	recipe := fmt.Sprintf("%s %s %s v%d %s %s", e.Tree, e.Base, e.MessageID, e.SeriesVersion, b.in.BaseCommit, b.in.SeriesFileSHA256)
	series := e.MessageID
	if e.Series != "" {
		series = e.Series
	}
	stamp := filepath.Join(work, "prepared.json")
	var old struct {
		Recipe string
		TreeSource
	}
	if data, err := os.ReadFile(stamp); err == nil && json.Unmarshal(data, &old) == nil && old.Recipe == recipe {
		if _, err := os.Stat(filepath.Join(src, "Makefile")); err == nil {
			return old.TreeSource, nil
		}
	}
	os.Remove(stamp)
	if err := os.MkdirAll(work, 0o755); err != nil {
		return got, err
	}

	mbox := filepath.Join(work, "series.mbox")
	if e.Series != "" {
		if err := localSeries(e.Series, mbox); err != nil {
			return got, err
		}
	} else {
		step := announce(b.Progress, "fetching series %s (b4 am)", e.MessageID)
		if err := fetchSeries(e.MessageID, e.SeriesVersion, mbox); err != nil {
			return got, err
		}
		step()
	}
	data, _ := os.ReadFile(mbox)
	got.Patches = bytes.Count(data, []byte("\nFrom ")) + 1
	got.PatchSHA256 = seriesPatches(data)
	sum := sha256.Sum256(data)
	got.SeriesSHA256 = hex.EncodeToString(sum[:])

	base := e.Base
	if b.in.BaseCommit != "" {
		base = b.in.BaseCommit
	}
	step := announce(b.Progress, "fetching %s at %s (git, depth 1)", e.Tree, e.Base)
	commit, err := fetchTree(src, e.Tree, base)
	if err != nil {
		return got, err
	}
	got.Commit = commit
	step()

	step = announce(b.Progress, "applying %d patches of %s (git am)", got.Patches, series)
	if out, err := git(src, "-c", "user.name=smct", "-c", "user.email=smct@localhost", "am", "--quiet", mbox); err != nil {
		git(src, "am", "--abort")
		return got, fmt.Errorf("the series %s does not apply on %s (%s): git am: %v\n%s", series, e.Base, commit[:12], err, textlines.Tail(out, 10))
	}
	step()
	js, _ := json.Marshal(struct {
		Recipe string
		TreeSource
	}{recipe, got})
	return got, os.WriteFile(stamp, js, 0o644)
}

// localSeries copies a series saved as an mbox to mbox, refusing a file
// that holds no patch.
func localSeries(path, mbox string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("series: %v", err)
	}
	if !bytes.Contains(data, []byte("\ndiff --git ")) {
		return fmt.Errorf("series %s holds no patch (no \"diff --git\" line): want an mbox of the series, as git format-patch --stdout or a mail client saves it", path)
	}
	return os.WriteFile(mbox, data, 0o644)
}

// fetchSeries writes the am-ready mbox of the series to mbox.
func fetchSeries(msgid string, version int, mbox string) error {
	args := []string{"am", "-o", "-"}
	if version > 0 {
		args = append(args, "-v", strconv.Itoa(version))
	}
	cmd := exec.Command("b4", append(args, msgid)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	what := "series " + msgid
	if version > 0 {
		what += fmt.Sprintf(" (v%d)", version)
	}
	if err != nil {
		if unreachable(stderr.String()) {
			return fmt.Errorf("cannot reach %s to fetch the %s: %s", host(stderr.String(), "lore.kernel.org"), what, reason(stderr.String()))
		}
		return fmt.Errorf("b4 am %s: %v\n%s", msgid, err, textlines.Tail(stderr.String(), 10))
	}
	if !bytes.Contains(stdout.Bytes(), []byte("\ndiff --git ")) {
		return fmt.Errorf("b4 found no patches for the %s\n%s", what, textlines.Tail(stderr.String(), 10))
	}
	return os.WriteFile(mbox, stdout.Bytes(), 0o644)
}

// fetchTree makes src (a git repository, created if needed) hold base of
// tree, checked out, and returns its commit. Only base itself is fetched.
func fetchTree(src, tree, base string) (string, error) {
	if _, err := os.Stat(filepath.Join(src, ".git")); err != nil {
		os.RemoveAll(src)
		if out, err := git("", "init", "--quiet", src); err != nil {
			return "", fmt.Errorf("git init %s: %v\n%s", src, err, out)
		}
	}
	git(src, "am", "--abort") // a failed earlier attempt
	ref := base
	if !fullCommit.MatchString(base) {
		ref = "refs/tags/" + base
	}
	// Give up on a stalled transfer rather than hang the run.
	if out, err := git(src, "-c", "http.lowSpeedLimit=1000", "-c", "http.lowSpeedTime=60", "fetch", "--quiet", "--depth", "1", "--no-tags", tree, ref); err != nil {
		if unreachable(out) {
			return "", fmt.Errorf("cannot reach %s to fetch %s: %s", tree, base, reason(out))
		}
		return "", fmt.Errorf("git fetch %s %s: %v\n%s", tree, ref, err, textlines.Tail(out, 10))
	}
	out, err := git(src, "rev-parse", "FETCH_HEAD^{commit}")
	if err != nil {
		return "", fmt.Errorf("git rev-parse FETCH_HEAD: %v\n%s", err, out)
	}
	commit := strings.TrimSpace(out)
	if fullCommit.MatchString(base) && commit != base {
		return "", fmt.Errorf("%s gave commit %s for %s", tree, commit, base)
	}
	if out, err := git(src, "checkout", "--quiet", "--force", "--detach", commit); err != nil {
		return "", fmt.Errorf("git checkout %s: %v\n%s", commit, err, textlines.Tail(out, 10))
	}
	if out, err := git(src, "clean", "--quiet", "-fdx"); err != nil {
		return "", fmt.Errorf("git clean: %v\n%s", err, textlines.Tail(out, 10))
	}
	return commit, nil
}

var fullCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

func git(dir string, args ...string) (string, error) {
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	cmd := exec.Command("git", args...)
	// Never ask for credentials: an unknown tree fails instead of waiting.
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// unreachable tells a network failure (no name, no route, refused, timed
// out) from git or b4 failing on what they fetched.
func unreachable(out string) bool {
	for _, s := range []string{"Could not resolve host", "Name or service not known", "Temporary failure in name resolution",
		"Failed to connect", "Failed to establish a new connection", "Connection refused", "Connection timed out",
		"Network is unreachable", "No route to host", "timed out", "ConnectionError", "unable to access", "Could not read from remote repository"} {
		if strings.Contains(out, s) {
			return true
		}
	}
	return false
}

var hostRe = regexp.MustCompile(`host='([^']+)'|Grabbing thread from ([^/\s]+)`)

// host is the host a b4 failure names, or def.
func host(out, def string) string {
	if m := hostRe.FindStringSubmatch(out); m != nil {
		return m[1] + m[2]
	}
	return def
}

var causeRe = regexp.MustCompile(`(Could not resolve host[^\n']*|Name or service not known|Temporary failure in name resolution|Connection refused|Network is unreachable|No route to host|Connection timed out|timed out)`)

// reason is the cause in a failure's output, in a few words: b4 prints a
// Python traceback, git a line or two.
func reason(out string) string {
	if m := causeRe.FindString(out); m != "" {
		return m
	}
	return textlines.Tail(out, 1)
}
