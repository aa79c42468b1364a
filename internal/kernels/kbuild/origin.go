// SPDX-License-Identifier: GPL-2.0-only

package kbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Origin is what a kernel was made from, as far as it is known: what a CI
// database's checkout and build records (KCIDB's) describe. "" and nil are
// not known.
type Origin struct {
	Tree     string // the git repository: a URL, or a path on this machine
	Commit   string // the tree's commit, 40 hex
	Describe string // the commit as asked for (a tag) or as git describe names it
	Changes  string // sha256 of a local tree's uncommitted changes
	Series   string // the series applied: its message-id, or a local mbox
	Patches  []Patch
	// Package is a Debian package and its version: the source built (the
	// reference kernel's linux-source), or the package a kernel came in.
	Package  string
	Config   string // the config's name: tinyconfig and the fragments merged
	Compiler string
}

// Patch is one patch applied on top of the tree or the source, in order.
type Patch struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
}

// PatchsetHash is KCIDB's hash of the patches: the sha256 of their
// sha256s, each newline-terminated, in order ("sha256sum *.patch | cut
// -c-64 | sha256sum"); "" without patches.
func PatchsetHash(patches []Patch) string {
	if len(patches) == 0 {
		return ""
	}
	h := sha256.New()
	for _, p := range patches {
		h.Write([]byte(p.SHA256 + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ConfigName names a config made from tinyconfig and fragments, as CI
// systems name theirs: "tinyconfig+common+x86_64".
func ConfigName(fragments []string) string {
	name := "tinyconfig"
	for _, f := range fragments {
		name += "+" + strings.TrimSuffix(filepath.Base(f), ".config")
	}
	return name
}

// origin is the reference kernel's: Debian's source and kernel/patches,
// in the order they are applied.
func (in Inputs) origin(fragments []string) Origin {
	o := Origin{Package: in.SourcePackage + " " + in.SourceVersion, Config: ConfigName(fragments), Compiler: in.Compiler}
	var names []string
	for f := range in.Files {
		if strings.HasPrefix(f, "patches/") {
			names = append(names, f)
		}
	}
	sort.Strings(names)
	for _, f := range names {
		o.Patches = append(o.Patches, Patch{Name: filepath.Base(f), SHA256: in.Files[f]})
	}
	return o
}

// origin is a b4 entry's: the tree at the commit its base resolved to,
// with the series. A cached build's source is read back from its record.
func (b TreeBuilder) origin(in TreeInputs, src TreeSource) Origin {
	e := b.Entry
	o := Origin{Tree: e.Tree, Commit: src.Commit, Describe: e.Base, Series: e.MessageID,
		Config: ConfigName(Fragments(e, b.Arch.Name, b.KernelDir)), Compiler: in.Compiler}
	if e.Series != "" {
		o.Series = e.Series
	}
	for i, sum := range src.PatchSHA256 {
		o.Patches = append(o.Patches, Patch{Name: patchName(i), SHA256: sum})
	}
	return o
}

// origin is a local tree's, as it was when built.
func (in LocalInputs) origin(state TreeState, fragments []string) Origin {
	return Origin{Tree: state.Dir, Commit: state.Commit, Describe: state.Describe, Changes: state.Changes,
		Config: ConfigName(fragments), Compiler: in.Compiler}
}

// patchName numbers the messages of a series, as git format-patch does.
func patchName(i int) string { return fmt.Sprintf("%04d.patch", i+1) }

// seriesPatches hashes each message of a series' mbox, the patches b4
// wrote one after another.
func seriesPatches(mbox []byte) []string {
	starts := mboxFrom.FindAllIndex(mbox, -1)
	var sums []string
	for i, at := range starts {
		end := len(mbox)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		sum := sha256.Sum256(mbox[at[0]:end])
		sums = append(sums, hex.EncodeToString(sum[:]))
	}
	return sums
}

// mboxFrom is the line that starts a message in an mbox, as git
// format-patch and b4 write it ("From <commit> Mon Sep 17 00:00:00 2001"),
// and not a line of a message's text that begins with "From ".
var mboxFrom = regexp.MustCompile(`(?m)^From \S+ \w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}$`)

// cachedSource reads back what a cached b4 build was made from: its
// record beside the image.
func cachedSource(image string) TreeSource {
	var src TreeSource
	if data, err := os.ReadFile(filepath.Join(filepath.Dir(image), "inputs.json")); err == nil {
		json.Unmarshal(data, &src)
	}
	return src
}
