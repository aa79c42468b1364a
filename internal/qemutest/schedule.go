// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/ftrace-stackmap/conformance/internal/contract"
)

// bootAll makes the plans' boots, as many at a time as there are lanes,
// starting them in contract.StartOrder (the default boot first, then the
// long ones), and keeps what they say in plan order, so the reports do
// not depend on which boot ended first. A boot whose guest only waits
// for kmemleak gives its lane to the next boot (leaveLane). While the
// run's route is open, its first boot is made alone: it decides how the
// others boot (route.go).
func (r *run) bootAll(ctx context.Context, plans []contract.BootPlan) error {
	lanes := r.o.lanes(len(plans))
	r.res.Lanes = lanes
	outs := make([]*made, len(plans))
	order := contract.StartOrder(plans)
	first := 0
	for ; first < len(order) && r.route.open && ctx.Err() == nil; first++ {
		outs[order[first]] = r.makeBoot(ctx, plans[order[first]], false)
	}
	alive := r.o.alive(lanes)
	inLanes(ctx, len(order)-first, lanes, alive, func(i int, leave func()) {
		p := order[first+i]
		outs[p] = r.makeBoot(withLeave(ctx, leave), plans[p], alive > 1)
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

// inLanes calls do for 0 to n-1, starting them in that order, each in a
// lane: at most lanes calls at work at a time, and at most alive calls
// at all. A call gives its lane up when it returns, or before, when it
// calls leave (a boot whose guest is idle now, waiting out kmemleak's
// minimum age): the next starts beside it. Once ctx is cancelled, no
// more start; inLanes returns when all started have returned.
func inLanes(ctx context.Context, n, lanes, alive int, do func(i int, leave func())) {
	working := make(chan struct{}, lanes)
	living := make(chan struct{}, max(lanes, alive))
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := range n {
		for _, sem := range []chan struct{}{living, working} {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			// A slot may have been taken as ctx ended: the started calls
			// never wait on one, so it need not be given back.
			return
		}
		leave := sync.OnceFunc(func() { <-working })
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-living }()
			defer leave()
			do(i, leave)
		}()
	}
}

// leaveKey holds, in a boot's context, the function that gives its lane
// to the next boot.
type leaveKey struct{}

func withLeave(ctx context.Context, leave func()) context.Context {
	return context.WithValue(ctx, leaveKey{}, leave)
}

// leaveLane is the function a boot made in a lane calls when its guest
// is only waiting (guest.TailMarker), or nil outside a lane.
func leaveLane(ctx context.Context) func() {
	leave, _ := ctx.Value(leaveKey{}).(func())
	return leave
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

// alive is how many guests may be up at once with lanes of them at
// work: twice the lanes, for the guests waiting out kmemleak beside
// them, as far as the free memory holds; one when the console is echoed.
func (o Options) alive(lanes int) int {
	if o.Echo != nil {
		return 1
	}
	return max(lanes, min(2*lanes, memoryLanes(o.Mem)))
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
