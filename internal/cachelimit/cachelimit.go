// SPDX-License-Identifier: GPL-2.0-only

// Package cachelimit keeps each area of the cache (built kernels, unpacked
// vmlinux, fetched images, build trees, ...) under a byte cap, removing
// the least recently used entries first, as ccache and Go's build cache
// do. Use is recorded explicitly, as the entry's modification time, where
// a run uses it (access times are often not kept). An entry whose lock
// someone holds, preparing it or using it, is never removed.
package cachelimit

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/buildlock"
)

// Entry is what is removed together: a kernel's directory, an image, a
// build tree with its log.
type Entry struct {
	Name  string
	Paths []string // in the area's directory; a missing one is no matter
	// Locks are taken without waiting before the entry is removed: one
	// that anyone holds keeps it.
	Locks []string
	// OwnLock says Locks[0] guards this entry alone: it goes with it.
	OwnLock bool
}

// Use records that this run uses the entry at path (a kernel, an unpacked
// vmlinux, an image) and holds its lock, path+".lock", shared until the
// process ends, so that no pruning removes it under the run's boots. It
// does not wait for whoever holds the lock alone (preparing the entry):
// call it before looking for the entry and again once it is there. Best
// effort: a cache that cannot be written still serves.
func Use(path string) {
	Touch(path)
	buildlock.Share(path + ".lock")
}

// Touch records that the entry at path was used now, as its modification
// time, which pruning goes by: for a build tree, whose build holds its
// lock while it runs.
func Touch(path string) {
	now := time.Now()
	os.Chtimes(path, now, now)
	usedHere.Store(filepath.Dir(filepath.Clean(path)), true)
}

// usedHere are the areas, by directory, this process used an entry of.
var usedHere sync.Map

// UsedHere says whether this process used (or added) an entry of the
// area: only then may it have grown it, and a command's end prunes only
// those, rather than walk every build tree of the cache each time.
func (a Area) UsedHere() bool {
	_, ok := usedHere.Load(filepath.Clean(a.Dir))
	return ok
}

// inode is a file however many links it has: a build tree's source is
// hard links to the unpacked tarball's files, counted once.
type inode struct{ dev, ino uint64 }

// scan is what an area holds: its size on disk, each file once, and its
// entries with when each was last used and the files each holds.
type scan struct {
	total   int64
	sizes   map[inode]int64
	links   map[inode]int // how many entries hold each file
	entries []scanned
}

type scanned struct {
	Entry
	used  time.Time
	files []inode
}

// scanArea walks dir once. Files that vanish meanwhile (another
// process's temporary files), or that cannot be read, are not counted; a
// dir not made yet holds nothing.
func scanArea(dir string, entries []Entry) (*scan, error) {
	s := &scan{sizes: map[inode]int64{}, links: map[inode]int{}}
	owner := map[string]int{} // top-level name -> entry
	for i, e := range entries {
		s.entries = append(s.entries, scanned{Entry: e})
		for _, p := range e.Paths {
			owner[filepath.Base(p)] = i
		}
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil && path == dir && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err != nil || path == dir {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		in := inode{uint64(st.Dev), st.Ino}
		if _, seen := s.sizes[in]; !seen {
			s.sizes[in] = st.Blocks * 512
			s.total += st.Blocks * 512
		}
		rel, _ := filepath.Rel(dir, path)
		top, _, _ := strings.Cut(rel, string(filepath.Separator))
		i, ok := owner[top]
		if !ok {
			return nil
		}
		e := &s.entries[i]
		if top == rel && fi.ModTime().After(e.used) {
			e.used = fi.ModTime()
		}
		e.files = append(e.files, in)
		return nil
	})
	for _, e := range s.entries {
		seen := map[inode]bool{}
		for _, in := range e.files {
			if !seen[in] {
				seen[in] = true
				s.links[in]++
			}
		}
	}
	return s, err
}

// DiskSize is what dir holds on disk, each file once.
func DiskSize(dir string) (int64, error) {
	s, err := scanArea(dir, nil)
	if err != nil {
		return 0, err
	}
	return s.total, nil
}

// Pruned says what shrinking an area did.
type Pruned struct {
	Before, After int64    // bytes
	Removed       []string // entries, least recently used first
	Held          []string // entries kept because someone holds them
}

// shrink removes entries, least recently used first, until the area holds
// at most target bytes or none is left to remove. Entries someone holds
// are kept and named; the errors of those that could not be removed are
// returned.
func shrink(dir string, entries []Entry, target int64) (Pruned, error) {
	s, err := scanArea(dir, entries)
	if err != nil {
		return Pruned{}, err
	}
	p := Pruned{Before: s.total}
	sort.SliceStable(s.entries, func(i, j int) bool {
		a, b := s.entries[i], s.entries[j]
		if !a.used.Equal(b.used) {
			return a.used.Before(b.used)
		}
		return a.Name < b.Name
	})
	var errs []error
	for _, e := range s.entries {
		if s.total <= target {
			break
		}
		ok, err := remove(e.Entry)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			p.Held = append(p.Held, e.Name)
			continue
		}
		p.Removed = append(p.Removed, e.Name)
		seen := map[inode]bool{}
		for _, in := range e.files {
			if seen[in] {
				continue
			}
			seen[in] = true
			// A file other entries still link to frees nothing yet.
			if s.links[in]--; s.links[in] == 0 {
				s.total -= s.sizes[in]
			}
		}
	}
	p.After = s.total
	return p, errors.Join(errs...)
}

// remove removes e when nobody holds any of its locks; false when someone
// does.
func remove(e Entry) (bool, error) {
	for _, l := range e.Locks {
		release, ok, err := buildlock.TryHold(l)
		if err != nil || !ok {
			return false, err
		}
		defer release()
	}
	for _, p := range e.Paths {
		if err := os.RemoveAll(p); err != nil {
			return false, err
		}
	}
	if e.OwnLock {
		// Removed while held: a waiter on it takes the new one (buildlock).
		os.Remove(e.Locks[0])
	}
	return true, nil
}
