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

	"github.com/ftrace-stackmap/conformance/internal/kernels/korigin"
)

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
func (in Inputs) origin(fragments []string) korigin.Origin {
	o := korigin.Origin{Package: in.SourcePackage + " " + in.SourceVersion, Config: ConfigName(fragments), Compiler: in.Compiler}
	var names []string
	for f := range in.Files {
		if strings.HasPrefix(f, "patches/") {
			names = append(names, f)
		}
	}
	sort.Strings(names)
	for _, f := range names {
		o.Patches = append(o.Patches, korigin.Patch{Name: filepath.Base(f), SHA256: in.Files[f]})
	}
	return o
}

// origin is a b4 entry's: the tree at the commit its base resolved to,
// with the series. A cached build's source is read back from its record.
func (b TreeBuilder) origin(in TreeInputs, src TreeSource) korigin.Origin {
	e := b.Entry
	o := korigin.Origin{Tree: e.Tree, Commit: src.Commit, Describe: e.Base, Series: e.MessageID,
		Config: ConfigName(withLane(Fragments(e, b.Arch.Name, b.KernelDir), b.Lane, "", b.KernelDir)), Compiler: in.Compiler}
	if e.Series != "" {
		o.Series = e.Series
	}
	for i, sum := range src.PatchSHA256 {
		o.Patches = append(o.Patches, korigin.Patch{Name: patchName(i), SHA256: sum})
	}
	return o
}

// origin is a local tree's, as it was when built.
func (in LocalInputs) origin(state TreeState, fragments []string) korigin.Origin {
	return korigin.Origin{Tree: state.Dir, Commit: state.Commit, Describe: state.Describe, Changes: state.Changes,
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
