// SPDX-License-Identifier: GPL-2.0-only

// Package progress shows what a long step is doing while it runs, on a
// terminal only. Where stderr is a file or a pipe (CI logs, tests) progress
// is dropped: what remains there is notes, errors and the report.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// Reporter writes progress to w when w is a terminal. It is an io.Writer,
// so packages that take a progress writer (kbuild, images, debian) go
// quiet with it too.
type Reporter struct {
	w      io.Writer
	live   bool
	quiet  bool   // notes only: runs side by side
	prefix string // put before notes

	mu    sync.Mutex
	drawn bool // the cursor is at the end of a line that gets redrawn
}

// New reports to w: live when w is a terminal, else one timestamped line
// when a step starts and one when it ends (a CI log, a pipe).
func New(w io.Writer) *Reporter { return &Reporter{w: w, live: IsTerminal(w)} }

// Quiet reports no progress, only notes, each starting with prefix: for
// runs made side by side, whose progress lines would interleave.
func Quiet(w io.Writer, prefix string) *Reporter { return &Reporter{w: w, quiet: true, prefix: prefix} }

// Terminal says whether progress is shown, and may redraw a line.
func (r *Reporter) Terminal() bool { return r.live }

// Write passes progress text through on a terminal and drops it elsewhere.
func (r *Reporter) Write(p []byte) (int, error) {
	if r.quiet {
		return len(p), nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clear()
	return r.w.Write(p)
}

// Always is a writer for what must be seen even when progress is quiet (the
// guest console when asked for); it keeps clear of the redrawn line.
func (r *Reporter) Always() io.Writer { return Over(r, r.w) }

// Over is w, erasing r's redrawn line before each write: for output that
// goes to the same terminal by another way, such as stdout.
func Over(r *Reporter, w io.Writer) io.Writer { return over{r, w} }

type over struct {
	r *Reporter
	w io.Writer
}

func (o over) Write(p []byte) (int, error) {
	o.r.mu.Lock()
	defer o.r.mu.Unlock()
	o.r.clear()
	return o.w.Write(p)
}

// Notef prints a line that matters even when progress is quiet, such as a
// warning about the inputs.
func (r *Reporter) Notef(format string, args ...any) {
	fmt.Fprintf(r.Always(), r.prefix+format, args...)
}

// Lines is r for steps made side by side: each step's start and end on a
// line of its own, timestamped, even on a terminal, where redrawn lines
// would fight.
func (r *Reporter) Lines() *Reporter {
	return &Reporter{w: r.Always(), quiet: r.quiet, prefix: r.prefix}
}

// Discard reports nothing at all: for runs whose output nobody reads.
func Discard() *Reporter { return Quiet(io.Discard, "") }

// Step announces a step and, on a terminal, redraws its elapsed seconds
// every second until the returned func is called with the step's error.
// One step at a time per Reporter.
func (r *Reporter) Step(format string, args ...any) (end func(error)) {
	start := time.Now()
	if r.quiet {
		return func(error) {}
	}
	if !r.live {
		what := fmt.Sprintf(format, args...)
		fmt.Fprintf(r.w, "%s %s ...\n", start.Format("15:04:05"), what)
		return func(err error) {
			how := "done"
			if err != nil {
				how = "failed"
			}
			fmt.Fprintf(r.w, "%s %s: %s in %.1fs\n", time.Now().Format("15:04:05"), what, how, time.Since(start).Seconds())
		}
	}
	fmt.Fprintf(r, "==> %s ...\n", fmt.Sprintf(format, args...))
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				r.mu.Lock()
				fmt.Fprintf(r.w, "\r\033[K    %ds", int(time.Since(start).Seconds()))
				r.drawn = true
				r.mu.Unlock()
			}
		}
	}()
	return func(err error) {
		close(stop)
		<-stopped
		how := "done"
		if err != nil {
			how = "failed"
		}
		fmt.Fprintf(r, "    %s in %.1fs\n", how, time.Since(start).Seconds())
	}
}

// clear erases the redrawn line, if any; r.mu is held.
func (r *Reporter) clear() {
	if r.drawn {
		fmt.Fprint(r.w, "\r\033[K")
		r.drawn = false
	}
}

// IsTerminal says whether w is a terminal (not merely a character device
// such as /dev/null).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}
