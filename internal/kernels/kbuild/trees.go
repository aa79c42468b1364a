// SPDX-License-Identifier: GPL-2.0-only

package kbuild

import (
	"path/filepath"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/cachelimit"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kchoice"
)

// The cache's kbuild area is laid out here alone: per arch and lane
// ("arm64", "arm64-sanitized") the patched source, the build directory
// and its log under the lane's lock, and the unpacked tarball that every
// lane's source links to, under its own lock. cachelimit lists and prunes
// the area's entries by asking this package.
func init() { cachelimit.Lists(cachelimit.Kbuild, buildTrees) }

// tree is one arch's build tree in one lane.
type tree struct{ src, out, log, lock string }

func treeOf(work, archName string, l kchoice.Lane) tree {
	name := archName + l.Suffix()
	return tree{src: filepath.Join(work, "src-"+name), out: filepath.Join(work, "out-"+name),
		log: filepath.Join(work, "build-"+name+".log"), lock: filepath.Join(work, name+".lock")}
}

// pristineDir is the unpacked tarball; pristineDir+".tmp" while it is
// unpacked, pristineDir+".lock" its lock.
func pristineDir(work string) string { return filepath.Join(work, "pristine") }

// buildTrees are the area's entries: each lane's tree, and the pristine
// source, which any lane's lock keeps.
func buildTrees(_, dir string) []cachelimit.Entry {
	var es []cachelimit.Entry
	pristine := pristineDir(dir)
	every := []string{pristine + ".lock"}
	for _, a := range arch.Names() {
		for _, l := range []kchoice.Lane{kchoice.Plain, kchoice.Sanitized} {
			t := treeOf(dir, a, l)
			every = append(every, t.lock)
			es = cachelimit.Present(es, cachelimit.Entry{Name: a + l.Suffix(), Paths: []string{t.src, t.out, t.log}, Locks: []string{t.lock}})
		}
	}
	return cachelimit.Present(es, cachelimit.Entry{Name: "pristine", Paths: []string{pristine, pristine + ".tmp"}, Locks: every})
}
