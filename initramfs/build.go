// SPDX-License-Identifier: GPL-2.0-only

// Package initramfs builds the guest's initramfs: the init (./initramfs/init)
// and the compiled suite (./suites), cross-compiled with the Go toolchain,
// and the workload (Workload), written with u-root's cpio package. A run
// appends a small second archive holding its guest.RunConfig; the kernel
// unpacks concatenated archives in order.
package initramfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/u-root/u-root/pkg/cpio"
	"golang.org/x/sync/errgroup"

	"github.com/ftrace-stackmap/conformance/initramfs/guest"
	"github.com/ftrace-stackmap/conformance/internal/apt"
	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/atomicfile"
	"github.com/ftrace-stackmap/conformance/internal/buildlock"
)

// Builder makes initramfs images for one arch.
type Builder struct {
	ModuleDir string // the project's root, where go.mod is
	OutDir    string // build/<arch>
	Arch      arch.Arch
	// Env is added to the go tool's environment (a bench's empty GOCACHE).
	Env []string
	// Progress hears of packages installed on the way; stderr when nil.
	Progress io.Writer
}

// Specs is where Build leaves the suite's specs, Ginkgo's JSON report of a
// dry run: a run plans its boots from it without booting.
func (b Builder) Specs() string { return filepath.Join(b.OutDir, "specs.json") }

// Build compiles the guest programs, lists their specs (Specs) and writes
// OutDir/initramfs.cpio, rewriting it only when a program changed. It
// returns the archive's path.
func (b Builder) Build(ctx context.Context) (string, error) {
	a := b.Arch
	goarch := a.GOARCH
	// One builder at a time in OutDir, which runs side by side share.
	release, err := buildlock.Hold(b.OutDir+".lock", "building the "+a.Name+" initramfs", os.Stderr)
	if err != nil {
		return "", err
	}
	defer release()
	if err := os.MkdirAll(b.OutDir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(b.OutDir, "initramfs.cpio")
	// Asking the go tool whether anything is stale costs about half a
	// second; a walk over the sources' sizes and times costs milliseconds.
	sources, err := sourceFingerprint(b.ModuleDir)
	if err != nil {
		return "", err
	}
	if old, err := os.ReadFile(out + ".sources"); err == nil && string(old) == sources {
		_, errArchive := os.Stat(out)
		_, errSpecs := os.Stat(b.Specs())
		if errArchive == nil && errSpecs == nil {
			return out, nil
		}
	}
	initBin := filepath.Join(b.OutDir, "init")
	suiteBin := filepath.Join(b.OutDir, "suites.test")
	workloadBin := filepath.Join(b.OutDir, "workload")
	var g errgroup.Group
	g.Go(func() error {
		data, err := Workload(a)
		if err != nil {
			return err
		}
		return os.WriteFile(workloadBin, data, 0o755)
	})
	// The suite first, then the init: the init's packages are a few of
	// the suite's, and two go commands side by side would compile them
	// twice (a cold build 55 s against 44 s one after the other).
	g.Go(func() error {
		if err := b.goTool(ctx, goarch, "test", "-c", "-o", suiteBin, "./suites"); err != nil {
			return err
		}
		return b.goTool(ctx, goarch, "build", "-o", initBin, "./initramfs/init")
	})
	// A first build installs the emulator that lists the specs while Go
	// compiles: apt waits on the network, not on the CPUs.
	g.Go(b.installEmulator)
	if err := g.Wait(); err != nil {
		return "", err
	}
	if err := b.listSpecs(ctx, suiteBin); err != nil {
		return "", err
	}
	key, err := hashFiles(initBin, suiteBin, workloadBin)
	if err != nil {
		return "", err
	}
	if old, err := os.ReadFile(out + ".key"); err == nil && string(old) == key {
		if _, err := os.Stat(out); err == nil {
			return out, os.WriteFile(out+".sources", []byte(sources), 0o644)
		}
	}
	records := append(consoleRecords(),
		cpio.Directory("etc", 0o755),
		cpio.Directory("etc/smct", 0o755),
		cpio.Directory("proc", 0o555),
		cpio.Directory("sys", 0o555),
		cpio.Directory("tmp", 0o1777),
	)
	for _, f := range []struct{ src, dst string }{{initBin, guest.InitPath}, {suiteBin, guest.SuitePath}, {workloadBin, guest.WorkloadPath}} {
		data, err := os.ReadFile(f.src)
		if err != nil {
			return "", err
		}
		records = append(records, cpio.StaticFile(strings.TrimPrefix(f.dst, "/"), string(data), 0o755))
	}
	if err := writeArchive(out, records); err != nil {
		return "", err
	}
	if err := os.WriteFile(out+".key", []byte(key), 0o644); err != nil {
		return "", err
	}
	return out, os.WriteFile(out+".sources", []byte(sources), 0o644)
}

// consoleRecords start every archive: the kernel opens /dev/console for
// init before anything has mounted devtmpfs.
func consoleRecords() []cpio.Record {
	return []cpio.Record{cpio.Directory("dev", 0o755), cpio.CharDev("dev/console", 0o600, 5, 1)}
}

// Floor writes OutDir/floor.cpio, an initramfs whose init only powers off
// (./initramfs/poweroff): the bare boot make bench measures a run against.
func (b Builder) Floor(ctx context.Context) (string, error) {
	a := b.Arch
	if err := os.MkdirAll(b.OutDir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(b.OutDir, "poweroff")
	if err := b.goTool(ctx, a.GOARCH, "build", "-o", bin, "./initramfs/poweroff"); err != nil {
		return "", err
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	out := filepath.Join(b.OutDir, "floor.cpio")
	return out, writeArchive(out, append(consoleRecords(), cpio.StaticFile(strings.TrimPrefix(guest.InitPath, "/"), string(data), 0o755)))
}

// sourceFingerprint sums the name, size and modification time of every Go
// source and module file of the project, and the Go version building it.
func sourceFingerprint(moduleDir string) (string, error) {
	h := sha256.New()
	fmt.Fprintln(h, runtime.Version(), os.Getenv("GOFLAGS"))
	err := filepath.WalkDir(moduleDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "build", "results", "bin", "kernel":
				return filepath.SkipDir
			}
			return nil
		}
		if name := d.Name(); strings.HasSuffix(name, ".go") || name == "go.mod" || name == "go.sum" {
			info, err := d.Info()
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s %d %d\n", path, info.Size(), info.ModTime().UnixNano())
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

// emulator is what runs the guest's suite on this host: nothing when the
// arches agree, else QEMU's user-mode emulator.
func (b Builder) emulator() string {
	if b.Arch.GOARCH == runtime.GOARCH && runtime.GOOS == "linux" {
		return ""
	}
	return b.Arch.QEMUUser
}

// installEmulator installs the emulator when the host needs one and has
// none.
func (b Builder) installEmulator() error {
	if b.emulator() == "" {
		return nil
	}
	progress := b.Progress
	if progress == nil {
		progress = os.Stderr
	}
	if err := apt.Ensure(progress, apt.Need{Program: b.emulator(), Package: arch.QEMUUserPkg}); err != nil {
		return fmt.Errorf("listing the specs of the %s suite on this host: %w", b.Arch.Name, err)
	}
	return nil
}

// listSpecs writes Specs() from a dry run of the guest's suite, through
// the emulator when the host needs one. A build of the suite for the host
// would cost a cold first run as much again as the guest's.
func (b Builder) listSpecs(ctx context.Context, suiteBin string) error {
	argv := []string{suiteBin}
	if e := b.emulator(); e != "" {
		argv = []string{e, suiteBin}
	}
	return atomicfile.Produce(b.Specs(), 0o644, func(tmp string) error {
		cmd := exec.CommandContext(ctx, argv[0], append(argv[1:], "-ginkgo.dry-run", "-ginkgo.json-report="+tmp, "-ginkgo.no-color")...)
		// The suite reads SMCT_* variables as its own workload's settings: the
		// user's environment must not turn the listing into a workload run.
		cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "SMCT_") })
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("listing the specs (%s -ginkgo.dry-run): %v\n%s", strings.Join(argv, " "), err, out.String())
		}
		// tmp was made empty: a report not written must not become the listing.
		if fi, err := os.Stat(tmp); err != nil || fi.Size() == 0 {
			return fmt.Errorf("listing the specs (%s -ginkgo.dry-run): no report written\n%s", strings.Join(argv, " "), out.String())
		}
		return nil
	})
}

func (b Builder) goTool(ctx context.Context, goarch string, args ...string) error {
	args = append(args[:1], append([]string{"-trimpath", "-ldflags=-s -w"}, args[1:]...)...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = b.ModuleDir
	cmd.Env = append(append(os.Environ(), b.Env...), "GOOS=linux", "GOARCH="+goarch, "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s for %s: %v\n%s", strings.Join(args, " "), goarch, err, stderr.String())
	}
	return nil
}

// WithRunConfig writes out = base followed by an archive holding cfg and
// any extra files.
func WithRunConfig(base, out string, cfg guest.RunConfig, extra ...cpio.Record) error {
	rec, err := runConfigRecord(cfg)
	if err != nil {
		return err
	}
	src, err := os.Open(base)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(out)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	w := cpio.Newc.Writer(dst)
	records := append([]cpio.Record{rec}, extra...)
	cpio.MakeAllReproducible(records)
	if err := cpio.WriteRecordsAndDirs(w, records); err != nil {
		dst.Close()
		return err
	}
	if err := cpio.WriteTrailer(w); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// Single writes base with cfg to w as one archive: a runner that unpacks
// only the first archive of an initramfs (LAVA, to add its overlay) keeps
// the run configuration too.
func Single(base string, w io.Writer, cfg guest.RunConfig) error {
	rec, err := runConfigRecord(cfg)
	if err != nil {
		return err
	}
	src, err := os.Open(base)
	if err != nil {
		return err
	}
	defer src.Close()
	rr, err := cpio.Newc.NewFileReader(src)
	if err != nil {
		return err
	}
	cw := cpio.Newc.Writer(w)
	if err := cpio.Concat(cw, cpio.EOFReader{RecordReader: rr}, nil); err != nil {
		return fmt.Errorf("initramfs: reading %s: %w", base, err)
	}
	if err := cw.WriteRecord(cpio.MakeReproducible(rec)); err != nil {
		return err
	}
	return cpio.WriteTrailer(cw)
}

// runConfigRecord is the run configuration as the file the init reads.
func runConfigRecord(cfg guest.RunConfig) (cpio.Record, error) {
	js, err := json.Marshal(cfg)
	if err != nil {
		return cpio.Record{}, err
	}
	return cpio.StaticFile(strings.TrimPrefix(guest.RunConfigPath, "/"), string(js), 0o644), nil
}

func writeArchive(path string, records []cpio.Record) error {
	err := atomicfile.Produce(path, 0o644, func(tmp string) error {
		f, err := os.Create(tmp)
		if err != nil {
			return err
		}
		w := cpio.Newc.Writer(f)
		cpio.MakeAllReproducible(records)
		if err := cpio.WriteRecordsAndDirs(w, records); err == nil {
			err = cpio.WriteTrailer(w)
		}
		return errors.Join(err, f.Close())
	})
	if err != nil {
		return fmt.Errorf("initramfs: write %s: %w", path, err)
	}
	return nil
}

func hashFiles(paths ...string) (string, error) {
	h := sha256.New()
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
