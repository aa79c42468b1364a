// SPDX-License-Identifier: GPL-2.0-only

package buildlock

import (
	"bytes"
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
