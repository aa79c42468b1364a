// SPDX-License-Identifier: GPL-2.0-only

// Package harness is everything the specs use to touch tracefs: finding it,
// reading and writing its nodes with the errno kept, feature probes, result
// classes, and saving and restoring the settings the suite may change.
//
//	tfs, err := harness.OpenTraceFS()
//	err = tfs.Write("tracing_on", "0")
//	if errors.Is(err, unix.EBUSY) { ... }
package harness

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Where tracefs may be found: its own mount point first, then under debugfs.
var (
	TraceFSDir = "/sys/kernel/tracing"
	DebugFSDir = "/sys/kernel/debug"
)

const tracefsMagic = 0x74726163 // TRACEFS_MAGIC

// TraceFS is a tracefs root (or an instance directory below it).
type TraceFS struct {
	Root     string
	restorer bool // writes even after stopSpecWrites: the snapshot's Restore
}

// OpenTraceFS finds tracefs, mounting it (or debugfs) when it is not mounted yet.
func OpenTraceFS() (*TraceFS, error) {
	if isTraceFS(TraceFSDir) {
		return &TraceFS{Root: TraceFSDir}, nil
	}
	if err := unix.Mount("nodev", TraceFSDir, "tracefs", 0, ""); err == nil {
		return &TraceFS{Root: TraceFSDir}, nil
	}
	legacy := filepath.Join(DebugFSDir, "tracing")
	if !isTraceFS(legacy) {
		// Mounting debugfs makes the kernel automount tracefs below it.
		_ = unix.Mount("nodev", DebugFSDir, "debugfs", 0, "")
	}
	if isTraceFS(legacy) {
		return &TraceFS{Root: legacy}, nil
	}
	return nil, fmt.Errorf("tracefs: not at %s or %s, and mounting failed", TraceFSDir, legacy)
}

func isTraceFS(dir string) bool {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil || st.Type != tracefsMagic {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, "trace"))
	return err == nil
}

// Path is the absolute path of a node.
func (t *TraceFS) Path(node string) string { return filepath.Join(t.Root, node) }

// Instance is the tracefs view of instances/<name>.
func (t *TraceFS) Instance(name string) *TraceFS {
	return &TraceFS{Root: t.Path(filepath.Join("instances", name))}
}

// Exists reports whether a node is there.
func (t *TraceFS) Exists(node string) bool {
	_, err := os.Lstat(t.Path(node))
	return err == nil
}

// Has says whether a node is there. Only ENOENT means it is not; any
// other error means the lookup could not tell.
func (t *TraceFS) Has(node string) (bool, error) {
	_, err := os.Lstat(t.Path(node))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// Read returns a node's whole content.
func (t *TraceFS) Read(node string) (string, error) {
	b, err := os.ReadFile(t.Path(node))
	return string(b), err
}

// ReadTrimmed returns a node's content without the trailing newline.
func (t *TraceFS) ReadTrimmed(node string) (string, error) {
	s, err := t.Read(node)
	return strings.TrimRight(s, "\n"), err
}

// Write writes value in a single write(2) to the node opened with O_TRUNC,
// as `echo value > node` does: a file that honours O_TRUNC (trace,
// set_event) is emptied first. The returned error wraps the errno
// (errors.Is(err, unix.EBUSY)).
func (t *TraceFS) Write(node, value string) error {
	_, err := t.WriteBytes(node, []byte(value), os.O_TRUNC)
	return err
}

// Append writes value with O_APPEND, as `echo value >> node` does; for
// set_event and trigger files this adds rather than replaces.
func (t *TraceFS) Append(node, value string) error {
	_, err := t.WriteBytes(node, []byte(value), os.O_APPEND)
	return err
}

// WriteBytes performs exactly one write(2) of b, even when b is empty, to
// the node opened write-only with flag (os.O_TRUNC, os.O_APPEND or 0), and
// returns the count the kernel reported.
func (t *TraceFS) WriteBytes(node string, b []byte, flag int) (int, error) {
	if !t.restorer {
		if !startSpecWrite() {
			return 0, &os.PathError{Op: "write", Path: t.Path(node), Err: ErrWritesStopped}
		}
		defer specWrites.RUnlock()
	}
	fd, err := unix.Open(t.Path(node), unix.O_WRONLY|unix.O_CLOEXEC|flag, 0)
	if err != nil {
		return 0, &os.PathError{Op: "open", Path: t.Path(node), Err: err}
	}
	defer unix.Close(fd)
	n, err := unix.Write(fd, b)
	if err != nil {
		return n, &os.PathError{Op: "write", Path: t.Path(node), Err: err}
	}
	return n, nil
}

// specWrites holds back the specs' writes once the suite restores its
// snapshot. On interrupt Ginkgo stops waiting for a spec body without a
// context and runs the cleanups while the body goes on: a write it made after
// the restore would undo it.
var specWrites struct {
	sync.RWMutex
	stopped bool
}

// ErrWritesStopped is what a spec's write gets once the suite has put the
// settings back: only a spec body Ginkgo abandoned on interrupt still
// writes then, and it must not undo the restore.
var ErrWritesStopped = errors.New("tracefs writes stopped: the suite has restored the settings")

// startSpecWrite read-locks specWrites for one write, and says false (with
// nothing locked) once writes are stopped.
func startSpecWrite() bool {
	specWrites.RLock()
	if specWrites.stopped {
		specWrites.RUnlock()
		return false
	}
	return true
}

// stopSpecWrites waits for the writes under way and stops all later ones
// except the snapshot's Restore.
func stopSpecWrites() {
	specWrites.Lock()
	specWrites.stopped = true
	specWrites.Unlock()
}

// NodeInfo is a node's permission bits, owner and size.
type NodeInfo struct {
	Perm     os.FileMode
	UID, GID uint32
	Size     int64
}

// Stat returns a node's mode, owner and size.
func (t *TraceFS) Stat(node string) (NodeInfo, error) {
	fi, err := os.Lstat(t.Path(node))
	if err != nil {
		return NodeInfo{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return NodeInfo{}, fmt.Errorf("stat %s: no owner information", node)
	}
	return NodeInfo{Perm: fi.Mode().Perm(), UID: st.Uid, GID: st.Gid, Size: fi.Size()}, nil
}

// Errno extracts the errno from an error returned by this package, or 0.
func Errno(err error) unix.Errno {
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	return 0
}
