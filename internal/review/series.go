// SPDX-License-Identifier: GPL-2.0-only

// Package review walks a patch series the way it is reviewed: patch by
// patch, from the bare base to the whole series, building and testing each
// prefix on every arch, and tells which patch changed which requirement.
package review

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/reply"
)

// Patch is one patch of a series, as an mbox git am applies.
type Patch struct {
	Subject string
	Mbox    []byte `json:"-"`
}

// Series is what a walk applies: patches on a base revision of a tree.
type Series struct {
	Name    string // how the user named it, for the reports
	Base    string // the revision of the tree the series applies on
	Patches []Patch
	// Thread is the series as posted, cover letter included, when it was
	// (an mbox, a message-id): what a reply answers. Nil for a git range.
	Thread    []byte `json:"-"`
	MessageID string `json:"-"` // the message-id given, "" for a file
}

var rangeRe = regexp.MustCompile(`^([^.\s]+)\.\.([^.\s]+)$`)

// ReadSeries reads a series named as a git range base..head of tree, a
// local mbox file, or a message-id (fetched with b4). An mbox or a posted
// series applies on base, the tree's HEAD when empty.
func ReadSeries(spec, tree, base string) (Series, error) {
	s := Series{Name: spec, Base: base}
	if s.Base == "" {
		s.Base = "HEAD"
	}
	var mbox []byte
	switch {
	case rangeRe.MatchString(spec) && !fileExists(spec):
		m := rangeRe.FindStringSubmatch(spec)
		s.Base = m[1]
		out, err := gitOut(tree, "format-patch", "--stdout", "--no-signature", spec)
		if err != nil {
			return s, fmt.Errorf("SERIES=%s: %v", spec, err)
		}
		mbox = out
	case fileExists(spec):
		data, err := os.ReadFile(spec)
		if err != nil {
			return s, fmt.Errorf("SERIES=%s: %v", spec, err)
		}
		mbox = data
		s.Thread = data
	case strings.Contains(spec, "@") && !strings.ContainsAny(spec, " /<>"):
		out, err := exec.Command("b4", "am", "-o", "-", spec).Output()
		if err != nil {
			return s, fmt.Errorf("SERIES=%s: b4 am: %v", spec, err)
		}
		mbox = out
		// The thread keeps the cover letter b4 am leaves out; without it
		// there is no reply, not no walk.
		s.Thread, _, _ = reply.Thread(spec)
		s.MessageID = spec
	default:
		return s, fmt.Errorf("SERIES=%s: want a git range base..head of TREE, an mbox file, or a message-id", spec)
	}
	patches, err := Split(mbox)
	if err != nil {
		return s, fmt.Errorf("SERIES=%s: %v", spec, err)
	}
	s.Patches = patches
	return s, nil
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// Split cuts an mbox into its patches, in the order of their [PATCH k/N]
// numbers when they have them (a mail client may save them in any order),
// leaving out messages without a diff (the cover letter, replies).
func Split(mbox []byte) ([]Patch, error) {
	dir, err := os.MkdirTemp("", "smct-series-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "series.mbox")
	if err := os.WriteFile(path, mbox, 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command("git", "mailsplit", "-o"+dir, path)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("git mailsplit: %v: %s", err, out)
	}
	names, _ := filepath.Glob(filepath.Join(dir, "[0-9][0-9][0-9][0-9]"))
	sort.Strings(names)
	type numbered struct {
		n int
		p Patch
	}
	var found []numbered
	for i, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		if !bytes.Contains(data, []byte("\ndiff --git ")) {
			continue
		}
		subject := header(data, "Subject")
		n := i + 1
		if m := patchNumber.FindStringSubmatch(subject); m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		found = append(found, numbered{n, Patch{Subject: cleanSubject(subject), Mbox: data}})
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("no patch in it (no message with a diff)")
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].n < found[j].n })
	patches := make([]Patch, len(found))
	for i, f := range found {
		patches[i] = f.p
	}
	return patches, nil
}

var (
	patchNumber = regexp.MustCompile(`\[[^\]]*?(\d+)/\d+\]`)
	subjectTag  = regexp.MustCompile(`^\s*(\[[^\]]*\]\s*)+`)
)

// header is a mail header's value, its folded lines joined.
func header(msg []byte, name string) string {
	head, _, _ := bytes.Cut(msg, []byte("\n\n"))
	lines := strings.Split(string(head), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(strings.ToLower(l), strings.ToLower(name)+":") {
			continue
		}
		v := strings.TrimSpace(l[len(name)+1:])
		for _, c := range lines[i+1:] {
			if !strings.HasPrefix(c, " ") && !strings.HasPrefix(c, "\t") {
				break
			}
			v += " " + strings.TrimSpace(c)
		}
		return v
	}
	return ""
}

// cleanSubject drops the [PATCH ...] tags.
func cleanSubject(s string) string {
	return strings.TrimSpace(subjectTag.ReplaceAllString(s, ""))
}

func gitOut(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
