// SPDX-License-Identifier: GPL-2.0-only

package cachelimit

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/buildlock"
)

// area makes entries of 64 KiB each in a fresh directory, each used an
// hour after the one before, in the order given; it returns the directory
// and one entry's size on disk.
func area(t *testing.T, names ...string) (string, int64) {
	t.Helper()
	dir := t.TempDir()
	used := time.Now().Add(-time.Duration(len(names)+1) * time.Hour)
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "Image"), bytes.Repeat([]byte{1}, 64<<10), 0o644); err != nil {
			t.Fatal(err)
		}
		used = used.Add(time.Hour)
		os.Chtimes(p, used, used)
	}
	total, err := DiskSize(dir)
	if err != nil || total == 0 {
		t.Fatalf("size %d, %v", total, err)
	}
	return dir, total / int64(len(names))
}

func prune(t *testing.T, dir string, target int64) Pruned {
	t.Helper()
	p, err := shrink(dir, ownLocks("", dir), target)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func left(dir string) []string { return names(dir) }

// The least recently used go first, until the area is within its cap.
func TestPruneOldestUsedFirst(t *testing.T) {
	dir, one := area(t, "a", "b", "c", "d")
	p := prune(t, dir, 2*one+one/2)
	if !slices.Equal(p.Removed, []string{"a", "b"}) || !slices.Equal(left(dir), []string{"c", "d"}) {
		t.Errorf("removed %v, left %v; want a and b removed, c and d left", p.Removed, left(dir))
	}
	if p.After > 2*one+one/2 || p.Before <= p.After {
		t.Errorf("%d bytes before, %d after; want at most %d after", p.Before, p.After, 2*one+one/2)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.lock")); err == nil {
		t.Errorf("a's own lock file stayed")
	}
	if p := prune(t, dir, 2*one+one/2); len(p.Removed) > 0 {
		t.Errorf("an area within its cap lost %v", p.Removed)
	}
}

// An entry someone prepares (its lock held) stays, named; the next oldest
// goes instead.
func TestPruneSkipsALockedEntry(t *testing.T) {
	dir, one := area(t, "a", "b", "c")
	release, err := buildlock.Hold(filepath.Join(dir, "a.lock"), "unpacking", &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	p := prune(t, dir, 2*one+one/2)
	if !slices.Equal(p.Held, []string{"a"}) || !slices.Equal(p.Removed, []string{"b"}) || !slices.Equal(left(dir), []string{"a", "c"}) {
		t.Errorf("held %v, removed %v, left %v; want a held, b removed", p.Held, p.Removed, left(dir))
	}
}

// An entry a run uses (Use) stays even when everything else goes, and
// Use makes it the most recently used.
func TestPruneKeepsTheEntryInUse(t *testing.T) {
	dir, _ := area(t, "a", "b", "c")
	Use(filepath.Join(dir, "a"))
	p := prune(t, dir, 0)
	if !slices.Equal(p.Held, []string{"a"}) || !slices.Equal(left(dir), []string{"a"}) {
		t.Errorf("held %v, left %v; want only a, in use", p.Held, left(dir))
	}
}

// A touched entry is the most recently used: the next oldest goes.
func TestTouchedEntrySurvives(t *testing.T) {
	dir, one := area(t, "a", "b", "c")
	Touch(filepath.Join(dir, "a"))
	p := prune(t, dir, 2*one+one/2)
	if !slices.Equal(p.Removed, []string{"b"}) || !slices.Equal(left(dir), []string{"a", "c"}) {
		t.Errorf("removed %v, left %v; want b removed", p.Removed, left(dir))
	}
	// A command's end prunes the areas its process used, and only those.
	if !(Area{Dir: dir}).UsedHere() || (Area{Dir: t.TempDir()}).UsedHere() {
		t.Errorf("UsedHere does not tell the area touched from another")
	}
}

// CACHE_LIMIT sets each area's cap over its default; 0 is no limit, and
// an area without a limit is never pruned.
func TestCacheLimit(t *testing.T) {
	t.Setenv(Env, "kernels=2G, vmlinux=0,ccache=512M")
	areas, err := Areas(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	caps := map[string]string{}
	for _, a := range areas {
		caps[a.Name] = a.Policy()
	}
	if caps["kernels"] != "2.0G" || caps["vmlinux"] != "no limit" || caps["images"] != "512M" || caps["lab"] != "kept" {
		t.Errorf("caps %v", caps)
	}
	if got := CCacheMaxSize(); got != "512Mi" {
		t.Errorf("CCACHE_MAXSIZE=%s, want 512Mi", got)
	}
	for _, bad := range []string{"lab=1G", "kernels", "kernels=lots", "nosuch=1G"} {
		t.Setenv(Env, bad)
		if _, err := Areas(t.TempDir()); err == nil {
			t.Errorf("CACHE_LIMIT=%s accepted", bad)
		}
	}
}

func TestSizes(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "512": 512, "4K": 4 << 10, "512M": 512 << 20, "2.5G": 5 << 29, "1GiB": 1 << 30, "3g": 3 << 30} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, want := range map[int64]string{512: "512B", 40 << 10: "40K", 164 << 20: "164M", 1 << 30: "1.0G", 5 << 29: "2.5G"} {
		if got := FormatSize(in); got != want {
			t.Errorf("FormatSize(%d) = %s, want %s", in, got, want)
		}
	}
}
