// SPDX-License-Identifier: GPL-2.0-only

package bench

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"
)

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
