// SPDX-License-Identifier: GPL-2.0-only

package cachelimit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/textlines"
)

// Env overrides caps: AREA=SIZE,... (CACHE_LIMIT=kernels=2G,kbuild=0); a
// SIZE is bytes, or a number with K, M, G or T (powers of 1024); 0 is no
// limit.
const Env = "CACHE_LIMIT"

// kind is what keeps an area within bounds.
type kind int

const (
	lru    kind = iota // smct, least recently used first
	ccache             // ccache itself, told its max_size
	kept               // nothing: the LAVA lab's state is never removed
)

const (
	kiB = int64(1) << 10
	miB = kiB << 10
	giB = miB << 10
)

// Name is an area of the cache: every directory the suite keeps under
// it is one of these, and every writer asks its name for the path (In,
// Lock), so that the table below is the one place the disk is named.
type Name string

const (
	Kernels   Name = "kernels"
	Vmlinux   Name = "vmlinux"
	Images    Name = "images"
	KVMProbe  Name = "kvm-probe"
	BootRoute Name = "boot-route"
	Kbuild    Name = "kbuild"
	Treebuild Name = "treebuild"
	Review    Name = "review"
	E2E       Name = "e2e"
	Ccache    Name = "ccache"
	Lab       Name = "lab"
)

// In is a path in the area of the cache at cache.
func (n Name) In(cache string, parts ...string) string {
	return filepath.Join(append([]string{cache, string(n)}, parts...)...)
}

// Lock is the lock beside the area that one user of it holds at a time
// (a walk's checkout).
func (n Name) Lock(cache string) string { return filepath.Join(cache, string(n)+".lock") }

// areas are the cache's directories, what each holds and its default cap.
// The caps fit a CI runner's disk (a GitHub runner has about 14 GB free):
// together at most 9.5 GB, besides the end-to-end tests' one repository
// (1.9 GB), and CI keeps only the areas marked ci between jobs (3 GB).
var areas = []struct {
	name    Name
	about   string
	cap     int64
	kind    kind
	entries func(cache, dir string) []Entry
	ci      bool // kept between CI jobs (ci.yml's caches)
}{
	{Kernels, "built kernels, by arch and inputs", giB, lru, ownLocks, true},
	{Vmlinux, "vmlinux unpacked from bzImages, by image sha256", 512 * miB, lru, ownLocks, true},
	{Images, "fetched Debian kernels and tools, by sha256", 512 * miB, lru, ownLocks, true},
	{KVMProbe, "KVM probes' answers, by kernel, QEMU and host", miB, lru, ownLocks, false},
	{BootRoute, "whether an x86 kernel boots through PVH or from its bzImage, by image and QEMU", miB, lru, ownLocks, false},
	// A kernel's build tree is about 1 GB: keep the newest few.
	{Kbuild, "the reference kernel's trees, by arch and lane, and the unpacked source", 5 * giB / 2, lru, nil, false},
	{Treebuild, "b4 entries' and TREE= builds, by tree and arch", 2 * giB, lru, ownLocks, false},
	{Review, "a series walk's checkout", 2 * giB, lru, nil, false},
	// Made once by test/e2e and only read by smct (a test's walk borrows
	// its objects): no cap; clean-cache removes it.
	{E2E, "the end-to-end tests' Linux repository, made once", 0, lru, unlocked, false},
	{Ccache, "the compiler's cache (its own max_size)", giB, ccache, nil, true},
	{Lab, "the LAVA lab's state, never removed", 0, kept, nil, false},
}

// listers are the entries' listers of the areas whose owners lay them
// out themselves (Lists).
var listers = map[Name]func(cache, dir string) []Entry{}

// Lists registers how the owner of an area lays out its entries; the
// owner's package does it as it starts. An area whose owner is not in
// the program lists no entry, and so is never pruned by it.
func Lists(n Name, entries func(cache, dir string) []Entry) { listers[n] = entries }

// KeptByCI are the areas CI keeps between jobs: small, and slow to make
// again (ci.yml caches exactly these; test/ci holds it to them).
func KeptByCI() []Name {
	var out []Name
	for _, a := range areas {
		if a.ci {
			out = append(out, a.name)
		}
	}
	return out
}

// Area is one directory of the cache.
type Area struct {
	Name  string
	Dir   string
	Cap   int64  // bytes; 0 is no limit
	About string // what it holds, keyed by what
	kind  kind
	cache string
	list  func(cache, dir string) []Entry
}

// Areas are the areas of the cache at cacheDir, with their caps: the
// defaults, or what CACHE_LIMIT sets.
func Areas(cacheDir string) ([]Area, error) {
	caps, err := readCaps(os.Getenv(Env))
	if err != nil {
		return nil, err
	}
	var out []Area
	for _, a := range areas {
		list := a.entries
		if l, ok := listers[a.name]; ok {
			list = l
		}
		out = append(out, Area{Name: string(a.name), Dir: a.name.In(cacheDir), Cap: caps[string(a.name)], About: a.about,
			kind: a.kind, cache: cacheDir, list: list})
	}
	return out, nil
}

// readCaps reads CACHE_LIMIT's value over the defaults.
func readCaps(s string) (map[string]int64, error) {
	caps := map[string]int64{}
	var names []string
	for _, a := range areas {
		if a.kind != kept {
			caps[string(a.name)] = a.cap
			names = append(names, string(a.name))
		}
	}
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		name, size, ok := strings.Cut(item, "=")
		if _, known := caps[name]; !ok || !known {
			return nil, fmt.Errorf("%s=%s: want AREA=SIZE,... with AREA one of %s", Env, s, strings.Join(names, ", "))
		}
		n, err := ParseSize(size)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %s: %v", Env, s, name, err)
		}
		caps[name] = n
	}
	return caps, nil
}

var sizeRe = regexp.MustCompile(`^(\d+(?:\.\d+)?)([KMGT]?)(?:I?B)?$`)

// ParseSize reads a size: bytes, or a number with K, M, G or T, powers of
// 1024 (2G, 512M, 1.5G).
func ParseSize(s string) (int64, error) {
	m := sizeRe.FindStringSubmatch(strings.ToUpper(strings.TrimSpace(s)))
	if m == nil {
		return 0, fmt.Errorf("size %q: want bytes or a number with K, M, G or T (512M, 2G), 0 for no limit", s)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	shift := map[string]uint{"": 0, "K": 10, "M": 20, "G": 30, "T": 40}[m[2]]
	return int64(v * float64(int64(1)<<shift)), nil
}

// FormatSize writes a size as du -h does: 40K, 164M, 1.9G.
func FormatSize(n int64) string {
	if n < kiB {
		return fmt.Sprintf("%dB", n)
	}
	v, unit := float64(n), ""
	for _, unit = range []string{"K", "M", "G", "T"} {
		if v /= 1024; v < 1024 {
			break
		}
	}
	if v < 10 {
		return fmt.Sprintf("%.1f%s", v, unit)
	}
	return fmt.Sprintf("%.0f%s", v, unit)
}

// CCacheMaxSize is ccache's max_size (CCACHE_MAXSIZE) for kernel builds:
// the ccache area's cap, in ccache's binary units; 0 is no limit.
func CCacheMaxSize() string {
	caps, err := readCaps(os.Getenv(Env))
	if err != nil {
		caps, _ = readCaps("") // smct's door refused it already
	}
	n := caps["ccache"]
	switch {
	case n == 0:
		return "0"
	case n%giB == 0:
		return fmt.Sprintf("%dGi", n/giB)
	case n%miB == 0:
		return fmt.Sprintf("%dMi", n/miB)
	}
	return fmt.Sprintf("%dKi", (n+kiB-1)/kiB)
}

// Policy says how the area is kept within bounds, for smct cache.
func (a Area) Policy() string {
	switch {
	case a.kind == kept:
		return "kept"
	case a.Cap == 0:
		return "no limit"
	}
	return FormatSize(a.Cap)
}

// Usage is what the area holds on disk, and how many entries; entries is
// -1 for an area smct does not prune itself (ccache, the lab).
func (a Area) Usage() (size int64, entries int, err error) {
	es := a.entries()
	s, err := scanArea(a.Dir, es)
	if err != nil {
		return 0, 0, err
	}
	if a.kind != lru {
		return s.total, -1, nil
	}
	return s.total, len(es), nil
}

func (a Area) entries() []Entry {
	if a.list == nil {
		return nil
	}
	return a.list(a.cache, a.Dir)
}

// Prune removes the area's least recently used entries until it is within
// its cap. ccache keeps its own; the lab's state is never removed.
func (a Area) Prune() (Pruned, error) {
	if a.kind != lru || a.Cap == 0 {
		return Pruned{}, nil
	}
	return shrink(a.Dir, a.entries(), a.Cap)
}

// Clean removes every entry of the area that nobody holds; ccache clears
// its cache itself; the lab's state stays.
func (a Area) Clean() (Pruned, error) {
	switch a.kind {
	case lru:
		return shrink(a.Dir, a.entries(), 0)
	case ccache:
		before, _, err := a.Usage()
		if err == nil {
			err = clearCCache(a.Dir)
		}
		after, _, _ := a.Usage()
		return Pruned{Before: before, After: after}, err
	}
	return Pruned{}, nil
}

// clearCCache has ccache clear its cache, which is safe while builds use
// it; without ccache nobody does, and the directory goes.
func clearCCache(dir string) error {
	if _, err := os.Stat(dir); err != nil {
		return nil
	}
	path, err := exec.LookPath("ccache")
	if err != nil {
		return os.RemoveAll(dir)
	}
	cmd := exec.Command(path, "-C")
	cmd.Env = append(os.Environ(), "CCACHE_DIR="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("ccache -C: %v: %s", err, textlines.Tail(string(out), 3))
	}
	return nil
}

// names are the entries' names in dir, sorted, without lock files (which
// go with their entries) and dot-files (files being written, atomicfile's).
func names(dir string) []string {
	des, _ := os.ReadDir(dir) // none when the area is not made yet
	var out []string
	for _, d := range des {
		if n := d.Name(); !strings.HasSuffix(n, ".lock") && !strings.HasPrefix(n, ".") {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// ownLocks: each name is an entry, guarded by its own name.lock beside it
// (held while it is prepared, and shared while a run uses it: Use).
func ownLocks(_, dir string) []Entry {
	var es []Entry
	for _, n := range names(dir) {
		p := filepath.Join(dir, n)
		es = append(es, Entry{Name: n, Paths: []string{p}, Locks: []string{p + ".lock"}, OwnLock: true})
	}
	return es
}

// unlocked: each name is an entry, without a lock (the end-to-end tests'
// repository, made once and then only read).
func unlocked(_, dir string) []Entry {
	var es []Entry
	for _, n := range names(dir) {
		es = append(es, Entry{Name: n, Paths: []string{filepath.Join(dir, n)}})
	}
	return es
}

func in(dir string, names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, filepath.Join(dir, n))
	}
	return out
}

// Present appends e when any of its paths is there.
func Present(es []Entry, e Entry) []Entry {
	for _, p := range e.Paths {
		if _, err := os.Lstat(p); err == nil {
			return append(es, e)
		}
	}
	return es
}
