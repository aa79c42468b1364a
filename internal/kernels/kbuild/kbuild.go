// SPDX-License-Identifier: GPL-2.0-only

// Package kbuild builds the reference kernel: Debian's linux-source-6.12
// with the project's patches (kernel/patches) and config fragments
// (kernel/config), out of tree with ccache, cached under a key made of
// every input so that an unchanged second build is instant.
package kbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
	"github.com/ftrace-stackmap/conformance/internal/kernels/kchoice"
	"github.com/ftrace-stackmap/conformance/internal/kernels/korigin"
	"github.com/ftrace-stackmap/conformance/internal/progress"
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
	// Lane is the sanitized lane, and DebugConfig the sha256 of the
	// source's debug.config it merges; both absent from a plain build's
	// key, which stays what it was.
	Lane        kchoice.Lane `json:"sanitize,omitempty"`
	DebugConfig string       `json:"debug_config_sha256,omitempty"`
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
	// KernelSHA256 hashes the files of kernel/ among its inputs
	// (FilesSHA256), "" for a build of another source.
	KernelSHA256 string
	Cached       bool
	Origin       korigin.Origin // what it was made from
}

// Env is what every build of a kernel shares, whatever its source: the
// arch, the project's kernel/ directory, the cache, where progress goes,
// make's -j and the lane.
type Env struct {
	Host
	Lane kchoice.Lane // the sanitized lane: debug.config and sanitize.config merged too
}

// Host is where and for which arch kernels are built here, whatever the
// lane: a run's kernel choice brings the lane (kernels.Request).
type Host struct {
	Arch      arch.Arch
	KernelDir string // the project's kernel/ directory
	CacheDir  string
	Progress  *progress.Reporter
	Jobs      int // make's -j; 0 means one per CPU
}

// Builder builds the reference kernel for one arch.
type Builder struct {
	Env
}

// jobs is make's -j: Jobs, or one per CPU. It is not part of the key: the
// kernel built does not depend on it.
func (b Env) jobs() int {
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
	release, err := buildlock.Hold(treeOf(cachelimit.Kbuild.In(b.CacheDir), a.Name, b.Lane).lock, "building the "+b.what(), b.Progress.Always())
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
	origin := in.origin(b.laneFragments(b.src()))
	if image, sum, ok := b.Cached(key); ok {
		return &Result{Image: image, ImageSHA256: sum, Key: key, KernelSHA256: FilesSHA256(in.Files), Cached: true, Origin: origin}, nil
	}
	start := time.Now()
	out, err := b.compile(a, key)
	if err != nil {
		return nil, err
	}
	res, err := b.keep(key, out, start, in)
	if res != nil {
		res.Origin, res.KernelSHA256 = origin, FilesSHA256(in.Files)
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
	return cachelimit.Kernels.In(b.CacheDir, b.Arch.Name+b.Lane.Suffix()+"-"+key[:16], filepath.Base(b.bootImage()))
}

// bootImage is the build's file to boot. A sanitized x86_64 kernel is
// kept as its bzImage: its vmlinux's PVH entry dies before its first
// console line, and a bzImage lets the runner find the route that boots.
func (b Builder) bootImage() string {
	if b.Lane.IsSanitized() && b.Arch.KernelTarget == "bzImage" {
		return "arch/x86/boot/bzImage"
	}
	return b.Arch.BootImage
}

// what names the reference kernel the builder builds, for a lock's holder.
func (b Builder) what() string {
	if b.Lane.IsSanitized() {
		return b.Arch.Name + " reference kernel, " + b.Lane.Words()
	}
	return b.Arch.Name + " reference kernel"
}

// keep stores the build finished in out under key, its inputs.json the
// build's record with the image's hash and the build time added: one way
// for every kind of build.
func (b Builder) keep(key, out string, start time.Time, record any) (*Result, error) {
	sum, err := images.FileSHA256(filepath.Join(out, b.bootImage()))
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
		return copyFile(filepath.Join(out, b.bootImage()), tmp)
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
	if b.Lane.IsSanitized() {
		in.Lane = b.Lane
		if in.DebugConfig, err = b.debugConfigSHA256(); err != nil {
			return in, err
		}
	}
	if in.Files, err = KernelFiles(b.KernelDir, b.Arch.Name, b.Lane); err != nil {
		return in, err
	}
	in.Compiler, err = Compiler(a)
	return in, err
}

// KernelFiles hashes the files of kernel/ (kernelDir) a build for arch
// reads: the patches and the config fragments, the sanitized lane's too
// when asked. Paths are relative to kernelDir.
func KernelFiles(kernelDir, arch string, l kchoice.Lane) (map[string]string, error) {
	patterns := []string{"patches/*.patch", "config/common.config", "config/" + arch + ".config"}
	if l.IsSanitized() {
		patterns = append(patterns, SanitizeConfig)
	}
	var files []string
	for _, pattern := range patterns {
		m, _ := filepath.Glob(filepath.Join(kernelDir, pattern))
		files = append(files, m...)
	}
	sort.Strings(files)
	out := map[string]string{}
	for _, f := range files {
		sum, err := images.FileSHA256(f)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(kernelDir, f)
		out[rel] = sum
	}
	return out, nil
}

// FilesSHA256 is one hash of KernelFiles: what images.lock pins as
// kernel_sha256, so that kernel/ changed without a new pin shows without
// a build or the machine's compiler and source package.
func FilesSHA256(files map[string]string) string { return inputsKey(files) }

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
	return b.byTarball("tarball.sha256", func() (string, error) { return images.FileSHA256(tarball) })
}

// compile prepares a patched tree for the key and builds it; it returns
// the build directory.
func (b Builder) compile(a arch.Arch, key string) (string, error) {
	work := cachelimit.Kbuild.In(b.CacheDir)
	pristine := pristineDir(work)
	// One tree and one build directory per arch and lane, at fixed paths:
	// ccache then finds its objects again when only a patch changed, and
	// a plain and a sanitized build never share a build directory.
	t := treeOf(work, b.Arch.Name, b.Lane)
	src, out, log := t.src, t.out, t.log
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
	return out, b.Make(work, src, out, log, b.laneFragments(src))
}

// src is the patched source tree of the arch and lane.
func (b Builder) src() string {
	return treeOf(cachelimit.Kbuild.In(b.CacheDir), b.Arch.Name, b.Lane).src
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

// laneFragments are the fragments of the builder's lane for the tree at
// src: the plain ones, then, sanitized, its debug.config and
// sanitize.config.
func (b Builder) laneFragments(src string) []string {
	return withLane(b.fragments(), b.Lane, src, b.KernelDir)
}
