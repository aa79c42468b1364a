// SPDX-License-Identifier: GPL-2.0-only

package images

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/buildlock"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kchoice"
	"github.com/ftrace-stackmap/conformance/internal/progress"
)

func TestTheProjectLockIsValid(t *testing.T) {
	l, err := Read("../../../images.lock")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Entries {
		for _, arch := range []string{"arm64", "x86_64"} {
			if _, ok := e.Arches[arch]; !ok {
				t.Errorf("entry %s has no %s image", e.Name, arch)
			}
		}
	}
}

func TestReadRejectsBadLocks(t *testing.T) {
	sha := strings.Repeat("a", 64)
	good := "default: k\nentries:\n- name: k\n  kind: debian\n  arches:\n    arm64: {package: p, version: v, path: boot/x, deb_sha256: " + sha + ", image_sha256: " + sha + "}\n"
	for name, tc := range map[string]struct{ text, want string }{
		"good":          {good, ""},
		"bad default":   {strings.Replace(good, "default: k", "default: z", 1), "default"},
		"bad kind":      {strings.Replace(good, "kind: debian", "kind: tarball", 1), "kind"},
		"bad arch":      {strings.Replace(good, "arm64:", "riscv64:", 1), "arch"},
		"short hash":    {strings.Replace(good, "image_sha256: "+sha, "image_sha256: abc", 1), "required"},
		"repeated name": {good + "- name: k\n  kind: debian\n", "repeated"},
		"no stackmap":   {strings.Replace(good, "kind: debian", "kind: debian\n  has_stackmap: false", 1), ""},
		"not a bool":    {strings.Replace(good, "kind: debian", "kind: debian\n  has_stackmap: maybe", 1), "bool"},
		"misspelt":      {strings.Replace(good, "kind: debian", "kind: debian\n  has-stackmap: false", 1), "has-stackmap"},
	} {
		p := filepath.Join(t.TempDir(), "images.lock")
		os.WriteFile(p, []byte(tc.text), 0o644)
		_, err := Read(p)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: Read() = %v, want error containing %q", name, err, tc.want)
		}
	}
}

func TestReadChecksB4Recipes(t *testing.T) {
	good := "default: k\nentries:\n- name: k\n  kind: b4\n" +
		"  tree: https://git.example.org/linux.git\n  base: v7.1-rc5\n" +
		"  message_id: 20260101000000.1-1-someone@example.org\n  config: [common]\n" +
		"  arches:\n    arm64: {inputs_sha256: '', image_sha256: ''}\n"
	sha := strings.Repeat("c", 40)
	for name, tc := range map[string]struct{ old, new, want string }{
		"good":             {"", "", ""},
		"sha base":         {"base: v7.1-rc5", "base: " + sha, ""},
		"version":          {"config:", "series_version: 4\n  config:", ""},
		"pinned":           {"{inputs_sha256: '', image_sha256: ''}", "{inputs_sha256: " + sha + sha[:24] + ", image_sha256: " + sha + sha[:24] + "}", ""},
		"half pinned":      {"inputs_sha256: ''", "inputs_sha256: " + sha + sha[:24], "both"},
		"not a URL":        {"https://git.example.org/linux.git", "git.example.org:linux", "tree"},
		"file URL":         {"https://git.example.org/linux.git", "file:///srv/linux", ""},
		"local path":       {"https://git.example.org/linux.git", "../linux", ""},
		"local branch":     {"tree: https://git.example.org/linux.git\n  base: v7.1-rc5", "tree: /srv/linux\n  base: my-series~3", ""},
		"remote branch":    {"base: v7.1-rc5", "base: my-series~3", "base"},
		"local mbox":       {"message_id: 20260101000000.1-1-someone@example.org", "series: v5.mbox", ""},
		"two series":       {"config:", "series: v5.mbox\n  config:", "both"},
		"no series":        {"  message_id: 20260101000000.1-1-someone@example.org\n", "", "no series"},
		"short sha":        {"base: v7.1-rc5", "base: e8c2f9fdadee", "abbreviated"},
		"bad tag":          {"base: v7.1-rc5", "base: v7..1", "base"},
		"no base":          {"  base: v7.1-rc5\n", "", "base"},
		"msgid brackets":   {"message_id: 2026", "message_id: <2026", "message_id"},
		"msgid no at":      {"-someone@example.org", "-someone.example.org", "message_id"},
		"msgid space":      {"someone@example.org", "some one@example.org", "message_id"},
		"no config":        {"config: [common]", "config: []", "config"},
		"config path":      {"config: [common]", "config: [../common]", "config"},
		"arch fragment":    {"config: [common]", "config: [common, arm64]", "arch"},
		"negative version": {"config:", "series_version: -1\n  config:", "series_version"},
	} {
		text := good
		if tc.old != "" {
			text = strings.Replace(good, tc.old, tc.new, 1)
		}
		p := filepath.Join(t.TempDir(), "images.lock")
		os.WriteFile(p, []byte(text), 0o644)
		_, err := Read(p)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: Read() = %v, want error containing %q", name, err, tc.want)
		}
	}
}

func TestPinEditsOnlyItsLines(t *testing.T) {
	orig, err := os.ReadFile("../../../images.lock")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "images.lock")
	os.WriteFile(p, orig, 0o644)
	in, img, kern := strings.Repeat("1", 64), strings.Repeat("2", 64), strings.Repeat("3", 64)
	if err := Pin(p, "reference", "arm64", in, kern, img); err != nil {
		t.Fatal(err)
	}
	l, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := l.Entry("reference")
	if a := e.Arches["arm64"]; a.InputsSHA256 != in || a.ImageSHA256 != img || a.KernelSHA256 != kern {
		t.Fatalf("after Pin: %+v", a)
	}
	if e.Arches["x86_64"].InputsSHA256 == in {
		t.Fatalf("Pin changed the other arch")
	}
	after, _ := os.ReadFile(p)
	if got, want := strings.Count(string(after), "\n"), strings.Count(string(orig), "\n"); got != want {
		t.Fatalf("Pin changed the line count: %d, want %d", got, want)
	}
	if err := Pin(p, "debian-6.12", "arm64", in, kern, img); err == nil {
		t.Fatalf("Pin of a debian entry succeeded")
	}
	// A pin that would not read back leaves the lock as it was, and no
	// temporary file beside it.
	if err := Pin(p, "reference", "arm64", in, kern, "2222"); err == nil {
		t.Fatalf("Pin of a short image hash succeeded")
	}
	if now, _ := os.ReadFile(p); string(now) != string(after) {
		t.Fatalf("a failed Pin changed the lock")
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(p), "*.tmp*"))
	if len(left) > 0 {
		t.Fatalf("a failed Pin left %v", left)
	}
}

func TestReadRefusesUnknownKeys(t *testing.T) {
	orig, err := os.ReadFile("../../../images.lock")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "images.lock")
	bad := strings.Replace(string(orig), "    kind: build\n", "    kind: build\n    series-version: 3\n", 1)
	os.WriteFile(p, []byte(bad), 0o644)
	if _, err := Read(p); err == nil || !strings.Contains(err.Error(), "series-version") {
		t.Fatalf("Read(misspelled key) = %v, want the key named", err)
	}
}

// TestHasStackmap: only a distribution's kernel may be marked as lacking
// the feature; a kernel built here that lacks it is what a run must catch.
func TestHasStackmap(t *testing.T) {
	no, yes := false, true
	for _, tc := range []struct {
		kind string
		has  *bool
		with bool
		err  string
	}{
		{KindDebian, nil, true, ""},
		{KindDebian, &no, false, ""},
		{KindDebian, &yes, true, ""},
		{KindBuild, &no, false, "distribution kernels"},
		{KindB4, &no, false, "distribution kernels"},
	} {
		e := Entry{Name: "e", Kind: tc.kind, HasStackmap: tc.has}
		if got := e.WithStackmap(); got != tc.with {
			t.Errorf("%s has_stackmap %v: WithStackmap() = %v, want %v", tc.kind, tc.has, got, tc.with)
		}
		err := CheckEntry(&e)
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s has_stackmap false: CheckEntry() = %v, want %q", tc.kind, err, tc.err)
		}
	}
	l, err := Read("../../../images.lock")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Entries {
		if want := e.Kind != KindDebian; e.WithStackmap() != want {
			t.Errorf("images.lock: %s (%s) has_stackmap %v, want %v", e.Name, e.Kind, e.WithStackmap(), want)
		}
	}
}

// A local tree and mbox are found from the lock's directory, not from
// wherever smct was started.
func TestReadResolvesLocalPaths(t *testing.T) {
	dir := t.TempDir()
	text := "default: k\nentries:\n- name: k\n  kind: b4\n  tree: ../linux\n  base: HEAD~3\n" +
		"  series: mail/v5.mbox\n  config: [common]\n  arches:\n    arm64: {inputs_sha256: '', image_sha256: ''}\n"
	p := filepath.Join(dir, "images.lock")
	os.WriteFile(p, []byte(text), 0o644)
	l, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := l.Entry("k")
	if want := filepath.Join(filepath.Dir(dir), "linux"); e.Tree != want || e.LocalTree() != want {
		t.Errorf("tree %q (local %q), want %q", e.Tree, e.LocalTree(), want)
	}
	if want := filepath.Join(dir, "mail", "v5.mbox"); e.Series != want {
		t.Errorf("series %q, want %q", e.Series, want)
	}
}

// Pins of both arches at once (two processes running `smct kernel -pin`)
// take turns: neither loses the other's.
func TestPinsAtOnceKeepBoth(t *testing.T) {
	orig, err := os.ReadFile("../../../images.lock")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "images.lock")
	for round := range 10 {
		os.WriteFile(p, orig, 0o644)
		in, img := strings.Repeat(fmt.Sprint(round), 64), strings.Repeat("f", 64)
		var wg sync.WaitGroup
		for _, arch := range []string{"arm64", "x86_64"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := Pin(p, "reference", arch, in, img, img); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		l, err := Read(p)
		if err != nil {
			t.Fatal(err)
		}
		e, _ := l.Entry("reference")
		for _, arch := range []string{"arm64", "x86_64"} {
			if e.Arches[arch].InputsSHA256 != in {
				t.Fatalf("round %d: the %s pin was lost", round, arch)
			}
		}
	}
}

// A process that waited while another fetched the image finds it there
// and fetches nothing (this entry's package does not exist: a fetch fails).
func TestFetchWaitsAndFindsTheImage(t *testing.T) {
	data := []byte("a kernel image\n")
	sum := sha256.Sum256(data)
	a := ArchImage{Package: "smct-no-such-package", Version: "1", Path: "boot/vmlinuz", DebSHA256: strings.Repeat("0", 64), ImageSHA256: hex.EncodeToString(sum[:])}
	e := &Entry{Name: "test", Kind: KindDebian, Arches: map[string]ArchImage{"arm64": a}}
	cache := t.TempDir()
	out := filepath.Join(cache, "images", a.ImageSHA256)
	release, err := buildlock.Hold(out+".lock", "fetching", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var said bytes.Buffer
	done := make(chan error)
	go func() {
		path, err := Fetch(e, arch.MustLookup("arm64"), cache, progress.New(&said))
		if err == nil && path != out {
			err = fmt.Errorf("Fetch() = %s, want %s", path, out)
		}
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
	release()
	if err := <-done; err != nil {
		t.Fatalf("the waiting fetch: %v", err)
	}
	if !strings.Contains(said.String(), "waiting for another smct fetching smct-no-such-package 1 (arm64)") {
		t.Errorf("the waiting fetch did not say so: %q", said.String())
	}
}

// The sanitized lane runs only the kernels built here: a packaged entry
// asked for by name is refused, and left out of the defaults.
func TestForLane(t *testing.T) {
	l := &Lock{Entries: []Entry{{Name: "reference", Kind: KindBuild}, {Name: "debian-6.12", Kind: KindDebian}, {Name: "v4", Kind: KindB4}}}
	all := []string{"reference", "debian-6.12", "v4"}
	if kept, left, err := l.ForLane(all, kchoice.Plain, true); err != nil || !slices.Equal(kept, all) || left != nil {
		t.Errorf("plain lane: %v %v %v, want all kept", kept, left, err)
	}
	if kept, left, err := l.ForLane(all, kchoice.Sanitized, false); err != nil || !slices.Equal(kept, []string{"reference", "v4"}) || !slices.Equal(left, []string{"debian-6.12"}) {
		t.Errorf("sanitized, defaults: %v %v %v, want the debian entry left out", kept, left, err)
	}
	if _, _, err := l.ForLane(all, kchoice.Sanitized, true); err == nil || !strings.Contains(err.Error(), "IMAGE=debian-6.12 is a packaged kernel") {
		t.Errorf("sanitized, asked by name: %v, want the debian entry refused", err)
	}
}
