// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ftrace-stackmap/conformance/initramfs/guest"
)

// A script waits for the guest's first prompt, even one cut across two
// writes of the console, and ends in Ctrl-D.
func TestScriptWaitsForThePrompt(t *testing.T) {
	var console bytes.Buffer
	watch := &promptWatch{w: &console, seen: make(chan struct{})}
	feedR, feedW := io.Pipe()
	go scriptShell(feedW, strings.NewReader("ls /\n"), watch.seen)
	typed := make(chan string)
	go func() {
		b, _ := io.ReadAll(feedR)
		typed <- string(b)
	}()

	half := len(guest.ShellPrompt) / 2
	watch.Write([]byte("booting...\n" + guest.ShellPrompt[:half]))
	select {
	case got := <-typed:
		t.Fatalf("typed %q before the prompt", got)
	case <-time.After(50 * time.Millisecond):
	}
	watch.Write([]byte(guest.ShellPrompt[half:]))
	select {
	case got := <-typed:
		if got != "ls /\n\x04" {
			t.Errorf("typed %q, want the script and Ctrl-D", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("nothing typed after the prompt")
	}
	if want := "booting...\n" + guest.ShellPrompt; console.String() != want {
		t.Errorf("console passed on as %q, want %q", console.String(), want)
	}
}
