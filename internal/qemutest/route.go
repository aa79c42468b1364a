// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/buildlock"
	"github.com/ftrace-stackmap/conformance/internal/cachelimit"
	"github.com/ftrace-stackmap/conformance/internal/kernels"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// An x86 kernel given as a bzImage boots as the ELF vmlinux unpacked from
// it, through QEMU's PVH entry: half the boot time under emulation. Some
// kernels die on that route before their first console line (one built
// with the kernel's debug.config: QEMU exits right after the firmware),
// and boot from their bzImage. A run decides its route once, by its first
// boot, made alone before the others: when that boot's kernel died before
// printing anything through PVH, the same boot is made again from the
// bzImage, and the rest of the run boots it. The answer depends only on
// the kernel and QEMU, so it is kept, by the Runner for the runs it makes
// after and on disk, <cache>/boot-route/<key>.json, keyed by them.

// routeInputs are what decides whether PVH boots a kernel, in words a
// reader of the file can check.
type routeInputs struct {
	BzImageSHA256 string `json:"bzimage_sha256"`
	QEMU          string `json:"qemu"` // qemu-system-* --version
}

// key names the file of the answer for these inputs.
func (in routeInputs) key() string {
	sum := sha256.Sum256([]byte(in.BzImageSHA256 + "\n" + in.QEMU))
	return hex.EncodeToString(sum[:16])
}

// routeAnswer is what a kernel's first boot through PVH showed, as kept on
// disk.
type routeAnswer struct {
	PVHBoots bool   `json:"pvh_boots"`
	How      string `json:"how,omitempty"` // how the PVH boot ended, when it died
	// Accel is the accelerator of that boot, for the reader: the key
	// leaves it out, since the kernel, not the accelerator, dies there.
	Accel  string      `json:"accel"`
	Booted time.Time   `json:"booted"`
	Inputs routeInputs `json:"inputs"`
}

// when is the boot's time as the machine line gives it.
func (a *routeAnswer) when() string { return a.Booted.Local().Format("2006-01-02 15:04") }

// route is how a run boots its kernel, when it has two ways: x86's
// vmlinux through PVH, or the bzImage it was unpacked from.
type route struct {
	vmlinux, bzImage string // "" when the kernel has one way to boot
	// elfOnly says the user gave an x86 ELF vmlinux (KERNEL=): PVH is its
	// only route, and a kernel that dies there is told of its bzImage.
	elfOnly bool
	// open says the run's first boot made here is to decide the route;
	// onBzImage that the run boots the bzImage.
	open, onBzImage bool
	why             string // the route and why, for the machine line
	in              routeInputs
	path            string // where the answer is kept; "" when it is not
	remember        func(*routeAnswer)
}

// pvhRoute is the machine line's words for booting through PVH.
const pvhRoute = "vmlinux unpacked from the bzImage, booted through PVH"

// bzImageRoute is the machine line's words for booting the bzImage.
const bzImageRoute = "booting the bzImage: the PVH route of vmlinux died before its first console line"

// chooseRoute sets the run's route for kernel k: none to choose unless k
// is an x86 bzImage unpacked for PVH; then the answer remembered by this
// process, else by the cache, else the run's first boot decides (open).
// It must come before the KVM probe, which boots the run's kernel.
func (r *run) chooseRoute(rn *Runner, k *kernels.Kernel) {
	if !k.PVH || k.Bootable == k.Path {
		r.route = route{elfOnly: k.PVH && r.o.Kernel != ""}
		return
	}
	rt := route{vmlinux: k.Bootable, bzImage: k.Path, in: routeInputs{BzImageSHA256: k.SHA256, QEMU: r.m.Version()}}
	if r.o.CacheDir != "" && rt.in.QEMU != "unknown" {
		rt.path = cachelimit.BootRoute.In(r.o.CacheDir, rt.in.key()+".json")
	}
	memKey := r.m.Binary + " " + rt.in.key()
	rt.remember = func(a *routeAnswer) {
		rn.routeMu.Lock()
		defer rn.routeMu.Unlock()
		if rn.routes == nil {
			rn.routes = map[string]*routeAnswer{}
		}
		rn.routes[memKey] = a
	}
	rn.routeMu.Lock()
	a := rn.routes[memKey]
	rn.routeMu.Unlock()
	if a == nil {
		if a = readRouteAnswer(rt.path, rt.in); a != nil {
			r.o.Progress.Step("recalling the boot route of %s (%s)", a.when(), r.m.Arch.Name)(nil)
			cachelimit.Touch(rt.path) // used: pruning keeps the most recently used
			rt.remember(a)
		}
	}
	r.route = rt
	r.setRoute(a)
}

// setRoute boots the route answer a gives, or decides by the first boot
// when there is none.
func (r *run) setRoute(a *routeAnswer) {
	rt := &r.route
	rt.open, rt.onBzImage, rt.why, r.kernel = a == nil, false, pvhRoute, rt.vmlinux
	switch {
	case a == nil:
	case a.PVHBoots:
		rt.why += " (remembered from a boot of " + a.when() + ")"
	default:
		rt.onBzImage, r.kernel = true, rt.bzImage
		rt.why = bzImageRoute + " (remembered from a boot of " + a.when() + ")"
		kept := ""
		if rt.path != "" {
			kept = "; remove " + rt.path + " to try PVH again"
		}
		r.o.Progress.Notef("note: %s (%s, remembered from a boot of %s%s)\n", bzImageRoute, a.How, a.when(), kept)
	}
}

// routeDied says whether a boot through PVH ended before its kernel's
// first console line, on the kernel's account: QEMU exited as a kernel
// that resets does (status 0), or the console stayed silent, with nothing
// past the firmware. QEMU's own errors, a panic or a stopped run are not.
func routeDied(ctx context.Context, res *qemu.Result, err error, console []byte, binary string) bool {
	return err == nil && ctx.Err() == nil && res != nil && !res.Reached && res.Panic == "" &&
		res.GaveUp(binary) == "" && qemu.KernelSilent(console)
}

// runBoot makes boot b of the named plan (its kernel the run's) and adds
// its console to the run's; err is QEMU's, werr that of a file of the
// boot's. While the route is open, this boot decides it, alone: when the
// kernel died through PVH before its first console line, its console and
// command are kept beside the boot's as console-pvh.log and
// qemu-command-pvh.txt, and the boot is made again from the bzImage, which
// the run then boots. That the bzImage got further is kept as the answer;
// a bzImage that dies as silently tells nothing of the route and is not
// kept, and its death is the boot's, reported on the bzImage route.
func (r *run) runBoot(ctx context.Context, b qemu.Boot, name string, rep *progress.Reporter) (res *qemu.Result, console []byte, err, werr error) {
	if b.Reports != nil && !r.o.Keep {
		defer os.Remove(b.Reports.File) // read into res.Reports; its frames are kept as files
	}
	trial := r.route.open
	r.route.open = false // one boot decides, whatever becomes of it
	res, console, err = attempt(ctx, b, name, rep)
	if !trial || !routeDied(ctx, res, err, console, r.m.Binary) {
		if trial && err == nil && ctx.Err() == nil && !qemu.KernelSilent(console) {
			r.route.why += " (the first boot's kernel printed through PVH)"
			r.keepRoute(&routeAnswer{PVHBoots: true})
			r.describeMachine()
		}
		return res, console, err, r.console.Add(name, b.CommandLine(), console)
	}
	how := deathOf(res)
	dir := filepath.Dir(b.ConsoleLog)
	werr = errors.Join(r.console.Add(name+" through PVH, which died before the kernel's first console line", b.CommandLine(), console),
		os.Rename(b.ConsoleLog, filepath.Join(dir, "console-pvh.log")),
		os.WriteFile(filepath.Join(dir, "qemu-command-pvh.txt"), []byte(results.ShellCommand(res.Command)+"\n"), 0o644))
	r.o.Progress.Notef("note: boot %s: the PVH route of vmlinux died before its first console line (%s): booting the bzImage instead\n", name, how)
	r.route.onBzImage, r.kernel = true, r.route.bzImage
	r.route.why = bzImageRoute + " (" + how + ")"
	b.Kernel = r.kernel
	res, console, err = attempt(ctx, b, name+" from the bzImage", rep)
	werr = errors.Join(werr, r.console.Add(name, b.CommandLine(), console))
	switch {
	case err != nil || ctx.Err() != nil:
		r.route.why += " (nothing remembered: the bzImage's boot failed)"
	case qemu.KernelSilent(console):
		r.route.why += ", and the bzImage printed nothing either (nothing remembered)"
	default:
		r.keepRoute(&routeAnswer{How: how})
	}
	r.describeMachine()
	return res, console, err, werr
}

// attempt makes one boot, its step shown on rep, and returns what its
// console showed.
func attempt(ctx context.Context, b qemu.Boot, name string, rep *progress.Reporter) (*qemu.Result, []byte, error) {
	var console bytes.Buffer
	b.Echo = tee(&console, b.Echo)
	step := rep.Step("boot %s: %s", name, b.CommandLine())
	res, err := qemu.Run(ctx, b)
	step(err)
	return res, console.Bytes(), err
}

// keepRoute keeps the run's answer for the runs after: in this process,
// and on disk unless it cannot be (a note, not an error of the run).
func (r *run) keepRoute(a *routeAnswer) {
	a.Accel, a.Booted, a.Inputs = r.m.Accel.Name, time.Now(), r.route.in
	r.route.remember(a)
	if r.route.path == "" {
		return
	}
	if err := writeRouteAnswer(r.route.path, a, r.o.Progress); err != nil {
		r.o.Progress.Notef("note: the boot route's answer was not kept: %v\n", err)
		return
	}
	cachelimit.Touch(r.route.path) // the area grew: this command's end prunes it
}

// readRouteAnswer is the answer kept in path for in, or nil: a file that
// is missing, unreadable, not parsed or for other inputs means the run's
// first boot decides again.
func readRouteAnswer(path string, in routeInputs) *routeAnswer {
	return readKept(path, func(a *routeAnswer) bool {
		return a.Inputs == in && !a.Booted.IsZero() && (a.PVHBoots || a.How != "")
	})
}

// writeRouteAnswer keeps a in path whole or not at all, under the entry's
// lock, so that no pruner removes it while it is written.
func writeRouteAnswer(path string, a *routeAnswer, rep *progress.Reporter) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	release, err := buildlock.Hold(path+".lock", "keeping the boot route of a kernel", rep.Always())
	if err != nil {
		return err
	}
	defer release()
	return writeKept(path, a)
}

// routeDeath adds to how a boot died what its route says of it: the
// bzImage route it was made on, or, for an ELF vmlinux the user gave that
// printed nothing, that PVH is its only route and its bzImage has another.
func (r *run) routeDeath(how string, console []byte) string {
	switch {
	case r.route.onBzImage:
		return how + " (booted from the bzImage: the PVH route of vmlinux died before its first console line)"
	case r.route.elfOnly && qemu.KernelSilent(console):
		return how + fmt.Sprintf(", before the kernel's first console line; %s is an ELF vmlinux, which boots only through PVH, "+
			"where some kernels die (a debug.config build): give its bzImage (KERNEL=<build>/arch/x86/boot/bzImage), "+
			"which boots from the bzImage when PVH dies", filepath.Base(r.o.Kernel))
	}
	return how
}
