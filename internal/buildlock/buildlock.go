// SPDX-License-Identifier: GPL-2.0-only

// Package buildlock keeps one process at a time building or preparing a
// shared build directory or cache entry (two terminals, two CI jobs on a
// runner, make matrix beside make qemu-test): two makes in one output
// directory corrupt each other's build, and two fetches of one image do
// the work twice. A run using an entry holds its lock shared (Share), and
// whoever prunes the cache takes it without waiting (TryHold), so that
// nothing in use or being prepared is removed.
package buildlock

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// Hold takes the lock at path (made if missing) and returns its release.
// When another holder has it, Hold says so on w and waits; doing names
// what the holder does ("building the arm64 reference kernel"). This
// process's own Share of path is let go first: preparing an entry again
// needs it alone.
func Hold(path, doing string, w io.Writer) (release func(), err error) {
	unshare(path)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := lock(path, unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		fmt.Fprintf(w, "waiting for another smct %s (lock %s)\n", doing, path)
		f, err = lock(path, unix.LOCK_EX)
	}
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	// Closing the file drops the lock; so does the process ending.
	return func() { f.Close() }, nil
}

// TryHold takes the lock at path if nobody holds it, shared or not, and
// returns its release; ok is false when someone does. Pruning takes an
// entry's lock this way and skips the entry when it cannot.
func TryHold(path string) (release func(), ok bool, err error) {
	f, err := lock(path, unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() { f.Close() }, true, nil
}

// shared are the locks this process holds shared, by path, until it ends.
var shared = struct {
	sync.Mutex
	files map[string]*os.File
}{files: map[string]*os.File{}}

// Share holds the lock at path shared until the process ends (or Hold
// takes it here): the entry it guards is in use, and TryHold elsewhere
// fails. It does not wait: while someone holds the lock alone (preparing
// the entry, or removing it) it fails, and the caller shares it again
// once it has the entry. Sharing a path twice holds it once. A directory
// (a run's) is its own lock.
func Share(path string) error {
	path = filepath.Clean(path)
	shared.Lock()
	held := shared.files[path] != nil
	shared.Unlock()
	if held {
		return nil
	}
	f, err := lock(path, unix.LOCK_SH|unix.LOCK_NB)
	if err != nil {
		return fmt.Errorf("locking %s: %w", path, err)
	}
	shared.Lock()
	defer shared.Unlock()
	if shared.files[path] != nil {
		f.Close() // another goroutine's share came first
		return nil
	}
	shared.files[path] = f
	return nil
}

func unshare(path string) {
	path = filepath.Clean(path)
	shared.Lock()
	defer shared.Unlock()
	if f := shared.files[path]; f != nil {
		f.Close()
		delete(shared.files, path)
	}
}

// lock opens path (a directory as it is, a file made if missing) and
// flocks it as how says. Pruning removes an entry's lock file with the
// entry, holding it: a lock taken on a file no longer at path guards
// nothing, so it is taken again on the one there now.
func lock(path string, how int) (*os.File, error) {
	for {
		f, dir, err := open(path)
		if err != nil {
			return nil, err
		}
		if err := unix.Flock(int(f.Fd()), how); err != nil {
			f.Close()
			return nil, err
		}
		if dir {
			return f, nil
		}
		var held, now unix.Stat_t
		if unix.Fstat(int(f.Fd()), &held) == nil && unix.Stat(path, &now) == nil && held.Dev == now.Dev && held.Ino == now.Ino {
			return f, nil
		}
		f.Close()
	}
}

func open(path string) (f *os.File, dir bool, err error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		f, err := os.Open(path)
		return f, true, err
	}
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	return f, false, err
}
