// SPDX-License-Identifier: GPL-2.0-only

// Package kbuild builds the reference kernel: Debian's linux-source-6.12
// with the project's patches (kernel/patches) and config fragments
// (kernel/config), out of tree with ccache, cached under a key made of
// every input so that an unchanged second build is instant.
package kbuild

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/apt"
	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/atomicfile"
	"github.com/ftrace-stackmap/conformance/internal/buildlock"
	"github.com/ftrace-stackmap/conformance/internal/cachelimit"
	"github.com/ftrace-stackmap/conformance/internal/kernels/images"
	"github.com/ftrace-stackmap/conformance/internal/kernels/korigin"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/textlines"
)

// SourcePackage is the Debian package whose tarball is built.
const SourcePackage = "linux-source-6.12"

const tarball = "/usr/src/linux-source-6.12.tar.xz"

// compiler is what compiles the kernel for a, from Debian.
func compiler(a arch.Arch) apt.Need { return apt.Need{Program: a.Compiler, Package: a.CompilerPkg} }

// Inputs are what a build depends on; their hash is the build's key.
type Inputs struct {
	Arch          string            `json:"arch"`
	SourcePackage string            `json:"source_package"`
	SourceVersion string            `json:"source_version"`
	SourceSHA256  string            `json:"source_sha256"`
	Files         map[string]string `json:"files"` // patches and fragments: path -> sha256
	Compiler      string            `json:"compiler"`
}

// Key is the hash of the inputs.
func (in Inputs) Key() string { return inputsKey(in) }

// inputsKey hashes a build's inputs, of either source: the cache key.
func inputsKey(inputs any) string {
	b, _ := json.Marshal(inputs)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Result is a built kernel, of either source.
type Result struct {
	Image       string // the file to boot
	ImageSHA256 string
	Key         string // the hash of its inputs, its cache key
	Cached      bool
	Origin      korigin.Origin // what it was made from
}

// Builder builds for one arch.
type Builder struct {
	Arch      arch.Arch
	KernelDir string // the project's kernel/ directory
	CacheDir  string
	Progress  *progress.Reporter
	Jobs      int // make's -j; 0 means one per CPU
}

// jobs is make's -j: Jobs, or one per CPU. It is not part of the key: the
// kernel built does not depend on it.
func (b Builder) jobs() int {
	if b.Jobs > 0 {
		return b.Jobs
	}
	return runtime.NumCPU()
}

// Tools are what building a kernel needs from Debian, besides the compiler
// and the source.
var Tools = []apt.Need{
	{Program: "make", Package: "make"},
	{Program: "flex", Package: "flex"},
	{Program: "bison", Package: "bison"},
	{Program: "bc", Package: "bc"},
	{Program: "ccache", Package: "ccache"},
	{Program: "cpio", Package: "cpio"},
	{Program: "xz", Package: "xz-utils"},
	{Program: "patch", Package: "patch"},
	{Path: "/usr/include/gelf.h", Package: "libelf-dev"},
	{Path: "/usr/include/openssl/opensslv.h", Package: "libssl-dev"},
}

// Build returns the kernel for the inputs, building it when it is not cached.
func (b Builder) Build() (*Result, error) {
	a := b.Arch
	// One builder at a time in this arch's build directory and cache.
	release, err := buildlock.Hold(filepath.Join(b.CacheDir, "kbuild", a.Name+".lock"), "building the "+a.Name+" reference kernel", b.Progress.Always())
	if err != nil {
		return nil, err
	}
	defer release()
	if err := apt.Ensure(b.Progress, append(Tools, compiler(a), apt.Need{Program: "gcc", Package: "build-essential"}, apt.Need{Path: tarball, Package: SourcePackage})...); err != nil {
		return nil, err
	}
	in, err := b.inputs(a)
	if err != nil {
		return nil, err
	}
	key := in.Key()
	origin := in.origin(b.fragments())
	if image, sum, ok := b.Cached(key); ok {
		return &Result{Image: image, ImageSHA256: sum, Key: key, Cached: true, Origin: origin}, nil
	}
	start := time.Now()
	out, err := b.compile(a, key)
	if err != nil {
		return nil, err
	}
	res, err := b.keep(key, out, start, in)
	if res != nil {
		res.Origin = origin
	}
	return res, err
}

// Cached returns the cached image of the build keyed key, and its hash,
// if it is there; it is in use until the process ends, from before it is
// looked at, so that no pruner takes it in between.
func (b Builder) Cached(key string) (image, sum string, ok bool) {
	image = b.cached(key)
	cachelimit.Use(filepath.Dir(image))
	sum, err := images.FileSHA256(image)
	return image, sum, err == nil
}

func (b Builder) cached(key string) string {
	return filepath.Join(b.CacheDir, "kernels", b.Arch.Name+"-"+key[:16], filepath.Base(b.Arch.BootImage))
}

// keep stores the build finished in out under key, its inputs.json the
// build's record with the image's hash and the build time added: one way
// for every kind of build.
func (b Builder) keep(key, out string, start time.Time, record any) (*Result, error) {
	sum, err := images.FileSHA256(filepath.Join(out, b.Arch.BootImage))
	if err != nil {
		return nil, err
	}
	fields := map[string]any{}
	js, _ := json.Marshal(record)
	json.Unmarshal(js, &fields)
	fields["image_sha256"], fields["build_time"] = sum, time.Since(start).Round(time.Second).String()
	info, _ := json.MarshalIndent(fields, "", "  ")
	image, err := b.Store(key, out, info)
	if err != nil {
		return nil, err
	}
	cachelimit.Use(filepath.Dir(image)) // storing took the lock alone
	return &Result{Image: image, ImageSHA256: sum, Key: key}, nil
}

// Store copies the build in out to the cache under key, with info as its
// inputs.json, and returns the cached image. The entry's lock keeps a
// pruner from removing it half written.
func (b Builder) Store(key, out string, info []byte) (string, error) {
	image := b.cached(key)
	dir := filepath.Dir(image)
	release, err := buildlock.Hold(dir+".lock", "storing the kernel in "+dir, b.Progress.Always())
	if err != nil {
		return "", err
	}
	defer release()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := atomicfile.Produce(filepath.Join(dir, "config"), 0o644, func(tmp string) error {
		return copyFile(filepath.Join(out, ".config"), tmp)
	}); err != nil {
		return "", err
	}
	if err := atomicfile.Write(filepath.Join(dir, "inputs.json"), info, 0o644); err != nil {
		return "", err
	}
	// The image last: its presence marks the build complete.
	if err := atomicfile.Produce(image, 0o644, func(tmp string) error {
		return copyFile(filepath.Join(out, b.Arch.BootImage), tmp)
	}); err != nil {
		return "", err
	}
	return image, nil
}

// inputs hashes everything the build depends on.
func (b Builder) inputs(a arch.Arch) (Inputs, error) {
	in := Inputs{Arch: b.Arch.Name, SourcePackage: SourcePackage, Files: map[string]string{}}
	v, err := exec.Command("dpkg-query", "-W", "-f=${Version}", SourcePackage).Output()
	if err != nil {
		return in, fmt.Errorf("%s is not installed: %v", SourcePackage, err)
	}
	in.SourceVersion = string(v)
	if in.SourceSHA256, err = b.tarballSHA256(); err != nil {
		return in, err
	}
	var files []string
	for _, pattern := range []string{"patches/*.patch", "config/common.config", "config/" + b.Arch.Name + ".config"} {
		m, _ := filepath.Glob(filepath.Join(b.KernelDir, pattern))
		files = append(files, m...)
	}
	sort.Strings(files)
	for _, f := range files {
		sum, err := images.FileSHA256(f)
		if err != nil {
			return in, err
		}
		rel, _ := filepath.Rel(b.KernelDir, f)
		in.Files[rel] = sum
	}
	in.Compiler, err = Compiler(a)
	return in, err
}

// Compiler is the first line of the --version of the compiler for a.
func Compiler(a arch.Arch) (string, error) {
	cc, err := exec.Command(a.Cross+"gcc", "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%sgcc: %v", a.Cross, err)
	}
	return strings.SplitN(string(cc), "\n", 2)[0], nil
}

// tarballSHA256 hashes the source tarball, remembering the sum by size and
// time so a second build does not read 140 MB again.
func (b Builder) tarballSHA256() (string, error) {
	fi, err := os.Stat(tarball)
	if err != nil {
		return "", err
	}
	memo := filepath.Join(b.CacheDir, "kbuild", "tarball.sha256")
	stamp := fmt.Sprintf("%d %d ", fi.Size(), fi.ModTime().UnixNano())
	if old, err := os.ReadFile(memo); err == nil && strings.HasPrefix(string(old), stamp) {
		return strings.TrimPrefix(string(old), stamp), nil
	}
	sum, err := images.FileSHA256(tarball)
	if err != nil {
		return "", err
	}
	// Builds of both arches may write it at once.
	if err := os.MkdirAll(filepath.Dir(memo), 0o755); err != nil {
		return "", err
	}
	return sum, atomicfile.Write(memo, []byte(stamp+sum), 0o644)
}

// compile prepares a patched tree for the key and builds it; it returns
// the build directory.
func (b Builder) compile(a arch.Arch, key string) (string, error) {
	work := filepath.Join(b.CacheDir, "kbuild")
	pristine := filepath.Join(work, "pristine")
	// One tree and one build directory per arch, at fixed paths: ccache
	// then finds its objects again when only a patch changed.
	src := filepath.Join(work, "src-"+b.Arch.Name)
	out := filepath.Join(work, "out-"+b.Arch.Name)
	log := filepath.Join(work, "build-"+b.Arch.Name+".log")
	if err := b.unpackPristine(pristine); err != nil {
		return "", err
	}
	// The trees are used: pruning keeps the most recently used.
	cachelimit.Touch(pristine)
	cachelimit.Touch(out)
	if stamp, err := os.ReadFile(filepath.Join(src, ".patched")); err != nil || string(stamp) != key {
		step := announce(b.Progress, "applying kernel/patches")
		os.RemoveAll(src)
		// Hard links share the pristine files; patch replaces the ones it changes.
		if err := run(work, nil, "cp", "-al", pristine, src); err != nil {
			return "", err
		}
		patches, _ := filepath.Glob(filepath.Join(b.KernelDir, "patches", "*.patch"))
		sort.Strings(patches)
		for _, p := range patches {
			if err := run(src, nil, "patch", "-p1", "--quiet", "--forward", "-i", p); err != nil {
				return "", fmt.Errorf("applying %s: %v", filepath.Base(p), err)
			}
		}
		// Without the stamp the next build patches again: no harm, but say it.
		if err := os.WriteFile(filepath.Join(src, ".patched"), []byte(key), 0o644); err != nil {
			b.Progress.Notef("note: %v\n", err)
		}
		step()
	}
	return out, b.Make(work, src, out, log, b.fragments())
}

// unpackPristine unpacks the source tarball into pristine unless it is
// there. Both arches' builds share it, each under its own arch's lock:
// this lock keeps a second from unpacking (or removing) it at once.
func (b Builder) unpackPristine(pristine string) error {
	made := func() bool { _, err := os.Stat(filepath.Join(pristine, "Makefile")); return err == nil }
	if made() {
		return nil
	}
	release, err := buildlock.Hold(pristine+".lock", "unpacking "+tarball, b.Progress.Always())
	if err != nil {
		return err
	}
	defer release()
	if made() {
		return nil
	}
	step := announce(b.Progress, "unpacking %s", tarball)
	os.RemoveAll(pristine)
	// A fixed name, under the lock: the next unpack clears a killed one's
	// half tree (1.5 GB) instead of leaving it beside.
	tmp := pristine + ".tmp"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	if err := run(tmp, nil, "tar", "--strip-components=1", "-xf", tarball); err != nil {
		return err
	}
	if err := os.Rename(tmp, pristine); err != nil {
		return err
	}
	step()
	return nil
}

// fragments are the config fragments of the reference kernel and of a
// local tree: the common one, then the arch's.
func (b Builder) fragments() []string {
	return []string{filepath.Join(b.KernelDir, "config", "common.config"), filepath.Join(b.KernelDir, "config", b.Arch.Name+".config")}
}

// Make configures the source tree src (tinyconfig plus the fragments, each
// line checked) and compiles it into out with ccache, its output in log.
// ccache takes work as the base of the paths it hashes.
// Lines in absent may be missing from the final .config: options of a
// feature the tree does not have.
func (b Builder) Make(work, src, out, log string, fragments []string, absent ...string) error {
	a := b.Arch
	env := append(withoutMake(os.Environ()),
		"ARCH="+a.KernelArch, "CROSS_COMPILE="+a.Cross,
		"CCACHE_DIR="+filepath.Join(b.CacheDir, "ccache"), "CCACHE_DEPEND=1", "CCACHE_BASEDIR="+work,
		"CCACHE_MAXSIZE="+cachelimit.CCacheMaxSize(), // ccache keeps its cache within the area's cap
		// Fixed build identity, so the same inputs give the same image.
		"KBUILD_BUILD_TIMESTAMP=2026-01-01", "KBUILD_BUILD_USER=smct", "KBUILD_BUILD_HOST=smct", "KBUILD_BUILD_VERSION=1")
	step := announce(b.Progress, "configuring %s (tinyconfig + kernel/config)", b.Arch.Name)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := run(src, env, "make", "O="+out, "tinyconfig"); err != nil {
		return err
	}
	if err := run(src, env, append([]string{"scripts/kconfig/merge_config.sh", "-m", "-O", out, filepath.Join(out, ".config")}, fragments...)...); err != nil {
		return err
	}
	if err := run(src, env, "make", "O="+out, "olddefconfig"); err != nil {
		return err
	}
	if err := checkConfig(filepath.Join(out, ".config"), fragments, absent); err != nil {
		return err
	}
	step()
	step = announce(b.Progress, "compiling %s (log: %s)", b.Arch.Name, log)
	cc := "CC=ccache " + a.Cross + "gcc"
	if err := b.makeWithProgress(src, env, log, "make", "O="+out, cc, fmt.Sprintf("-j%d", b.jobs()), a.KernelTarget); err != nil {
		return err
	}
	step()
	return nil
}

// checkConfig fails when a fragment line did not make it into .config:
// merge_config.sh drops options whose dependencies are missing.
func checkConfig(config string, fragments, absent []string) error {
	have, err := os.ReadFile(config)
	if err != nil {
		return err
	}
	lines := map[string]bool{}
	for _, l := range absent {
		lines[l] = true
	}
	for _, l := range strings.Split(string(have), "\n") {
		lines[l] = true
	}
	var missing []string
	for _, f := range fragments {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") && !lines[l] {
				missing = append(missing, l+" ("+filepath.Base(f)+")")
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("kernel config lacks fragment lines (unmet dependencies?): %s", strings.Join(missing, ", "))
	}
	return nil
}

// makeWithProgress runs make with its output in log, printing how many
// objects it has compiled every few seconds.
func (b Builder) makeWithProgress(dir string, env []string, log string, args ...string) error {
	f, err := os.Create(log)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, env
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); pw.Close() }()
	start, last := time.Now(), time.Now()
	objects := 0
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(f, line)
		if strings.HasPrefix(strings.TrimSpace(line), "CC ") {
			objects++
		}
		if time.Since(last) >= 15*time.Second || (b.Progress.Terminal() && time.Since(last) >= time.Second) {
			last = time.Now()
			b.progressLine(fmt.Sprintf("    %d objects compiled, %s", objects, time.Since(start).Round(time.Second)))
		}
	}
	err = <-done
	if b.Progress.Terminal() {
		fmt.Fprintln(b.Progress)
	}
	if err != nil {
		return &BuildError{Log: log, Err: err}
	}
	return nil
}

// BuildError is a kernel build that failed: make's own failure, not the
// suite's. A series walk blames the patch for it.
type BuildError struct {
	Log string // make's output
	Err error
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("kernel build failed (%v); the end of %s:\n%s", e.Err, e.Log, tailFile(e.Log, 20))
}

// FirstError is the compiler's or linker's first error line in the log,
// or make's last words when there is none.
func (e *BuildError) FirstError() string {
	data, _ := os.ReadFile(e.Log)
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, "error:") || strings.Contains(l, "undefined reference") {
			return strings.TrimSpace(l)
		}
	}
	return textlines.Tail(string(data), 1)
}

func (b Builder) progressLine(s string) {
	if b.Progress.Terminal() {
		fmt.Fprintf(b.Progress, "\r%s", s)
	} else {
		fmt.Fprintln(b.Progress, s)
	}
}

// announce announces a long step on w and returns what ends it.
func announce(w io.Writer, format string, args ...any) func() {
	fmt.Fprintf(w, "==> %s ...\n", fmt.Sprintf(format, args...))
	start := time.Now()
	return func() { fmt.Fprintf(w, "    done in %.1fs\n", time.Since(start).Seconds()) }
}

func run(dir string, env []string, args ...string) error {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v\n%s", strings.Join(args, " "), err, textlines.Tail(string(out), 20))
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func tailFile(path string, n int) string {
	b, _ := os.ReadFile(path)
	return textlines.Tail(string(b), n)
}

// withoutMake drops the variables an outer make passes down (make -s would
// silence the kernel build's progress).
func withoutMake(env []string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, "MAKEFLAGS=") && !strings.HasPrefix(e, "MFLAGS=") && !strings.HasPrefix(e, "MAKELEVEL=") && !strings.HasPrefix(e, "MAKEOVERRIDES=") {
			out = append(out, e)
		}
	}
	return out
}
