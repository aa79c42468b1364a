// SPDX-License-Identifier: GPL-2.0-only

// Package korigin is what a kernel was made from, as plain data: kbuild
// fills it in, results writes it into KCIDB's records, and neither needs
// the other for it.
package korigin

import (
	"crypto/sha256"
	"encoding/hex"
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
