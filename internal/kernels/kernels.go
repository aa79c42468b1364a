// SPDX-License-Identifier: GPL-2.0-only

// Package kernels turns what the user asked for (KERNEL=, IMAGE=, or the
// lock's default) into a kernel QEMU can boot: fetched and verified, or
// built and cached, checked for its arch, unpacked for a PVH boot, and its
// configuration found where it can be.
package kernels

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/buildlock"
	"github.com/ftrace-stackmap/conformance/internal/cachelimit"
	"github.com/ftrace-stackmap/conformance/internal/kernels/images"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kbuild"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kchoice"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kimage"
	"github.com/ftrace-stackmap/conformance/internal/kernels/korigin"
	"github.com/ftrace-stackmap/conformance/internal/progress"
)

// Request says which kernel (the user's choice, whole), where the lock
// is, and how a kernel built here is built (Env: the arch, the project's
// kernel/, the cache, make's -j). In the sanitized lane a kernel built
// here is built with the tree's debug.config and sanitize.config too; a
// KERNEL= must have KASAN on in its config; a fetched one is refused.
type Request struct {
	kchoice.Choice
	LockFile string
	// Host is where kernels are built here; the choice brings the lane.
	kbuild.Host
}

// env is the build environment: this host, the choice's lane.
func (r Request) env() kbuild.Env {
	return kbuild.Env{Host: r.Host, Lane: r.Lane}
}

// Kernel is a kernel ready to boot.
type Kernel struct {
	Path      string            // the image resolved
	Bootable  string            // the file QEMU boots: Path, or its unpacked vmlinux
	SHA256    string            // of Path
	Source    string            // where it came from, for the reports
	Entry     string            // the images.lock entry, "" for KERNEL=
	Reference bool              // the reference kernel built from kernel/ (it has the profile switch)
	Tree      *kbuild.TreeState // the source tree it was built from, for TREE=
	Cached    bool              // built here before: found in the cache
	Origin    korigin.Origin    // what it was made from, as far as known
	// PVH says Bootable is an x86 ELF vmlinux QEMU boots through its PVH
	// entry. When it was unpacked from Path, a bzImage, Path boots too
	// (slower): the way for a kernel that dies on the PVH route.
	PVH bool
	// Config is the kernel's configuration, option name to value, when
	// one was found, and ConfigFrom says where (see findConfig).
	Config     map[string]string
	ConfigFrom string
	// Sanitized is how the kernel is sanitized, in the reports' words: "" when
	// it is not asked to be, the lane's words for a build here.
	Sanitized string
}

// CheckChoice refuses a kernel that is not there before anything is
// built or booted: a KERNEL= that is no file, a TREE= that is no
// directory, an IMAGE= the lock at lockFile does not have.
func CheckChoice(c kchoice.Choice, lockFile string) error {
	if c.Kernel != "" {
		if fi, err := os.Stat(c.Kernel); err != nil || !fi.Mode().IsRegular() {
			return fmt.Errorf("KERNEL=%s: %s", c.Kernel, notThere(err, "not a file"))
		}
	}
	if c.Tree != "" {
		if fi, err := os.Stat(c.Tree); err != nil || !fi.IsDir() {
			return fmt.Errorf("TREE=%s: %s", c.Tree, notThere(err, "not a directory"))
		}
	}
	if c.Image != "" && c.Kernel == "" && c.Tree == "" {
		l, err := images.Read(lockFile)
		if err != nil {
			return err
		}
		if _, err := l.Entry(c.Image); err != nil {
			return fmt.Errorf("IMAGE=%s: %v", c.Image, err)
		}
	}
	return nil
}

// notThere says why a path named is not what it should be: the system's
// words without the path, or what.
func notThere(err error, what string) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	if err != nil {
		return err.Error()
	}
	return what
}

// Resolve finds, fetches or builds the kernel, and checks it can boot.
func Resolve(r Request) (*Kernel, error) {
	k, err := r.find()
	if err != nil {
		return nil, err
	}
	if k.SHA256, err = images.FileSHA256(k.Path); err != nil {
		return nil, fmt.Errorf("hashing the kernel: %w", err)
	}
	if k.Bootable, k.PVH, err = r.bootable(k.Path, k.SHA256); err != nil {
		return nil, err
	}
	k.Config, k.ConfigFrom, err = findConfig(k.Path, k.Bootable)
	if r.Kernel != "" {
		// A user's kernel whose config cannot be read is refused, as
		// before; another's config only scales a time limit.
		if err != nil {
			return nil, err
		}
		if err := r.checkConfig(k); err != nil {
			return nil, err
		}
	}
	if r.Lane.IsSanitized() && r.Kernel != "" {
		if err := r.checkSanitized(k); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// find builds TREE=, or resolves KERNEL= or IMAGE=, to a kernel file.
func (r Request) find() (*Kernel, error) {
	if r.Tree != "" {
		return r.buildTree()
	}
	return r.kernel()
}

// step shows a step while it runs (on a terminal only); the returned func
// ends it with the step's error.
func step(r *progress.Reporter, format string, args ...any) func(error) {
	return r.Step(format, args...)
}

// kernel resolves KERNEL= or IMAGE= (or the lock's default) to a file, and
// says where it came from and whether it is the reference kernel built here.
func (r Request) kernel() (*Kernel, error) {
	if r.Kernel != "" {
		if _, err := os.Stat(r.Kernel); err != nil {
			return nil, fmt.Errorf("KERNEL=%s: %v", r.Kernel, errors.Unwrap(err))
		}
		return &Kernel{Path: r.Kernel, Source: "KERNEL=" + r.Kernel}, nil
	}
	lock, err := images.Read(r.LockFile)
	if err != nil {
		return nil, fmt.Errorf("reading images.lock: %w", err)
	}
	name := r.Image
	if name == "" {
		name = lock.Default
	}
	e, err := lock.Entry(name)
	if err != nil {
		return nil, fmt.Errorf("IMAGE=%s: %w", name, err)
	}
	if e.BuiltHere() {
		// A b4 entry is built here too, but from a posted series: no
		// profile switch.
		k, err := r.buildKernel(e)
		if k != nil {
			k.Entry, k.Reference = e.Name, e.Kind == images.KindBuild
		}
		return k, err
	}
	if r.Lane.IsSanitized() {
		return nil, fmt.Errorf("IMAGE=%s is a packaged kernel (kind %s), fetched as built: SANITIZE=1 builds its kernel here (the reference, a b4 entry, TREE=) or takes a KERNEL= built with KASAN", e.Name, e.Kind)
	}
	step := step(r.Progress, "kernel %s (%s)", e.Name, r.Arch.Name)
	path, err := images.Fetch(e, r.Arch, r.CacheDir, r.Progress)
	step(err)
	if err != nil {
		return nil, fmt.Errorf("fetching the kernel: %w", err)
	}
	a := e.Arches[r.Arch.Name]
	return &Kernel{Path: path, Source: fmt.Sprintf("IMAGE=%s (%s %s)", e.Name, a.Package, a.Version), Entry: e.Name,
		Origin: korigin.Origin{Package: a.Package + " " + a.Version}}, nil
}

// buildKernel builds (or finds in the cache) a build or b4 entry's kernel,
// says where it differs from what the lock pinned, and where it came from.
// A b4 entry needs the network until its kernel is cached.
func (r Request) buildKernel(e *images.Entry) (*Kernel, error) {
	pin, ok := e.Arches[r.Arch.Name]
	if !ok {
		return nil, fmt.Errorf("images.lock entry %s has no %s kernel", e.Name, r.Arch.Name)
	}
	b := kbuild.Builder{Env: r.env()}
	build, from, changed := b.Build, "built from kernel/", "kernel/ differs from what images.lock pins for %s/%s; `make kernel ARCH=%[2]s PIN=1` records it"
	if e.Kind == images.KindB4 {
		tb := kbuild.TreeBuilder{Entry: e, Env: r.env()}
		series := e.MessageID
		if e.Series != "" {
			series = e.Series
		}
		build, from = tb.Build, fmt.Sprintf("%s at %s + %s", e.Tree, e.Base, series)
		changed = "the recipe, fragments or compiler of %s/%s differ from what images.lock pins"
	}
	res, err := build()
	if err != nil {
		return nil, fmt.Errorf("building the %s kernel: %w", e.Name, err)
	}
	switch {
	case r.Lane.IsSanitized():
		// The lock pins the plain build: a sanitized one is never it.
	case pin.InputsSHA256 == "":
		r.Progress.Notef("note: images.lock does not pin %s/%s yet; built: inputs_sha256 %s, image_sha256 %s\n", e.Name, r.Arch.Name, res.Key, res.ImageSHA256)
	case res.Key != pin.InputsSHA256:
		r.Progress.Notef("note: "+changed+" (inputs %s, pinned %s)\n", e.Name, r.Arch.Name, res.Key, pin.InputsSHA256)
	case res.ImageSHA256 != pin.ImageSHA256:
		r.Progress.Notef("note: the %s kernel built from the pinned inputs has sha256 %s, images.lock pins %s (another toolchain, or for b4 a moved tag or thread?)\n", e.Name, res.ImageSHA256, pin.ImageSHA256)
	}
	return &Kernel{Path: res.Image, Source: fmt.Sprintf("IMAGE=%s (%s, inputs %s)", e.Name, from, res.Key[:16]) + laneWords(r.Lane.Words()),
		Origin: res.Origin, Sanitized: r.Lane.Words()}, nil
}

// buildTree builds (or finds in the cache) the kernel of a source tree.
func (r Request) buildTree() (*Kernel, error) {
	t := kbuild.LocalTree{Dir: r.Tree, Env: r.env()}
	res, state, err := t.Build()
	if err != nil {
		return nil, fmt.Errorf("building TREE=%s: %w", r.Tree, err)
	}
	how := "built"
	if res.Cached {
		how = "cached build"
	}
	return &Kernel{Path: res.Image, Source: fmt.Sprintf("TREE=%s (%s, inputs %s)", state, how, res.Key[:16]) + laneWords(r.Lane.Words()),
		Tree: &state, Cached: res.Cached, Origin: res.Origin, Sanitized: r.Lane.Words()}, nil
}

// bootable checks the kernel's arch before booting and, for an x86 bzImage,
// unpacks the ELF vmlinux that QEMU boots through PVH, cached by sum, the
// image's sha256, and in use until the process ends. pvh says the file
// returned boots through PVH.
func (r Request) bootable(kernel, sum string) (_ string, pvh bool, _ error) {
	info, err := kimage.Inspect(kernel)
	if errors.Is(err, kimage.ErrNotKernel) {
		return "", false, err // it names the file and what it is instead
	}
	if err != nil {
		return "", false, fmt.Errorf("inspecting the kernel: %w", err)
	}
	if info.Arch == "" {
		return "", false, fmt.Errorf("%s is a %s kernel (%s), not one for ARCH=%s", kernel, info.Detail, info.Format, r.Arch.Name)
	}
	if info.Arch != r.Arch.Name {
		return "", false, fmt.Errorf("%s is a kernel for %s (%s), but ARCH=%s", kernel, info.Arch, info.Format, r.Arch.Name)
	}
	if info.Format == kimage.ELF && r.Arch.ELFNeedsPVH {
		// QEMU boots an x86 ELF only through its PVH entry.
		if ok, err := kimage.HasPVH(kernel); err != nil || !ok {
			return "", false, fmt.Errorf("%s is an x86 vmlinux without the PVH entry note (CONFIG_PVH=y): give its bzImage (arch/x86/boot/bzImage) instead", kernel)
		}
		return kernel, true, nil
	}
	if info.Format != kimage.BzImage {
		return kernel, false, nil
	}
	vmlinux := cachelimit.Vmlinux.In(r.CacheDir, sum+".elf")
	// In use before it is looked at, so that no pruner takes it in
	// between; again once there, if someone (this unpacking) held its lock.
	cachelimit.Use(vmlinux)
	if err := r.unpack(kernel, vmlinux); err != nil {
		return "", false, fmt.Errorf("unpacking vmlinux: %w", err)
	}
	cachelimit.Use(vmlinux)
	if ok, err := kimage.HasPVH(vmlinux); err != nil || !ok {
		r.Progress.Notef("note: %s has no PVH entry; booting the bzImage (slower)\n", filepath.Base(kernel))
		return kernel, false, nil
	}
	return vmlinux, true, nil
}

// unpack writes the vmlinux of the bzImage kernel to vmlinux unless it is
// there: one process at a time, the others wait and find it.
func (r Request) unpack(kernel, vmlinux string) error {
	if _, err := os.Stat(vmlinux); err == nil {
		return nil
	}
	release, err := buildlock.Hold(vmlinux+".lock", "unpacking vmlinux from "+kernel, r.Progress.Always())
	if err != nil {
		return err
	}
	defer release()
	if _, err := os.Stat(vmlinux); err == nil {
		return nil
	}
	step := step(r.Progress, "unpacking vmlinux from %s for a PVH boot", filepath.Base(kernel))
	err = kimage.ExtractVmlinux(kernel, vmlinux)
	step(err)
	return err
}

// needed are the options a kernel must have built in to run the suite on
// a: an initramfs and its mounts, the Go runtime's system calls, tracefs,
// and the arch's serial console (and, on x86, ACPI to power off).
// kernel/config/ holds them as fragments to merge.
func needed(a arch.Arch) []string {
	return append([]string{"CONFIG_BLK_DEV_INITRD", "CONFIG_DEVTMPFS", "CONFIG_PROC_FS", "CONFIG_SYSFS", "CONFIG_TMPFS",
		"CONFIG_BINFMT_ELF", "CONFIG_TTY", "CONFIG_PRINTK", "CONFIG_FUTEX", "CONFIG_EPOLL", "CONFIG_FTRACE"}, a.ConsoleConfig...)
}

// checkConfig refuses a user's kernel that cannot run the suite, naming
// what it lacks, when it carries its config. Only the image's own config
// is held against it: a .config beside it may be another build's.
func (r Request) checkConfig(k *Kernel) error {
	cfg := k.Config
	if k.ConfigFrom != EmbeddedConfig {
		cfg = nil
	}
	if cfg == nil {
		also := ""
		if k.ConfigFrom != "" {
			also = "; " + k.ConfigFrom + ", which may be another build's, is read only for its debug options (the limits of a debug kernel, SANITIZE=1)"
		}
		r.Progress.Notef("note: %s carries no config (CONFIG_IKCONFIG): the options the suite needs are not checked before booting%s\n", r.Kernel, also)
		return nil
	}
	var missing []string
	for _, opt := range needed(r.Arch) {
		if cfg[opt] != "y" {
			missing = append(missing, opt)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("KERNEL=%s cannot run the suite: its config lacks %s built in (kernel/config/common.config and %s.config are fragments to merge)", r.Kernel, strings.Join(missing, ", "), r.Arch.Name)
	}
	if cfg["CONFIG_FTRACE_STACKMAP"] != "y" {
		r.Progress.Notef("note: %s has no CONFIG_FTRACE_STACKMAP: its stackmap specs will be UNSUPPORTED\n", r.Kernel)
	}
	return nil
}

// EmbeddedConfig is ConfigFrom for a kernel that carries its own.
const EmbeddedConfig = "its embedded config (CONFIG_IKCONFIG)"

// findConfig is the configuration of the kernel at path (booted as
// bootable) and where it was found: embedded in the image
// (CONFIG_IKCONFIG), else the config file beside it (as a build cached
// here keeps it), else the .config of the kernel build directory it was
// taken from (<dir>/vmlinux, <dir>/arch/<arch>/boot/<image>). None is
// nil, "". An embedded config that does not read is an error; a file that
// does not is passed over.
func findConfig(path, bootable string) (map[string]string, string, error) {
	info, err := kimage.Inspect(bootable)
	if err != nil {
		return nil, "", err
	}
	if cfg, err := kimage.Config(bootable, info.Format); cfg != nil || err != nil {
		return cfg, EmbeddedConfig, err
	}
	dir := filepath.Dir(path)
	candidates := []string{filepath.Join(dir, "config"), filepath.Join(dir, ".config")}
	if boot, archDir := filepath.Base(dir), filepath.Base(filepath.Dir(filepath.Dir(dir))); boot == "boot" && archDir == "arch" {
		candidates = append(candidates, filepath.Join(dir, "..", "..", "..", ".config"))
	}
	for _, c := range candidates {
		text, err := os.ReadFile(c)
		if err != nil {
			continue
		}
		if cfg := kimage.ParseConfig(text); len(cfg) > 0 {
			return cfg, filepath.Clean(c), nil
		}
	}
	return nil, "", nil
}

// CacheDir is where fetched and built kernels, tree builds and the guest's
// tools are kept between runs: SMCT_CACHE, else the user's cache.
func CacheDir() string {
	if d := os.Getenv("SMCT_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "stackmap-conformance")
	}
	return filepath.Join(os.TempDir(), "stackmap-conformance")
}
