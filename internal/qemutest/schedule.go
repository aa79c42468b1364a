// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/ftrace-stackmap/conformance/internal/contract"
)

// bootAll makes the plans' boots, as many at a time as there are lanes,
// starting them in contract.StartOrder (the default boot first, then the
// long ones), and keeps what they say in plan order, so the reports do
// not depend on which boot ended first. While the run's route is open,
// its first boot is made alone: it decides how the others boot
// (route.go).
func (r *run) bootAll(ctx context.Context, plans []contract.BootPlan) error {
	lanes := r.o.lanes(len(plans))
	r.res.Lanes = lanes
	outs := make([]*made, len(plans))
	order := contract.StartOrder(plans)
	first := 0
	for ; first < len(order) && r.route.open && ctx.Err() == nil; first++ {
		outs[order[first]] = r.makeBoot(ctx, plans[order[first]], false)
	}
	inLanes(ctx, len(order)-first, lanes, func(i int) {
		p := order[first+i]
		outs[p] = r.makeBoot(ctx, plans[p], lanes > 1)
	})
	if ctx.Err() != nil {
		return failed("booting", ctx.Err())
	}
	for _, m := range outs {
		if err := r.keep(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// inLanes calls do for 0 to n-1, at most lanes calls at a time, starting
// them in that order, and returns when all have returned. Once ctx is
// cancelled, no more start.
func inLanes(ctx context.Context, n, lanes int, do func(i int)) {
	var g errgroup.Group
	g.SetLimit(lanes)
	for i := range n {
		g.Go(func() error {
			if ctx.Err() == nil {
				do(i)
			}
			return nil
		})
	}
	g.Wait()
}

// lanes is how many boots run at once: LANES=, else one per CPU, as many
// as the free memory holds, one when the console is echoed (boots would
// interleave on it).
func (o Options) lanes(plans int) int {
	n := o.Lanes
	if n <= 0 {
		n = min(runtime.NumCPU(), memoryLanes(o.Mem))
	}
	if o.Echo != nil {
		n = 1
	}
	return max(1, min(n, plans))
}

// minGuestMB is the least memory a guest runs the suite in: the kernel,
// the initramfs (about 15 MB) unpacked beside its cpio, the suite and the
// ring buffers of its specs.
const minGuestMB = 256

// CheckMem refuses a -mem (MEM=) QEMU could not boot the suite in.
func CheckMem(v string) error {
	n, err := MemMB(v)
	switch {
	case err != nil:
		return fmt.Errorf("-mem %s: %v", v, err)
	case v != "" && n < minGuestMB:
		return fmt.Errorf("-mem %s: the guest needs at least %d MB (the kernel, the initramfs unpacked beside its cpio, the suite and its ring buffers)", v, minGuestMB)
	}
	return nil
}

// MemMB is a -mem value (QEMU's -m) in megabytes: a number, with M or G
// after it as QEMU takes them; 0 for "" (the machine's default).
func MemMB(mem string) (int, error) {
	if mem == "" {
		return 0, nil
	}
	num := strings.TrimRight(mem, "MmGg")
	unit := strings.ToUpper(mem[len(num):])
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 || (unit != "" && unit != "M" && unit != "G") {
		return 0, fmt.Errorf("want megabytes, such as 512 or 1G")
	}
	if unit == "G" {
		n *= 1024
	}
	return n, nil
}

// memoryLanes is how many guests of mem (QEMU's -m, megabytes, 512 when
// empty) and QEMU's own overhead fit in the memory available now.
func memoryLanes(mem string) int {
	guest := 512
	if v, err := MemMB(mem); err == nil && v > 0 {
		guest = v
	}
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 1
	}
	for _, l := range strings.Split(string(data), "\n") {
		var kb int
		if _, err := fmt.Sscanf(l, "MemAvailable: %d kB", &kb); err == nil {
			return max(1, kb/1024/(guest+256))
		}
	}
	return 1
}
