// SPDX-License-Identifier: GPL-2.0-only

// Package buildlock keeps one process at a time building or preparing a
// shared build directory or cache entry (two terminals, two CI jobs on a
// runner, make matrix beside make qemu-test): two makes in one output
// directory corrupt each other's build, and two fetches of one image do
// the work twice.
package buildlock

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Hold takes the lock at path (made if missing) and returns its release.
// When another holder has it, Hold says so on w and waits; doing names
// what the holder does ("building the arm64 reference kernel").
func Hold(path, doing string, w io.Writer) (release func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err == unix.EWOULDBLOCK {
		fmt.Fprintf(w, "waiting for another smct %s (lock %s)\n", doing, path)
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
	} else if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	// Closing the file drops the lock; so does the process ending.
	return func() { f.Close() }, nil
}
