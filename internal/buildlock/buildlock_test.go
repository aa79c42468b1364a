// SPDX-License-Identifier: GPL-2.0-only

package buildlock

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A second holder waits for the first, says so, and gets the lock once the
// first lets go; each open of the file is a holder of its own, as another
// process's is.
func TestSecondHolderWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kbuild", "arm64.lock")
	release, err := Hold(path, "building the arm64 kernel", &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	var got time.Time
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r, err := Hold(path, "building the arm64 kernel", &out)
		if err != nil {
			t.Error(err)
			return
		}
		got = time.Now()
		r()
	}()
	time.Sleep(200 * time.Millisecond)
	released := time.Now()
	release()
	wg.Wait()
	if got.Before(released) {
		t.Fatalf("the second holder got the lock while the first held it")
	}
	if !strings.Contains(out.String(), "waiting for another smct building the arm64 kernel") {
		t.Fatalf("the second holder did not say it waits: %q", out.String())
	}
}

// TryHold gets a free lock, and not one held by Hold or by Share, this
// process's included (each open is a holder of its own).
func TestTryHoldSkipsAHeldLock(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "entry.lock")
	release, ok, err := TryHold(path)
	if err != nil || !ok {
		t.Fatalf("a free lock: ok %v, %v", ok, err)
	}
	if _, ok, _ := TryHold(path); ok {
		t.Errorf("TryHold got a lock TryHold holds")
	}
	release()
	if err := Share(path); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := TryHold(path); ok {
		t.Errorf("TryHold got a lock Share holds")
	}
	// A run's directory is its own lock.
	if err := Share(dir); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := TryHold(dir); ok {
		t.Errorf("TryHold got a directory Share holds")
	}
}

// Hold of a path this process shares lets its share go instead of waiting
// for itself.
func TestHoldTakesOverItsOwnShare(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vmlinux.lock")
	if err := Share(path); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		release, err := Hold(path, "unpacking", &bytes.Buffer{})
		if err != nil {
			t.Error(err)
			return
		}
		release()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Hold waited for this process's own share")
	}
}

// A lock file removed by its holder (a pruner removing the entry) is not
// the lock anymore: a waiter takes the one at the path now.
func TestLockFileRemovedByItsHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "entry.lock")
	release, ok, err := TryHold(path)
	if err != nil || !ok {
		t.Fatalf("ok %v, %v", ok, err)
	}
	got := make(chan func())
	go func() {
		r, err := Hold(path, "preparing", &bytes.Buffer{})
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	time.Sleep(100 * time.Millisecond)
	os.Remove(path)
	release()
	r := <-got
	defer r()
	if _, ok, _ := TryHold(path); ok {
		t.Errorf("the waiter holds a removed file, not the lock at %s", path)
	}
}

// Share does not wait for whoever prepares the entry: it fails, and the
// caller shares again once the entry is there.
func TestShareDoesNotWait(t *testing.T) {
	path := filepath.Join(t.TempDir(), "image.lock")
	release, err := Hold(path, "fetching", &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Share(path); err == nil {
		t.Errorf("Share got a lock Hold holds")
	}
	release()
	if err := Share(path); err != nil {
		t.Errorf("Share of a free lock: %v", err)
	}
}
