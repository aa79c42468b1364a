// SPDX-License-Identifier: GPL-2.0-only

package qemu

import (
	"io"
	"sync"
	"time"
)

// watch keeps the time of the console's last output and whether the
// guest's init has started, for the silence limit.
type watch struct {
	mu      sync.Mutex
	last    time.Time
	begun   bool
	silent  bool
	limit   time.Duration
	stopped bool
}

// activity is the console's reader, marking every read as output.
type activity struct {
	r io.Reader
	w *watch
}

func (a *activity) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.w.mu.Lock()
		a.w.last = time.Now()
		a.w.mu.Unlock()
	}
	return n, err
}

func (w *watch) started() {
	w.mu.Lock()
	w.begun = true
	w.mu.Unlock()
}

func (w *watch) stop() {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
}

func (w *watch) result() (silent bool, limit time.Duration, reached bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.silent, w.limit, w.begun
}

// silence ends the boot when the console has been quiet for longer than
// the limit of the phase it is in: a guest that halted without a word
