// Package images reads images.lock, the pinned list of kernels the suite
// boots, and fetches and verifies them into a local cache.
package images

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ftrace-stackmap/conformance/debian"
)

// Lock is images.lock.
type Lock struct {
	Default string  `yaml:"default"` // the entry `make qemu-test` boots without IMAGE=
	Entries []Entry `yaml:"entries"`
}

// Entry is one kernel, pinned for each arch it exists for.
type Entry struct {
	Name        string               `yaml:"name"`
	Kind        string               `yaml:"kind"` // "debian" or "build"
	Description string               `yaml:"description"`
	Arches      map[string]ArchImage `yaml:"arches"`
}

// ArchImage pins one kernel image. A debian entry names a package and the
// image inside it; a build entry (the reference kernel, built here from
// kernel/) records the hash of its build inputs.
type ArchImage struct {
	Package      string `yaml:"package,omitempty"`
	Version      string `yaml:"version,omitempty"`
	DebSHA256    string `yaml:"deb_sha256,omitempty"`
	Path         string `yaml:"path,omitempty"` // the image inside the package
	InputsSHA256 string `yaml:"inputs_sha256,omitempty"`
	ImageSHA256  string `yaml:"image_sha256"`
}

// Kinds of entries.
const (
	KindDebian = "debian"
	KindBuild  = "build"
)

var kinds = []string{KindDebian, KindBuild}

// Read parses and checks a lock file.
func Read(path string) (*Lock, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var l Lock
	if err := yaml.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if err := l.check(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &l, nil
}

func (l *Lock) check() error {
	seen := map[string]bool{}
	for _, e := range l.Entries {
		if e.Name == "" || seen[e.Name] {
			return fmt.Errorf("entry name %q empty or repeated", e.Name)
		}
		seen[e.Name] = true
		if !slices.Contains(kinds, e.Kind) {
			return fmt.Errorf("entry %s: kind %q, want one of %v", e.Name, e.Kind, kinds)
		}
		if len(e.Arches) == 0 {
			return fmt.Errorf("entry %s: no arches", e.Name)
		}
		for arch, a := range e.Arches {
			if _, ok := debian.DebArch[arch]; !ok {
				return fmt.Errorf("entry %s: arch %q, want arm64 or x86_64", e.Name, arch)
			}
			switch {
			case e.Kind == KindDebian && (a.Package == "" || a.Version == "" || a.Path == "" || len(a.DebSHA256) != 64 || len(a.ImageSHA256) != 64):
				return fmt.Errorf("entry %s/%s: package, version, path, deb_sha256 and image_sha256 are all required", e.Name, arch)
			case e.Kind == KindBuild && (len(a.InputsSHA256) != 64 || len(a.ImageSHA256) != 64):
				return fmt.Errorf("entry %s/%s: inputs_sha256 and image_sha256 are required", e.Name, arch)
			}
		}
	}
	if !seen[l.Default] {
		return fmt.Errorf("default %q is not an entry", l.Default)
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

// ErrHashMismatch says a download or an extracted image is not what the lock pinned.
var ErrHashMismatch = errors.New("hash mismatch")

// Fetch returns the path of a debian entry's verified image for arch,
// downloading it into cacheDir on first use.
func Fetch(e *Entry, arch, cacheDir string, progress io.Writer) (string, error) {
	a, ok := e.Arches[arch]
	if !ok {
		return "", fmt.Errorf("images.lock entry %s has no %s image", e.Name, arch)
	}
	out := filepath.Join(cacheDir, "images", a.ImageSHA256)
	if sum, err := FileSHA256(out); err == nil && sum == a.ImageSHA256 {
		return out, nil
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cacheDir, "download-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(progress, "fetching %s %s (%s) ...\n", a.Package, a.Version, debian.DebArch[arch])
	deb, err := debian.Download(tmp, a.Package, a.Version, debian.DebArch[arch])
	if errors.Is(err, debian.ErrVanished) {
		return "", fmt.Errorf("%v; re-pin entry %s in images.lock to a version `apt-cache policy` lists (package, version, deb_sha256, image_sha256)", err, e.Name)
	}
	if err != nil {
		return "", err
	}
	if sum, err := FileSHA256(deb); err != nil || sum != a.DebSHA256 {
		return "", fmt.Errorf("%w: %s has sha256 %s, images.lock pins %s; the archive changed under the pin: check it and re-pin entry %s", ErrHashMismatch, filepath.Base(deb), sum, a.DebSHA256, e.Name)
	}
	if err := debian.Extract(deb, a.Path, out+".tmp"); err != nil {
		return "", err
	}
	if sum, _ := FileSHA256(out + ".tmp"); sum != a.ImageSHA256 {
		os.Remove(out + ".tmp")
		return "", fmt.Errorf("%w: %s from %s has sha256 %s, images.lock pins %s; check the package and re-pin entry %s", ErrHashMismatch, a.Path, filepath.Base(deb), sum, a.ImageSHA256, e.Name)
	}
	return out, os.Rename(out+".tmp", out)
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

// Pin records a build entry's inputs and image hashes for an arch in the
// lock file. It edits the two lines in place, so the file keeps its layout
// and comments, and checks the result still reads.
func Pin(path, entry, arch, inputs, image string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.Split(string(data), "\n")
	inEntry, inArch, archIndent, set := false, false, 0, 0
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		indent := len(l) - len(strings.TrimLeft(l, " "))
		switch {
		case strings.HasPrefix(trimmed, "- name:"):
			inEntry, inArch = strings.TrimSpace(strings.TrimPrefix(trimmed, "- name:")) == entry, false
		case inEntry && trimmed == arch+":":
			inArch, archIndent = true, indent
		case inArch && trimmed != "" && indent <= archIndent:
			inArch = false
		case inArch:
			for key, v := range map[string]string{"inputs_sha256": inputs, "image_sha256": image} {
				if strings.HasPrefix(trimmed, key+":") {
					lines[i] = l[:indent] + key + ": " + v
					set++
				}
			}
		}
	}
	if set != 2 {
		return fmt.Errorf("%s: entry %s has no %s block with inputs_sha256 and image_sha256 to pin", path, entry, arch)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		return err
	}
	if _, err := Read(tmp); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
