// SPDX-License-Identifier: GPL-2.0-only

// Package images reads images.lock, the pinned list of kernels the suite
// boots, and fetches and verifies them into a local cache.
package images

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ftrace-stackmap/conformance/internal/apt"
	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/atomicfile"
	"github.com/ftrace-stackmap/conformance/internal/buildlock"
	"github.com/ftrace-stackmap/conformance/internal/cachelimit"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kchoice"
	"github.com/ftrace-stackmap/conformance/internal/progress"
)

// Lock is images.lock.
type Lock struct {
	Default string  `yaml:"default"` // the entry `make qemu-test` boots without IMAGE=
	Entries []Entry `yaml:"entries"`
	// Tools are programs the guest may need besides the suite, pinned like
	// a debian entry's kernel: the file at path inside the package.
	Tools []Entry `yaml:"tools"`
}

// Entry is one kernel, pinned for each arch it exists for.
type Entry struct {
	Name        string               `yaml:"name"`
	Kind        string               `yaml:"kind"` // "debian", "build" or "b4"
	Description string               `yaml:"description"`
	Arches      map[string]ArchImage `yaml:"arches"`
	// HasStackmap false marks a kernel known to lack the feature (a
	// distribution's): its stackmap specs may be UNSUPPORTED without
	// failing the run. Unset means it should have it.
	HasStackmap *bool `yaml:"has_stackmap,omitempty"`

	// A b4 entry: the git tree at base with the series posted as
	// message_id applied (b4 am), built like the reference kernel with
	// kernel/config/<name>.config for each name in config, plus the
	// arch's own fragment.
	// Tree may also be a local repository (file:// or a path, relative to
	// the lock's directory); then base is any revision it has. Series, a
	// local mbox (relative to the lock's directory), replaces message_id
	// for a series not posted, or saved from a mail client.
	Tree          string   `yaml:"tree,omitempty"`
	Base          string   `yaml:"base,omitempty"` // a 40-hex commit or a tag
	MessageID     string   `yaml:"message_id,omitempty"`
	Series        string   `yaml:"series,omitempty"`
	SeriesVersion int      `yaml:"series_version,omitempty"` // 0: the newest b4 finds
	Config        []string `yaml:"config,omitempty"`
}

// ArchImage pins one kernel image. A debian entry names a package and the
// image inside it; a build entry (the reference kernel, built here from
// kernel/) and a b4 entry record the hash of their build inputs (a b4
// entry's are empty until pinned).
type ArchImage struct {
	Package      string `yaml:"package,omitempty"`
	Version      string `yaml:"version,omitempty"`
	DebSHA256    string `yaml:"deb_sha256,omitempty"`
	Path         string `yaml:"path,omitempty"` // the image inside the package
	InputsSHA256 string `yaml:"inputs_sha256,omitempty"`
	// KernelSHA256 hashes the files of kernel/ a build entry's inputs
	// hold (kbuild.FilesSHA256): a unit test holds kernel/ to it.
	KernelSHA256 string `yaml:"kernel_sha256,omitempty"`
	ImageSHA256  string `yaml:"image_sha256"`
}

// Kinds of entries.
const (
	KindDebian = "debian"
	KindBuild  = "build"
	KindB4     = "b4"
)

var kinds = []string{KindDebian, KindBuild, KindB4}

// Read parses and checks a lock file.
func Read(path string) (*Lock, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var l Lock
	// A misspelled key (series-version: for series_version:) would be
	// ignored and change what is tested: refuse unknown keys.
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	for i := range l.Entries {
		l.Entries[i].resolvePaths(filepath.Dir(path))
	}
	if err := l.check(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &l, nil
}

// resolvePaths makes a b4 entry's local tree and series absolute, from dir.
func (e *Entry) resolvePaths(dir string) {
	if e.Kind != KindB4 {
		return
	}
	// host:path is git's scp-like syntax for ssh, not a path.
	if e.Tree != "" && !strings.Contains(e.Tree, ":") && !filepath.IsAbs(e.Tree) {
		e.Tree = filepath.Join(dir, e.Tree)
	}
	if e.Series != "" && !filepath.IsAbs(e.Series) {
		e.Series = filepath.Join(dir, e.Series)
	}
}

// LocalTree is the path of a b4 entry's tree when it is on this machine
// (file:// or a path), "" for a remote one.
func (e *Entry) LocalTree() string {
	if strings.HasPrefix(e.Tree, "file://") {
		return strings.TrimPrefix(e.Tree, "file://")
	}
	if filepath.IsAbs(e.Tree) {
		return e.Tree
	}
	return ""
}

func (l *Lock) check() error {
	seen := map[string]bool{}
	for i := range l.Entries {
		e := &l.Entries[i]
		if e.Name == "" || seen[e.Name] {
			return fmt.Errorf("entry name %q empty or repeated", e.Name)
		}
		seen[e.Name] = true
		if err := CheckEntry(e); err != nil {
			return err
		}
	}
	if !seen[l.Default] {
		return fmt.Errorf("default %q is not an entry", l.Default)
	}
	tools := map[string]bool{}
	for i := range l.Tools {
		t := &l.Tools[i]
		if t.Name == "" || tools[t.Name] {
			return fmt.Errorf("tool name %q empty or repeated", t.Name)
		}
		tools[t.Name] = true
		if t.Kind != KindDebian {
			return fmt.Errorf("tool %s: kind %q, want %s", t.Name, t.Kind, KindDebian)
		}
		if err := CheckEntry(t); err != nil {
			return err
		}
	}
	return nil
}

// WithStackmap says whether the entry's kernel is meant to have the
// stackmap feature: unless has_stackmap: false says otherwise.
func (e *Entry) WithStackmap() bool { return e.HasStackmap == nil || *e.HasStackmap }

// Tool finds a pinned tool by name.
func (l *Lock) Tool(name string) (*Entry, error) {
	for i := range l.Tools {
		if l.Tools[i].Name == name {
			return &l.Tools[i], nil
		}
	}
	return nil, fmt.Errorf("images.lock pins no tool %q", name)
}

// CheckEntry checks one entry by its form, offline.
func CheckEntry(e *Entry) error {
	if !slices.Contains(kinds, e.Kind) {
		return fmt.Errorf("entry %s: kind %q, want one of %v", e.Name, e.Kind, kinds)
	}
	if !e.WithStackmap() && e.Kind != KindDebian {
		// A kernel built here is built with the feature: its absence is
		// the defect a run must catch, not an expectation.
		return fmt.Errorf("entry %s: has_stackmap: false is for distribution kernels (kind %s); a %s entry is built with the feature", e.Name, KindDebian, e.Kind)
	}
	if len(e.Arches) == 0 {
		return fmt.Errorf("entry %s: no arches", e.Name)
	}
	if e.Kind == KindB4 {
		if err := e.checkRecipe(); err != nil {
			return fmt.Errorf("entry %s: %v", e.Name, err)
		}
	}
	for name, a := range e.Arches {
		if !arch.Known(name) {
			return fmt.Errorf("entry %s: arch %q, want arm64 or x86_64", e.Name, name)
		}
		switch {
		case e.Kind == KindDebian && (a.Package == "" || a.Version == "" || a.Path == "" || len(a.DebSHA256) != 64 || len(a.ImageSHA256) != 64):
			return fmt.Errorf("entry %s/%s: package, version, path, deb_sha256 and image_sha256 are all required", e.Name, name)
		case e.Kind == KindBuild && (len(a.InputsSHA256) != 64 || len(a.ImageSHA256) != 64 || len(a.KernelSHA256) != 64):
			return fmt.Errorf("entry %s/%s: inputs_sha256, kernel_sha256 and image_sha256 are required", e.Name, name)
		case e.Kind == KindB4 && !(a.InputsSHA256 == "" && a.ImageSHA256 == "" || len(a.InputsSHA256) == 64 && len(a.ImageSHA256) == 64):
			return fmt.Errorf("entry %s/%s: inputs_sha256 and image_sha256 are both empty (not pinned yet) or both pinned", e.Name, name)
		}
	}
	return nil
}

var (
	fullCommit  = regexp.MustCompile(`^[0-9a-f]{40}$`)
	shortCommit = regexp.MustCompile(`^[0-9a-f]{7,39}$`)
	tagName     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/+-]*$`)
	configName  = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
)

// checkRecipe checks a b4 entry's recipe offline, by its form only; that
// its fragments exist is for whoever knows kernel/ (kbuild.Check).
func (e *Entry) checkRecipe() error {
	local := e.LocalTree()
	u, err := url.Parse(e.Tree)
	if local == "" && (err != nil || !slices.Contains([]string{"https", "http", "git", "ssh"}, u.Scheme) || u.Host == "") {
		return fmt.Errorf("tree %q: want a git URL (https://, git://, ssh://, file://) or a path", e.Tree)
	}
	switch {
	case local != "" && e.Base != "" && !strings.ContainsAny(e.Base, " \t\r\n") && !strings.HasPrefix(e.Base, "-"):
		// A local tree answers for any revision it has.
	case fullCommit.MatchString(e.Base):
	case shortCommit.MatchString(e.Base):
		// git cannot fetch a commit by an abbreviation.
		return fmt.Errorf("base %q: an abbreviated commit; give all 40 hex digits, or a tag", e.Base)
	case !tagName.MatchString(e.Base) || strings.Contains(e.Base, "..") || strings.HasSuffix(e.Base, ".lock") || strings.HasSuffix(e.Base, "/"):
		return fmt.Errorf("base %q: want a 40-hex commit or a tag name", e.Base)
	}
	switch {
	case e.MessageID != "" && e.Series != "":
		return fmt.Errorf("message_id and series both name a series: give one")
	case e.Series != "":
	case e.MessageID == "":
		return fmt.Errorf("no series: give message_id (a posted series) or series (a local mbox)")
	default:
		left, right, _ := strings.Cut(e.MessageID, "@")
		if left == "" || right == "" || strings.Contains(right, "@") || strings.ContainsAny(e.MessageID, "<> \t\r\n") {
			return fmt.Errorf("message_id %q: want a message-id (left@right, without <> or spaces)", e.MessageID)
		}
	}
	if e.SeriesVersion < 0 {
		return fmt.Errorf("series_version %d: want a positive version, or none for the newest", e.SeriesVersion)
	}
	if len(e.Config) == 0 {
		return fmt.Errorf("config: name the kernel/config fragments to build with (e.g. [common])")
	}
	for i, c := range e.Config {
		switch {
		case !configName.MatchString(c):
			return fmt.Errorf("config %q: want the name of a kernel/config/<name>.config fragment", c)
		case arch.Known(c):
			return fmt.Errorf("config %q: an arch's own fragment is added for its arch only; do not list it", c)
		case slices.Contains(e.Config[:i], c):
			return fmt.Errorf("config %q: repeated", c)
		}
	}
	return nil
}

// Entry finds an entry by name.
func (l *Lock) Entry(name string) (*Entry, error) {
	for i := range l.Entries {
		if l.Entries[i].Name == name {
			return &l.Entries[i], nil
		}
	}
	var names []string
	for _, e := range l.Entries {
		names = append(names, e.Name)
	}
	sort.Strings(names)
	return nil, fmt.Errorf("images.lock has no entry %q (have: %v)", name, names)
}

// BuiltHere says whether the entry's kernel is built here (the
// reference, a b4 series) rather than fetched as a distribution built it:
// only such a kernel can be built in the sanitized lane.
func (e Entry) BuiltHere() bool { return e.Kind == KindBuild || e.Kind == KindB4 }

// ForLane narrows names to the entries the lane can run. The plain lane
// runs them all. The sanitized lane builds its kernels: an entry asked for
// by name that is fetched as built is refused; of the defaults (asked
// false) such entries are left out, and named in left.
func (l *Lock) ForLane(names []string, ln kchoice.Lane, asked bool) (kept, left []string, err error) {
	if !ln.BuildsHere() {
		return names, nil, nil
	}
	for _, n := range names {
		e, err := l.Entry(n)
		if err != nil {
			return nil, nil, err
		}
		switch {
		case e.BuiltHere():
			kept = append(kept, n)
		case asked:
			return nil, nil, fmt.Errorf("IMAGE=%s is a packaged kernel (kind %s), fetched as built: SANITIZE=1 builds its kernel here (the reference, a b4 entry, TREE=)", e.Name, e.Kind)
		default:
			left = append(left, n)
		}
	}
	return kept, left, nil
}

// InLane is ForLane that says on notes which packaged entries the lane
// leaves out.
func (l *Lock) InLane(names []string, ln kchoice.Lane, asked bool, notes io.Writer) ([]string, error) {
	kept, left, err := l.ForLane(names, ln, asked)
	if err == nil && len(left) > 0 {
		fmt.Fprintf(notes, "note: SANITIZE=1 builds its kernels: the packaged %s are left out\n", strings.Join(left, ", "))
	}
	return kept, err
}

// Names checks a comma-separated list of entries against the lock; ""
// is every entry, in the lock's order.
func (l *Lock) Names(list string) ([]string, error) {
	if list == "" {
		var all []string
		for _, e := range l.Entries {
			all = append(all, e.Name)
		}
		return all, nil
	}
	names := strings.Split(list, ",")
	for _, n := range names {
		if _, err := l.Entry(n); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// ErrHashMismatch says a download or an extracted image is not what the lock pinned.
var ErrHashMismatch = errors.New("hash mismatch")

// Fetch returns the path of a debian entry's verified image for arch,
// downloading it into cacheDir on first use. One process at a time
// fetches an image; the others wait for it and find it there. The image
// is in use until the process ends: no pruning removes it.
func Fetch(e *Entry, target arch.Arch, cacheDir string, progress *progress.Reporter) (string, error) {
	archName := target.Name
	a, ok := e.Arches[archName]
	if !ok {
		return "", fmt.Errorf("images.lock entry %s has no %s image", e.Name, archName)
	}
	out := cachelimit.Images.In(cacheDir, a.ImageSHA256)
	// In use before it is looked at, so that no pruner takes it in
	// between; again once there, if someone (this fetch) held its lock.
	cachelimit.Use(out)
	if !fetched(out, a.ImageSHA256) {
		if err := fetch(e, a, target, cacheDir, out, progress); err != nil {
			return "", err
		}
	}
	cachelimit.Use(out)
	return out, nil
}

// fetch downloads the image a pins into out, under out's lock.
func fetch(e *Entry, a ArchImage, target arch.Arch, cacheDir, out string, progress *progress.Reporter) error {
	release, err := buildlock.Hold(out+".lock", fmt.Sprintf("fetching %s %s (%s)", a.Package, a.Version, target.Deb), progress.Always())
	if err != nil {
		return err
	}
	defer release()
	if fetched(out, a.ImageSHA256) {
		return nil
	}
	tmp, err := os.MkdirTemp(cacheDir, "download-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(progress, "fetching %s %s (%s) ...\n", a.Package, a.Version, target.Deb)
	deb, err := apt.Download(tmp, a.Package, a.Version, target.Deb)
	if errors.Is(err, apt.ErrVanished) {
		return fmt.Errorf("%v; re-pin entry %s in images.lock to a version `apt-cache policy` lists (package, version, deb_sha256, image_sha256)", err, e.Name)
	}
	if err != nil {
		return err
	}
	if sum, err := FileSHA256(deb); err != nil || sum != a.DebSHA256 {
		return fmt.Errorf("%w: %s has sha256 %s, images.lock pins %s; the archive changed under the pin: check it and re-pin entry %s", ErrHashMismatch, filepath.Base(deb), sum, a.DebSHA256, e.Name)
	}
	return atomicfile.Produce(out, 0o644, func(tmp string) error {
		if err := apt.Extract(deb, a.Path, tmp); err != nil {
			return err
		}
		if sum, _ := FileSHA256(tmp); sum != a.ImageSHA256 {
			return fmt.Errorf("%w: %s from %s has sha256 %s, images.lock pins %s; check the package and re-pin entry %s", ErrHashMismatch, a.Path, filepath.Base(deb), sum, a.ImageSHA256, e.Name)
		}
		return nil
	})
}

// fetched says whether the image at path is there with its pinned sum.
func fetched(path, sum string) bool {
	got, err := FileSHA256(path)
	return err == nil && got == sum
}

// FileSHA256 is the hex SHA-256 of a file.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
