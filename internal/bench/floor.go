package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/arch"

	"github.com/u-root/u-root/pkg/cpio"

	"github.com/ftrace-stackmap/conformance/initramfs"
)

// floorInitrd builds an initramfs whose init only powers off (./initramfs/poweroff)
// into dir and returns its path.
func floorInitrd(ctx context.Context, moduleDir, archName, dir string) (string, error) {
	a, err := arch.Lookup(archName)
	if err != nil {
		return "", err
	}
	goarch := a.GOARCH
	bin := filepath.Join(dir, "poweroff-"+archName)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./initramfs/poweroff")
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+goarch, "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the floor's init: %v\n%s", err, out)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	// The same first records as the suite's initramfs: the kernel opens
	// /dev/console for init.
	records := []cpio.Record{
		cpio.Directory("dev", 0o755),
		cpio.CharDev("dev/console", 0o600, 5, 1),
		cpio.StaticFile(strings.TrimPrefix(initramfs.InitPath, "/"), string(data), 0o755),
	}
	out := filepath.Join(dir, "floor-"+archName+".cpio")
	f, err := os.Create(out)
	if err != nil {
		return "", err
	}
	w := cpio.Newc.Writer(f)
	cpio.MakeAllReproducible(records)
	if err = cpio.WriteRecordsAndDirs(w, records); err == nil {
		err = cpio.WriteTrailer(w)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return out, err
}

// floorBoot runs a suite boot's exact QEMU command with the floor's initrd
// instead of the suite's, and returns how long QEMU took to exit.
func floorBoot(ctx context.Context, command []string, initrd string, timeout time.Duration) (time.Duration, error) {
	args := slices.Clone(command[1:])
	i := slices.Index(args, "-initrd")
	if i < 0 || i+1 >= len(args) {
		return 0, fmt.Errorf("no -initrd in %q", command)
	}
	args[i+1] = initrd
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, command[0], args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	switch {
	case ctx.Err() != nil:
		return 0, fmt.Errorf("floor boot did not power off within %s:\n%s", timeout, tail(out.String()))
	case err != nil:
		return 0, fmt.Errorf("floor boot: %v:\n%s", err, tail(out.String()))
	case strings.Contains(out.String(), "Kernel panic"):
		// panic=-1 and -no-reboot end QEMU cleanly even then.
		return 0, fmt.Errorf("floor boot panicked:\n%s", tail(out.String()))
	}
	return d, nil
}

func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-10):], "\n")
}
