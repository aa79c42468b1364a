// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ftrace-stackmap/conformance/internal/buildlock"
	"github.com/ftrace-stackmap/conformance/internal/cachelimit"
	"github.com/ftrace-stackmap/conformance/internal/kernels/images"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// The KVM probe boots the kernel under test under KVM for up to
// qemu.KVMProbeTime. Its answer depends only on the kernel, QEMU and the
// host, so it is kept on disk, <cache>/kvm-probe/<key>.json, keyed by
// them, and each host probes a kernel once rather than in every process.

// kvmInputs are what decides whether KVM runs a kernel here, in words a
// reader of the file can check.
type kvmInputs struct {
	KernelSHA256 string `json:"kernel_sha256"`
	QEMU         string `json:"qemu"`        // qemu-system-* --version
	HostKernel   string `json:"host_kernel"` // uname -r
	CPU          string `json:"cpu"`         // /proc/cpuinfo's model
	DevKVM       string `json:"dev_kvm"`     // its device number and inode: a new one after a reboot
	Probe        int    `json:"probe"`       // kvmProbeVersion: answers of an older probe are not read
}

// kvmProbeVersion is the probe's rules: 2 since a kernel silent until QEMU
// exits decides nothing (version 1 took it for KVM that works).
const kvmProbeVersion = 2

// key names the file of the answer for these inputs.
func (in kvmInputs) key() string {
	sum := sha256.Sum256([]byte(strings.Join([]string{in.KernelSHA256, in.QEMU, in.HostKernel, in.CPU, in.DevKVM, strconv.Itoa(in.Probe)}, "\n")))
	return hex.EncodeToString(sum[:16])
}

// kvmAnswer is what probing KVM with a kernel found, as kept on disk.
type kvmAnswer struct {
	Usable bool      `json:"usable"`
	Reason string    `json:"reason,omitempty"` // why not
	Probed time.Time `json:"probed"`
	Took   string    `json:"took"` // how long the probe ran
	Inputs kvmInputs `json:"inputs"`

	path       string // its file, "" when it is not kept
	remembered bool   // from an earlier probe, not this run's
}

// err is the answer as ChooseAccel takes it.
func (a *kvmAnswer) err() error {
	if a.Usable {
		return nil
	}
	return errors.New(a.Reason)
}

// when is the probe's time as the machine line gives it.
func (a *kvmAnswer) when() string { return a.Probed.Local().Format("2006-01-02 15:04") }

// kvmAnswer says whether KVM runs the run's kernel here: remembered by
// this process, else by the cache, else probed (and then kept). A
// remembered "no" does not hold when KVM is insisted on (ACCEL=kvm): the
// user is told of a fresh probe's reason. An error opening /dev/kvm is
// returned as the answer's, nothing remembered.
func (r *run) kvmAnswer(rn *Runner) *kvmAnswer {
	o, m := r.o, r.m
	host := rn.kvmHost
	if host == nil {
		host = hostKVM
	}
	in, err := host()
	if err != nil {
		return &kvmAnswer{Reason: err.Error()}
	}
	memKey := m.Binary + " " + r.kernel
	rn.kvmMu.Lock()
	a := rn.kvm[memKey]
	rn.kvmMu.Unlock()
	if a != nil && (a.Usable || o.Accel != "kvm") {
		return a
	}
	if in.KernelSHA256 = r.res.KernelSHA; in.KernelSHA256 == "" {
		in.KernelSHA256, _ = images.FileSHA256(r.kernel)
	}
	in.QEMU, in.Probe = m.Version(), kvmProbeVersion
	path := ""
	if o.CacheDir != "" && in.KernelSHA256 != "" && in.QEMU != "unknown" {
		path = cachelimit.KVMProbe.In(o.CacheDir, in.key()+".json")
	}
	recall := func() *kvmAnswer {
		a := readKVMAnswer(path, in)
		if a == nil || !a.Usable && o.Accel == "kvm" {
			return nil
		}
		o.Progress.Step("recalling the KVM probe of %s (%s)", a.when(), m.Arch.Name)(nil)
		cachelimit.Touch(path) // used: pruning keeps the most recently used
		rn.remember(memKey, a)
		return a
	}
	if a := recall(); a != nil {
		return a
	}
	if path != "" {
		// Processes side by side probe one at a time; the others then
		// recall its answer. Where the lock cannot be made (a cache that
		// cannot be written) each probes.
		if release, err := buildlock.Hold(path+".lock", "probing KVM with the kernel ("+m.Arch.Name+")", o.Progress.Always()); err == nil {
			defer release()
			if a := recall(); a != nil {
				return a
			}
		}
	}
	probe := rn.probeKVM
	if probe == nil {
		probe = qemu.KVMWorks
	}
	end := o.Progress.Step("probing KVM with the kernel (%s)", m.Arch.Name)
	start := time.Now()
	err = probe(m, r.kernel)
	if alt := r.route.bzImage; errors.Is(err, qemu.ErrKernelSilent) && alt != "" && alt != r.kernel {
		// Its vmlinux died through PVH: the bzImage, which the run then
		// boots, answers for KVM.
		err = probe(m, alt)
	}
	end(nil) // not a step that fails the run: without KVM the guest is emulated
	a = &kvmAnswer{Usable: err == nil, Probed: start, Took: time.Since(start).Round(time.Millisecond).String(), Inputs: in}
	if err != nil {
		a.Reason = err.Error()
	}
	if errors.Is(err, qemu.ErrUndecided) {
		a.Reason += " (not remembered)"
		return a // probed again next time
	}
	if path != "" {
		if werr := writeKVMAnswer(path, a); werr != nil {
			o.Progress.Notef("note: the KVM probe's answer was not kept: %v\n", werr)
		} else {
			a.path = path
			cachelimit.Touch(path) // the area grew: this command's end prunes it
		}
	}
	// Later runs of this process remember it.
	b := *a
	b.remembered = true
	rn.remember(memKey, &b)
	return a
}

// remember keeps a for the runs this Runner makes after.
func (rn *Runner) remember(memKey string, a *kvmAnswer) {
	rn.kvmMu.Lock()
	defer rn.kvmMu.Unlock()
	if rn.kvm == nil {
		rn.kvm = map[string]*kvmAnswer{}
	}
	rn.kvm[memKey] = a
}

// forget drops a remembered answer, here and on disk: the next run probes.
func (rn *Runner) forget(a *kvmAnswer) error {
	rn.kvmMu.Lock()
	for k, b := range rn.kvm {
		if b == a {
			delete(rn.kvm, k)
		}
	}
	rn.kvmMu.Unlock()
	if a.path == "" {
		return nil
	}
	if err := os.Remove(a.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// readKVMAnswer is the answer kept in path for in, or nil: a file that is
// missing, unreadable, not parsed or for other inputs means probing again.
func readKVMAnswer(path string, in kvmInputs) *kvmAnswer {
	a := readKept(path, func(a *kvmAnswer) bool {
		return a.Inputs == in && !a.Probed.IsZero() && (a.Usable || a.Reason != "")
	})
	if a != nil {
		a.path, a.remembered = path, true
	}
	return a
}

// writeKVMAnswer keeps a in path whole or not at all: runs side by side
// may read it while it is written.
func writeKVMAnswer(path string, a *kvmAnswer) error {
	return writeKept(path, a)
}

// hostKVM is the host's part of the inputs, or why /dev/kvm cannot be
// used at all (which costs nothing to find again).
func hostKVM() (kvmInputs, error) {
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return kvmInputs{}, err
	}
	st, err := f.Stat()
	f.Close()
	if err != nil {
		return kvmInputs{}, err
	}
	in := kvmInputs{HostKernel: "unknown", CPU: cpuModel()}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		rdev := uint64(sys.Rdev) // its type differs between arches
		in.DevKVM = fmt.Sprintf("device %d:%d, inode %d", unix.Major(rdev), unix.Minor(rdev), sys.Ino)
	}
	if rel, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		in.HostKernel = strings.TrimSpace(string(rel))
	}
	return in, nil
}

// cpuModel is the host's CPU as /proc/cpuinfo names it: x86's model
// name, arm64's implementer and part; each kind once.
func cpuModel() string {
	data, _ := os.ReadFile("/proc/cpuinfo")
	var models []string
	implementer := ""
	for _, l := range strings.Split(string(data), "\n") {
		k, v, _ := strings.Cut(l, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		model := ""
		switch k {
		case "model name":
			model = v
		case "CPU implementer":
			implementer = v
		case "CPU part":
			model = "implementer " + implementer + " part " + v
		}
		if model != "" && !slices.Contains(models, model) {
			models = append(models, model)
		}
	}
	if len(models) == 0 {
		return "unknown"
	}
	return strings.Join(models, "; ")
}

// wrongKVM is the run's end when a boot under KVM that only a remembered
// answer chose shows that answer wrong: QEMU or KVM, not the kernel, gave
// up (qemu.Result.GaveUp). The answer is forgotten and the run has no
// verdict. It is not rerun under TCG: its directory would then hold
// boots of two machines under one machine line, and a boot that died
// under KVM is not the kernel's failure to report; the next run probes.
// A fresh probe's answer is not second-guessed: its boots are judged as
// ever.
func (r *run) wrongKVM(b *qemu.Result) error {
	a := r.kvmRemembered
	if a == nil || b == nil {
		return nil
	}
	line := b.GaveUp(r.m.Binary)
	if line == "" {
		return nil
	}
	forgotten := "the answer is forgotten: run again"
	if err := r.forgetKVM(); err != nil {
		forgotten = fmt.Sprintf("forgetting the answer failed (%v): remove %s and run again", err, a.path)
	}
	return infra("KVM was remembered usable (probe of %s) but QEMU failed under KVM: %s; %s", a.when(), line, forgotten)
}
