package progress

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestQuietWhereNotATerminal(t *testing.T) {
	var buf bytes.Buffer
	r := New(&buf)
	if r.Terminal() {
		t.Fatal("a buffer is no terminal")
	}
	r.Step("boot %s", "default")(nil)
	fmt.Fprintln(r, "fetching something ...")
	r.Notef("note: %s\n", "kept")
	if got := buf.String(); got != "note: kept\n" {
		t.Fatalf("got %q, want only the note", got)
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
