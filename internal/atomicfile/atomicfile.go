// SPDX-License-Identifier: GPL-2.0-only

// Package atomicfile writes a file whole or not at all: into a temporary
// file of its own beside the target, renamed onto it when complete. A
// reader never sees half a file, and two writers at once (two terminals on
// one cache) never write into one temporary file.
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes data to path with perm, whole or not at all.
func Write(path string, data []byte, perm fs.FileMode) error {
	return Produce(path, perm, func(tmp string) error {
		return os.WriteFile(tmp, data, perm)
	})
}

// Produce has produce write path's content into tmp, an empty file beside
// path made for this call only, then gives it perm (as given: the umask is
// not applied) and renames it onto path. On any error, produce's included, tmp is removed and path left as
// it was.
func Produce(path string, perm fs.FileMode, produce func(tmp string) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = f.Close()
	if err == nil {
		err = produce(tmp)
	}
	if err == nil {
		err = os.Chmod(tmp, perm) // CreateTemp made it 0600
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return errors.Join(err, removeIfThere(tmp))
	}
	return nil
}

func removeIfThere(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
