// SPDX-License-Identifier: GPL-2.0-only

package kbuild

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/cachelimit"
)

// A build tree's source is hard links to the unpacked tarball: counted
// once, and removing the tree frees only what it holds alone.
func TestTreesHardLinksCountOnce(t *testing.T) {
	cache := t.TempDir()
	dir := cachelimit.Kbuild.In(cache)
	for _, d := range []string{"pristine", "src-arm64", "out-arm64", "src-arm64-sanitized", "out-arm64-sanitized"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	big := bytes.Repeat([]byte{2}, 256<<10)
	os.WriteFile(filepath.Join(dir, "pristine", "Makefile"), big, 0o644)
	for _, src := range []string{"src-arm64", "src-arm64-sanitized"} {
		if err := os.Link(filepath.Join(dir, "pristine", "Makefile"), filepath.Join(dir, src, "Makefile")); err != nil {
			t.Skip("no hard links here:", err)
		}
	}
	os.WriteFile(filepath.Join(dir, "out-arm64", "Image"), big[:64<<10], 0o644)
	os.WriteFile(filepath.Join(dir, "out-arm64-sanitized", "Image"), big[:64<<10], 0o644)
	old, older := time.Now().Add(-time.Hour), time.Now().Add(-2*time.Hour)
	for _, d := range []string{"src-arm64", "out-arm64"} {
		os.Chtimes(filepath.Join(dir, d), old, old)
	}
	for _, d := range []string{"src-arm64-sanitized", "out-arm64-sanitized"} {
		os.Chtimes(filepath.Join(dir, d), older, older)
	}
	t.Setenv(cachelimit.Env, "kbuild=200K")
	areas, err := cachelimit.Areas(cache)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(areas, func(a cachelimit.Area) bool { return a.Name == string(cachelimit.Kbuild) })
	p, err := areas[i].Prune()
	if err != nil {
		t.Fatal(err)
	}
	if p.Before >= 2*int64(len(big)) {
		t.Errorf("%d bytes: the linked file counted more than once", p.Before)
	}
	// Each lane's tree goes first, oldest first, freeing its Image only:
	// pristine must go too.
	if !slices.Equal(p.Removed, []string{"arm64-sanitized", "arm64", "pristine"}) || p.After > 200<<10 {
		t.Errorf("removed %v, %d bytes left; want arm64-sanitized, arm64, then pristine, under 200K", p.Removed, p.After)
	}
}
