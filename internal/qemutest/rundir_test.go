// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Runs side by side in one parent must not fail on each other's latest link.
func TestNewRunDirSideBySide(t *testing.T) {
	parent := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = newRunDir(parent, "arm64")
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	target, err := os.Readlink(filepath.Join(parent, "latest"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(parent, target)); err != nil {
		t.Errorf("latest -> %s: %v", target, err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(parent, ".latest-*")); len(leftovers) > 0 {
		t.Errorf("temporary links left: %v", leftovers)
	}
}
