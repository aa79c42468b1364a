// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/labels"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// hostArch is the suite's arch that is this host's: only its guests probe KVM.
func hostArch(t *testing.T) arch.Arch {
	if runtime.GOARCH == "arm64" {
		return arch.MustLookup("arm64")
	}
	if runtime.GOARCH != "amd64" {
		t.Skipf("no arch of the suite is this host's (%s)", runtime.GOARCH)
	}
	return arch.MustLookup("x86_64")
}

// fakeQEMUBin is a script standing in for QEMU: version is its
// --version line, boot what it does when asked to boot.
func fakeQEMUBin(t *testing.T, version, boot string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "qemu-system-fake")
	script := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '" + version + "'; exit 0; fi\n" + boot
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// fakeProber records the kernels probed and answers with errFor's error
// for the kernel, else with err.
type fakeProber struct {
	probed []string
	err    error
	errFor map[string]error
	host   kvmInputs
}

// runner is a Runner, standing for one process, whose probe and host are
// p's.
func (p *fakeProber) runner() *Runner {
	return &Runner{
		probeKVM: func(_ qemu.Machine, kernel string) error {
			p.probed = append(p.probed, kernel)
			if err, ok := p.errFor[kernel]; ok {
				return err
			}
			return p.err
		},
		kvmHost: func() (kvmInputs, error) { return p.host, nil },
	}
}

// accelRun is a run at the point of choosing its accelerator.
func accelRun(t *testing.T, cache, bin, sha, accel string) *run {
	a := hostArch(t)
	req := results.Request{Arch: a, Labels: labels.MustParse("BASE-ONOFF-01"), Timeout: time.Minute}
	return &run{
		o: Options{Request: req, CacheDir: cache, Accel: accel, Boots: []string{contract.DefaultBoot}, Lanes: 1,
			Progress: progress.Discard()},
		m:      qemu.Machine{Arch: a, Binary: bin, Args: []string{"-M", "virt", "-cpu", "max"}},
		kernel: "/kernels/" + sha, res: &results.Result{Request: req, Derived: results.Derived{Timeout: req.Timeout}, KernelSHA: sha, Dir: t.TempDir()},
	}
}

// A vmlinux that dies through PVH before printing says nothing of KVM: the
// bzImage the run would then boot is probed instead, and its answer kept.
func TestKVMProbeOfAVmlinuxThatDiesSilentlyTriesItsBzImage(t *testing.T) {
	for _, tc := range []struct {
		name    string
		bzImage error
		accel   string
	}{
		{"the bzImage boots under KVM", nil, "kvm"},
		{"the bzImage hangs under KVM", errors.New("qemu-system-fake under KVM: the kernel did not end its boot within 10s"), "tcg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			silent := fmt.Errorf("qemu-system-fake under KVM: %w", qemu.ErrKernelSilent)
			p := &fakeProber{err: tc.bzImage, errFor: map[string]error{"/kernels/vmlinux": silent}, host: testHost}
			cache := t.TempDir()
			r := accelRun(t, cache, fakeQEMUBin(t, "QEMU emulator version 9.9.9", "exit 0\n"), "aaaa", "")
			r.kernel, r.route = "/kernels/vmlinux", route{vmlinux: "/kernels/vmlinux", bzImage: "/kernels/bzImage", open: true}
			got := choose(t, p.runner(), r)
			if !slices.Equal(p.probed, []string{"/kernels/vmlinux", "/kernels/bzImage"}) || got.Name != tc.accel {
				t.Fatalf("probed %v, accel %+v; want the vmlinux then the bzImage, %s", p.probed, got, tc.accel)
			}
			if files, _ := filepath.Glob(filepath.Join(cache, "kvm-probe", "*.json")); len(files) != 1 {
				t.Errorf("cache holds %v: the bzImage's answer is kept", files)
			}
		})
	}
	// Without a bzImage, a silent kernel leaves the answer undecided: the
	// run is emulated and nothing is kept.
	p := &fakeProber{err: qemu.ErrKernelSilent, host: testHost}
	cache := t.TempDir()
	if got := choose(t, p.runner(), accelRun(t, cache, fakeQEMUBin(t, "QEMU emulator version 9.9.9", "exit 0\n"), "aaaa", "")); got.Name != "tcg" {
		t.Errorf("a silent kernel without a bzImage: %+v, want tcg", got)
	}
	if files, _ := filepath.Glob(filepath.Join(cache, "kvm-probe", "*.json")); len(files) != 0 {
		t.Errorf("cache holds %v: an undecided answer is not kept", files)
	}
}

// choose chooses the accelerator of a run in rn and returns it.
func choose(t *testing.T, rn *Runner, r *run) qemu.Accel {
	t.Helper()
	if err := r.chooseAccel(rn); err != nil {
		t.Fatalf("chooseAccel: %v", err)
	}
	return r.m.Accel
}

var testHost = kvmInputs{HostKernel: "6.1.0-test", CPU: "Test CPU", DevKVM: "device 10:232, inode 7"}

// The probe's answer is kept on disk: another process (a second Runner)
// with the same cache does not probe, and says the answer is remembered;
// a change of any input probes again, as does a file that cannot be read.
func TestKVMAnswerRememberedAcrossProcesses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		accel string
	}{
		{"KVM works", nil, "kvm"},
		{"KVM does not", errors.New("qemu-system-fake: KVM internal error (KVM cannot run this kernel here, nested virtualization?)"), "tcg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			bin := fakeQEMUBin(t, "QEMU emulator version 9.9.9", "exit 0\n")
			p := &fakeProber{err: tc.err, host: testHost}
			rn := p.runner()
			got := choose(t, rn, accelRun(t, cache, bin, "aaaa", ""))
			if len(p.probed) != 1 || got.Name != tc.accel || strings.Contains(got.Why, "remembered") {
				t.Fatalf("first run: %d probes, %+v; want one probe, %s, not remembered", len(p.probed), got, tc.accel)
			}
			files, _ := filepath.Glob(filepath.Join(cache, "kvm-probe", "*.json"))
			if len(files) != 1 {
				t.Fatalf("cache holds %v, want one answer", files)
			}
			data, _ := os.ReadFile(files[0])
			t.Logf("%s:\n%s", filepath.Base(files[0]), data)
			for _, want := range []string{`"kernel_sha256": "aaaa"`, `"qemu": "QEMU emulator version 9.9.9"`, `"host_kernel": "6.1.0-test"`, `"probed"`} {
				if !bytes.Contains(data, []byte(want)) {
					t.Errorf("the answer's file lacks %s", want)
				}
			}

			// The same process, a second run: remembered in memory.
			got = choose(t, rn, accelRun(t, cache, bin, "aaaa", ""))
			if len(p.probed) != 1 || got.Name != tc.accel || !strings.Contains(got.Why, "; remembered from a probe of ") {
				t.Errorf("second run, same process: %d probes, %+v; want none more, remembered", len(p.probed), got)
			}
			// Another process: remembered from the file.
			got = choose(t, p.runner(), accelRun(t, cache, bin, "aaaa", ""))
			t.Logf("machine: %s", got.Why)
			if len(p.probed) != 1 || got.Name != tc.accel || !strings.Contains(got.Why, "; remembered from a probe of ") {
				t.Errorf("another process: %d probes, %+v; want none more, remembered", len(p.probed), got)
			}

			// Each input of the key probes again when it changes.
			calls := len(p.probed)
			for what, r := range map[string]*run{
				"the kernel": accelRun(t, cache, bin, "bbbb", ""),
				"QEMU":       accelRun(t, cache, fakeQEMUBin(t, "QEMU emulator version 10.0.0", "exit 0\n"), "aaaa", ""),
			} {
				if choose(t, p.runner(), r); len(p.probed) != calls+1 {
					t.Errorf("%s changed: %d probes, want one more", what, len(p.probed)-calls)
				}
				calls = len(p.probed)
			}
			for what, edit := range map[string]func(*kvmInputs){
				"the host's kernel": func(in *kvmInputs) { in.HostKernel = "6.2.0-test" },
				"the CPU":           func(in *kvmInputs) { in.CPU = "Other CPU" },
				"/dev/kvm":          func(in *kvmInputs) { in.DevKVM = "device 10:232, inode 8" },
			} {
				q := &fakeProber{err: tc.err, host: testHost}
				edit(&q.host)
				if choose(t, q.runner(), accelRun(t, cache, bin, "aaaa", "")); len(q.probed) != 1 {
					t.Errorf("%s changed: %d probes, want one", what, len(q.probed))
				}
			}

			// A file cut short or overwritten is no answer: probe again.
			for _, bad := range []string{`{"usable": tr`, "", `{"usable": true, "probed": "2026-01-01T00:00:00Z", "inputs": {}}`} {
				if err := os.WriteFile(files[0], []byte(bad), 0o644); err != nil {
					t.Fatal(err)
				}
				q := &fakeProber{err: tc.err, host: testHost}
				if got := choose(t, q.runner(), accelRun(t, cache, bin, "aaaa", "")); len(q.probed) != 1 || got.Name != tc.accel {
					t.Errorf("file %q: %d probes, %+v; want one, %s", bad, len(q.probed), got, tc.accel)
				}
			}
			if data, _ := os.ReadFile(files[0]); !bytes.Contains(data, []byte(`"kernel_sha256": "aaaa"`)) {
				t.Errorf("the probe after a corrupt file did not keep its answer: %s", data)
			}
		})
	}
}

// ACCEL=tcg never probes nor keeps; ACCEL=kvm takes a remembered yes but
// probes again over a remembered no, and is refused when it holds.
func TestKVMAnswerAndACCEL(t *testing.T) {
	cache := t.TempDir()
	bin := fakeQEMUBin(t, "QEMU emulator version 9.9.9", "exit 0\n")
	p := &fakeProber{err: errors.New("the kernel did not end its boot within 10s"), host: testHost}
	if got := choose(t, p.runner(), accelRun(t, cache, bin, "aaaa", "tcg")); len(p.probed) != 0 || got.Why != "ACCEL=tcg" {
		t.Errorf("ACCEL=tcg: %d probes, %+v", len(p.probed), got)
	}
	if files, _ := filepath.Glob(filepath.Join(cache, "kvm-probe", "*")); len(files) != 0 {
		t.Errorf("ACCEL=tcg kept %v", files)
	}
	choose(t, p.runner(), accelRun(t, cache, bin, "aaaa", "")) // a "no" kept
	err := accelRun(t, cache, bin, "aaaa", "kvm").chooseAccel(p.runner())
	if len(p.probed) != 2 || err == nil || !strings.Contains(err.Error(), "ACCEL=kvm: no usable /dev/kvm: the kernel did not end its boot") {
		t.Errorf("ACCEL=kvm over a remembered no: %d probes, %v; want a fresh probe and a refusal", len(p.probed), err)
	}
	p.err = nil
	choose(t, p.runner(), accelRun(t, cache, bin, "aaaa", "kvm")) // a yes kept
	if got := choose(t, p.runner(), accelRun(t, cache, bin, "aaaa", "kvm")); len(p.probed) != 3 || got.Name != "kvm" || !strings.Contains(got.Why, "remembered") {
		t.Errorf("ACCEL=kvm over a remembered yes: %d probes, %+v; want no more and remembered", len(p.probed), got)
	}
}

// A probe that could not decide says so, falls back to TCG and is not
// kept; an answer that cannot be written is a note, not a failed run.
func TestKVMAnswerNotKept(t *testing.T) {
	cache := t.TempDir()
	bin := fakeQEMUBin(t, "QEMU emulator version 9.9.9", "exit 0\n")
	p := &fakeProber{err: errors.Join(qemu.ErrUndecided, errors.New("starting qemu: no such file")), host: testHost}
	for range 2 {
		got := choose(t, p.runner(), accelRun(t, cache, bin, "aaaa", ""))
		if got.Name != "tcg" || !strings.Contains(got.Why, "could not decide") || !strings.Contains(got.Why, "(not remembered)") {
			t.Errorf("undecided: %+v", got)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(cache, "kvm-probe", "*.json")); len(p.probed) != 2 || len(files) != 0 {
		t.Errorf("undecided: %d probes, kept %v; want 2 probes, nothing kept", len(p.probed), files)
	}

	notAdir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notAdir, nil, 0o644)
	var notes bytes.Buffer
	r := accelRun(t, notAdir, bin, "aaaa", "")
	r.o.Progress = progress.Quiet(&notes, "")
	p = &fakeProber{host: testHost}
	if got := choose(t, p.runner(), r); got.Name != "kvm" || !strings.Contains(notes.String(), "note: the KVM probe's answer was not kept") {
		t.Errorf("cache not writable: %+v, notes %q", got, notes.String())
	}
}

// bootRun is a run under a remembered "KVM works" whose default boot is
// made by QEMU, a script that gives up as QEMU does where KVM cannot set
// up a vCPU.
func bootRun(t *testing.T, rn *Runner, cache, bin string) *run {
	r := accelRun(t, cache, bin, "aaaa", "")
	choose(t, rn, r)
	r.res.Dir = t.TempDir()
	r.console = results.NewConsole(r.res.Dir)
	r.base = filepath.Join(t.TempDir(), "base.cpio")
	os.WriteFile(r.base, nil, 0o644)
	r.specs = types.SpecReports{{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[BASE-ONOFF-01] toggles", LeafNodeLabels: []string{"BASE-ONOFF-01"}}}
	return r
}

// A remembered "KVM works" that a boot shows wrong gives no verdict,
// names the cause, and is forgotten on disk and in the process: the next
// run probes again. A fresh probe's answer keeps today's error.
func TestWrongRememberedKVM(t *testing.T) {
	cache := t.TempDir()
	bin := fakeQEMUBin(t, "QEMU emulator version 9.9.9",
		"echo 'qemu-system-fake: error: failed to set MSR 0x10a to 0x69' >&2\nkill -ABRT $$\n")
	p := &fakeProber{host: testHost}
	rn := p.runner()
	r := bootRun(t, rn, cache, bin) // probes: a fresh yes
	if len(p.probed) != 1 || r.m.Accel.Name != "kvm" || r.kvmRemembered != nil {
		t.Fatalf("fresh probe: %d probes, %+v", len(p.probed), r.m.Accel)
	}
	err := r.bootAll(context.Background(), r.o.plans())
	t.Logf("fresh: %v", err)
	if err == nil || strings.Contains(err.Error(), "remembered") || !strings.Contains(err.Error(), "failed to set MSR") {
		t.Errorf("a fresh answer's boot failed: %v; want today's error, QEMU's line", err)
	}

	for _, proc := range []string{"the same process", "another process"} {
		if proc == "another process" {
			rn = p.runner()
		}
		r = bootRun(t, rn, cache, bin)
		if len(p.probed) != 1 || r.kvmRemembered == nil {
			t.Fatalf("%s: %d probes, remembered %v; want the answer remembered", proc, len(p.probed), r.kvmRemembered)
		}
		err = r.bootAll(context.Background(), r.o.plans())
		t.Logf("%s: %v", proc, err)
		var ie *InfraError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), "KVM was remembered usable (probe of ") ||
			!strings.Contains(err.Error(), "but QEMU failed under KVM: qemu-system-fake: error: failed to set MSR 0x10a to 0x69; the answer is forgotten: run again") {
			t.Errorf("%s: %v; want no verdict naming the remembered answer and QEMU's line", proc, err)
		}
		if files, _ := filepath.Glob(filepath.Join(cache, "kvm-probe", "*.json")); len(files) != 0 {
			t.Errorf("%s: the wrong answer is still kept: %v", proc, files)
		}
		if len(rn.kvm) != 0 {
			t.Errorf("%s: the process still remembers %v", proc, rn.kvm)
		}
		// The next run probes again (and here is told yes again).
		bootRun(t, rn, cache, bin)
		if len(p.probed) != 2 {
			t.Errorf("%s: the run after: %d probes, want one more", proc, len(p.probed)-1)
		}
		p.probed = p.probed[:1]
	}
}

// Two processes at once (two Runners, each its own lock descriptor) with
// one cache probe a kernel once: the second waits for the first's answer
// and recalls it.
func TestKVMProbedOnceByProcessesAtOnce(t *testing.T) {
	cache := t.TempDir()
	bin := fakeQEMUBin(t, "QEMU emulator version 9.9.9", "exit 0\n")
	var calls atomic.Int32
	runs := []*run{accelRun(t, cache, bin, "aaaa", ""), accelRun(t, cache, bin, "aaaa", "")}
	var wg sync.WaitGroup
	for _, r := range runs {
		rn := &Runner{
			probeKVM: func(qemu.Machine, string) error { calls.Add(1); time.Sleep(200 * time.Millisecond); return nil },
			kvmHost:  func() (kvmInputs, error) { return testHost, nil },
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.chooseAccel(rn); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	a, b := runs[0].m.Accel, runs[1].m.Accel
	if calls.Load() != 1 || a.Name != "kvm" || b.Name != "kvm" || strings.Contains(a.Why, "remembered") == strings.Contains(b.Why, "remembered") {
		t.Fatalf("%d probes, %+v and %+v; want one probe, KVM for both, the second remembered", calls.Load(), a, b)
	}
}
