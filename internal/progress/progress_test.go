// SPDX-License-Identifier: GPL-2.0-only

package progress

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestTimestampedLinesWhereNotATerminal(t *testing.T) {
	var buf bytes.Buffer
	r := New(&buf)
	if r.Terminal() {
		t.Fatal("a buffer is no terminal")
	}
	r.Step("boot %s", "default")(nil)
	fmt.Fprintln(r, "installing qemu-system-arm (apt-get)")
	r.Notef("note: %s\n", "kept")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	stamp := regexp.MustCompile(`^\d\d:\d\d:\d\d `)
	if len(lines) != 4 || !stamp.MatchString(lines[0]) || !strings.HasSuffix(lines[0], "boot default ...") ||
		!stamp.MatchString(lines[1]) || !strings.Contains(lines[1], "boot default: done in") ||
		lines[2] != "installing qemu-system-arm (apt-get)" || lines[3] != "note: kept" {
		t.Fatalf("got %q, want a timestamped start and end, the announcement and the note", lines)
	}
}

func TestQuietSaysOnlyNotes(t *testing.T) {
	var buf bytes.Buffer
	r := Quiet(&buf, "")
	r.Step("boot")(nil)
	fmt.Fprintln(r, "fetching")
	r.Notef("note\n")
	if buf.String() != "note\n" {
		t.Fatalf("got %q, want only the note", buf.String())
	}
}

func TestQuietPrefixesNotes(t *testing.T) {
	var buf bytes.Buffer
	Quiet(&buf, "debian-6.1/arm64: ").Notef("note: x\n")
	if got := buf.String(); got != "debian-6.1/arm64: note: x\n" {
		t.Fatalf("got %q", got)
	}
}

func TestLiveStepRedrawsAndClears(t *testing.T) {
	var buf bytes.Buffer
	r := &Reporter{w: &buf, live: true}
	end := r.Step("boot %s", "default")
	time.Sleep(1100 * time.Millisecond)
	r.Notef("note\n")
	end(errors.New("boom"))
	out := buf.String()
	for _, want := range []string{"==> boot default ...\n", "\r\033[K    1s", "\r\033[Knote\n", "    failed in 1."} {
		if !strings.Contains(out, want) {
			t.Errorf("output %q lacks %q", out, want)
		}
	}
}

func TestDiscardSaysNothing(t *testing.T) {
	r := Discard()
	r.Notef("a %d\n", 1)
	if r.Terminal() {
		t.Fatal("Discard() draws steps")
	}
}
