// SPDX-License-Identifier: GPL-2.0-only

// Package kchoice is the kernel a run asks for: a file (KERNEL=), a tree
// built here (TREE=) or an images.lock entry (IMAGE=), in a lane
// (SANITIZE=). It goes whole from the command line to the resolver
// (kernels.Resolve) and into the run's record.
package kchoice

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Choice is the kernel a run asks for. Kernel overrides Tree, Tree
// overrides Image; none is the lock's default entry.
type Choice struct {
	Kernel string // a kernel image path
	Tree   string // a kernel source tree, built here
	Image  string // an images.lock entry; "" for the lock's default
	Lane   Lane
}

// Lane is a kernel lane: the plain one (the zero Lane), or the sanitized
// one, whose kernels are built with the tree's debug.config and the
// project's sanitize.config. A lane carries its own cache suffix, its
// words in reports, its bench file and its matrix rule.
type Lane int

const (
	Plain Lane = iota
	Sanitized
)

// ParseLane reads SANITIZE=: "1" (or true, yes) the sanitized lane; "",
// "0" (or false, no) the plain one.
func ParseLane(v string) (Lane, error) {
	switch strings.ToLower(v) {
	case "", "0", "false", "no":
		return Plain, nil
	case "1", "true", "yes":
		return Sanitized, nil
	}
	return Plain, fmt.Errorf("want 1 or 0")
}

// Set makes *Lane a flag.Value (-sanitize 1).
func (l *Lane) Set(v string) error {
	p, err := ParseLane(v)
	*l = p
	return err
}

// String is the lane as SANITIZE= says it: "1", or "" for the plain one.
func (l Lane) String() string {
	if l == Sanitized {
		return "1"
	}
	return ""
}

// IsSanitized says whether the lane's kernels carry the kernel's checkers.
func (l Lane) IsSanitized() bool { return l == Sanitized }

// Suffix is the suffix of a lane's build directories, logs, locks and
// cached kernels: "" for the plain lane, so that its paths stay what
// they were.
func (l Lane) Suffix() string {
	if l == Sanitized {
		return "-sanitized"
	}
	return ""
}

// Words names a kernel built here in the lane where a report names it:
// "" for the plain lane.
func (l Lane) Words() string {
	if l == Sanitized {
		return "sanitized (debug.config)"
	}
	return ""
}

// BenchFile is the file of internal/bench that keeps the lane's last
// figures: each lane is compared with its own.
func (l Lane) BenchFile() string { return "last" + l.Suffix() + ".json" }

// BuildsHere says whether the lane builds every kernel it boots: a
// packaged kernel has no sanitized build, so a matrix in the sanitized
// lane leaves packaged entries out (images.Lock.ForLane).
func (l Lane) BuildsHere() bool { return l == Sanitized }

// MarshalJSON keeps a build's inputs as they were hashed before the lane
// was a type: the sanitized lane true, the plain one omitted (omitempty).
func (l Lane) MarshalJSON() ([]byte, error) { return json.Marshal(l == Sanitized) }

// UnmarshalJSON reads the lane back from true or false.
func (l *Lane) UnmarshalJSON(b []byte) error {
	var on bool
	if err := json.Unmarshal(b, &on); err != nil {
		return err
	}
	*l = Plain
	if on {
		*l = Sanitized
	}
	return nil
}
