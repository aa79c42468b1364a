// SPDX-License-Identifier: GPL-2.0-only

package qemu

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/arch"
)

// fakeQEMU is a script standing in for QEMU: it prints what a guest would
// print and then stays quiet.
func fakeQEMU(t *testing.T, script string) Machine {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "qemu-fake")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return Machine{Arch: arch.MustLookup("x86_64"), Binary: bin}
}

func boot(t *testing.T, m Machine) Boot {
	return Boot{Machine: m, Timeout: time.Minute, ConsoleLog: filepath.Join(t.TempDir(), "console.log"),
		Started: "smct-init: running", BootQuiet: time.Second, RunQuiet: 2 * time.Second}
}

func TestSilentBeforeInitIsSeenQuickly(t *testing.T) {
	b := boot(t, fakeQEMU(t, "echo 'Booting from ROM..'\nexec sleep 60\n"))
	res, err := Run(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Silent || res.Reached || res.Quiet != time.Second || res.TimedOut {
		t.Fatalf("Run() = %+v, want silent before the init, after 1s", res)
	}
	if res.Duration > 10*time.Second {
		t.Fatalf("a silent guest took %s to notice, want about the 1s limit", res.Duration)
	}
}

func TestSilentAfterInitUsesTheRunLimit(t *testing.T) {
	// Quiet for longer than BootQuiet but less than RunQuiet after the
	// init started: not silent.
	b := boot(t, fakeQEMU(t, "echo 'smct-init: running /suites.test'\nsleep 1.5\necho done\n"))
	res, err := Run(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	if res.Silent || !res.Reached {
		t.Fatalf("Run() = %+v, want reached and not silent", res)
	}
	b = boot(t, fakeQEMU(t, "echo 'smct-init: running /suites.test'\nexec sleep 60\n"))
	if res, err = Run(context.Background(), b); err != nil || !res.Silent || !res.Reached || res.Quiet != 2*time.Second {
		t.Fatalf("Run(quiet after init) = %+v, %v; want silent after 2s with the init reached", res, err)
	}
}

func TestEarlyConsoleComesFirst(t *testing.T) {
	b := Boot{Machine: MachineFor(arch.MustLookup("arm64")), Append: []string{"ftrace_stackmap.bits"}, EarlyConsole: true}
	want := "earlycon=pl011,0x9000000 console=ttyAMA0 panic=-1 loglevel=4 ftrace_stackmap.bits"
	if got := b.CommandLine(); got != want {
		t.Fatalf("CommandLine() = %q, want %q", got, want)
	}
	b.EarlyConsole = false
	if got := b.CommandLine(); got != "console=ttyAMA0 panic=-1 loglevel=4 ftrace_stackmap.bits" {
		t.Fatalf("CommandLine() without early console = %q", got)
	}
}

func TestChooseAccel(t *testing.T) {
	host, other := runtime.GOARCH, "riscv64"
	works := func() error { return nil }
	missing := func() error { return os.ErrNotExist }
	for _, tc := range []struct {
		name, guest, want string
		kvm               func() error
		got               string // "" when refused
	}{
		{"kvm usable, same arch", host, "", works, "kvm"},
		{"no /dev/kvm", host, "", missing, "tcg"},
		{"another arch", other, "", works, "tcg"},
		{"ACCEL=tcg where kvm works", host, "tcg", works, "tcg"},
		{"ACCEL=kvm where it works", host, "kvm", works, "kvm"},
		{"ACCEL=kvm without /dev/kvm", host, "kvm", missing, ""},
		{"ACCEL=kvm for another arch", other, "kvm", works, ""},
		{"ACCEL=hvf", host, "hvf", works, ""},
	} {
		a, err := ChooseAccel(tc.guest, tc.want, tc.kvm)
		if (err != nil) != (tc.got == "") || a.Name != tc.got || (err == nil && a.Why == "") {
			t.Errorf("%s: ChooseAccel() = %+v, %v; want %q with a reason", tc.name, a, err, tc.got)
		}
	}
}

func TestWithAccel(t *testing.T) {
	m := MachineFor(arch.MustLookup("x86_64"))
	kvm := m.WithAccel(Accel{"kvm", "test"})
	if got := strings.Join(kvm.Args, " "); got != "-M q35 -cpu host -accel kvm" {
		t.Errorf("under KVM: %s", got)
	}
	if got := strings.Join(m.WithAccel(Accel{"tcg", "test"}).Args, " "); got != "-M q35 -cpu qemu64 -accel tcg" {
		t.Errorf("under TCG: %s", got)
	}
	if strings.Join(m.Args, " ") != "-M q35 -cpu qemu64" {
		t.Errorf("WithAccel changed the machine it was given")
	}
}

func TestUserMachineSettings(t *testing.T) {
	b := Boot{Machine: MachineFor(arch.MustLookup("arm64")).WithCPU("max"), Kernel: "K", Initrd: "I", Memory: "1G", Extra: []string{"-d", "int"}}
	got := strings.Join(b.Args(), " ")
	for _, want := range []string{"-cpu max", "-m 1G", "-initrd I", " -d int"} {
		if !strings.Contains(got, want) {
			t.Errorf("Args() = %s, want %q in it", got, want)
		}
	}
	if !strings.HasSuffix(got, "-d int") {
		t.Errorf("the user's options do not come last: %s", got)
	}
}

// KVM that starts QEMU but cannot run the kernel is no KVM: the probe boots
// the kernel and wants it to end its boot.
func TestKVMProbeBootsTheKernel(t *testing.T) {
	if f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0); err != nil {
		t.Skipf("no /dev/kvm to probe: %v", err)
	} else {
		f.Close()
	}
	ended := fakeQEMU(t, "echo 'Kernel panic - not syncing: VFS: Unable to mount root fs'\nexit 0\n")
	if err := KVMWorks(ended, "vmlinux"); err != nil {
		t.Errorf("a kernel that ends its boot: %v", err)
	}
	stopped := fakeQEMU(t, "echo 'Booting from ROM..KVM internal error. Suberror: 1' >&2\nexec sleep 60\n")
	start := time.Now()
	err := KVMWorks(stopped, "vmlinux")
	if err == nil || !strings.Contains(err.Error(), "KVM internal error") {
		t.Errorf("a guest KVM stopped: %v, want KVM's error named", err)
	}
	if time.Since(start) > KVMProbeTime/2 {
		t.Errorf("KVM's error was seen after %s: the probe should stop at once", time.Since(start))
	}
	// A kernel that exits before its first console line says nothing of
	// KVM: it dies so under emulation too.
	silent := fakeQEMU(t, "printf 'SeaBIOS\\nBooting from ROM..'\nexit 0\n")
	if err := KVMWorks(silent, "vmlinux"); !errors.Is(err, ErrKernelSilent) || !errors.Is(err, ErrUndecided) {
		t.Errorf("a kernel silent until QEMU exits: %v, want ErrKernelSilent, undecided", err)
	}
	// A QEMU that cannot be started decides nothing.
	missing := Machine{Arch: arch.MustLookup("x86_64"), Binary: filepath.Join(t.TempDir(), "no-qemu")}
	if err := KVMWorks(missing, "vmlinux"); !errors.Is(err, ErrUndecided) {
		t.Errorf("no QEMU to start: %v, want ErrUndecided", err)
	}
}

// GaveUp tells QEMU's and KVM's failures from the kernel's.
func TestGaveUp(t *testing.T) {
	bin := "/usr/bin/qemu-system-x86_64"
	for _, tc := range []struct {
		name string
		res  Result
		want string
	}{
		{"QEMU aborts", Result{ExitCode: -1, Stderr: "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69\nqemu-system-x86_64: kvm.c:3183: Assertion failed."},
			"qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69"},
		{"KVM stops the guest", Result{Silent: true, Stderr: "KVM internal error. Suberror: 1\nemulation failure"}, "KVM internal error. Suberror: 1"},
		{"the kernel panics", Result{ExitCode: 0, Panic: "Kernel panic - not syncing: VFS"}, ""},
		{"a warning, then the suite ran", Result{Reached: true, ExitCode: 1, Stderr: "qemu-system-x86_64: warning: host doesn't support requested feature"}, ""},
		{"silent, QEMU killed", Result{Silent: true, ExitCode: -1, Stderr: "qemu-system-x86_64: terminating on signal 9"}, ""},
		{"exited without a word of its own", Result{ExitCode: 1}, ""},
	} {
		if got := tc.res.GaveUp(bin); got != tc.want {
			t.Errorf("%s: GaveUp() = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A console that cannot be saved is an error, not a silent loss; the
// echo still gets every line.
func TestConsoleNotSavedIsAnError(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	b := boot(t, fakeQEMU(t, "echo 'smct-init: running /suites.test'\necho 'SMCT-EXIT code=0'\n"))
	b.ConsoleLog = "/dev/full" // every write fails: no space left on device
	var echo strings.Builder
	b.Echo = &echo
	_, err := Run(context.Background(), b)
	t.Logf("error: %v", err)
	if !errors.Is(err, ErrConsoleLog) || !strings.Contains(echo.String(), "SMCT-EXIT code=0") {
		t.Fatalf("Run() = %v, echo %q; want ErrConsoleLog and the echo whole", err, echo.String())
	}
}

// The kernel is silent while the console shows nothing past the firmware's
// handover; without that line any word counts as the kernel's.
func TestKernelSilent(t *testing.T) {
	const seabios = "\x1bc\x1b[?7l\x1b[2J\x1b[0mSeaBIOS (version 1.16.2-debian-1.16.2-1)\r\n"
	for console, silent := range map[string]bool{
		"":                             true,
		" \r\n":                        true,
		seabios + "Booting from ROM..": true,
		seabios + "Booting from ROM...\r\n\x1b[0m\r\n":           true,
		seabios + "Booting from ROM..smct-init: running /suites": false,
		seabios + "Booting from ROM...\r\n[    0.000000] Linux ": false,
		seabios: false, // a firmware that did not hand over, or another's
		"[    0.000000] Booting Linux on physical": false,
	} {
		if got := KernelSilent([]byte(console)); got != silent {
			t.Errorf("KernelSilent(%q) = %v, want %v", console, got, silent)
		}
	}
}

func TestReportsPortIsOnTheMachinesBus(t *testing.T) {
	for name, bus := range map[string]string{"arm64": "virtio-serial-device", "x86_64": "virtio-serial-pci"} {
		b := Boot{Machine: MachineFor(arch.MustLookup(name)), Reports: &Port{Name: "p", File: "/r,1/f"}}
		got := strings.Join(b.Args(), " ")
		want := "-device " + bus + " -chardev file,id=smct-reports,path=/r,,1/f -device virtserialport,chardev=smct-reports,name=p"
		if !strings.Contains(got, want) {
			t.Errorf("%s: Args() = %q, want %q in it", name, got, want)
		}
	}
	if got := strings.Join((Boot{Machine: MachineFor(arch.MustLookup("arm64"))}).Args(), " "); strings.Contains(got, "virtserialport") {
		t.Errorf("a boot without Reports has a port: %q", got)
	}
}

// OnTail is called once, while the guest still runs, when the console
// shows the tail line: the run may start its next boot then.
func TestOnTailIsCalledOnceWhenTheLineShows(t *testing.T) {
	b := boot(t, fakeQEMU(t, "echo 'smct-init: running /suites.test'\necho 'smct-init: waiting for kmemleak 5s after the suite'\necho 'smct-init: waiting for kmemleak again'\nsleep 0.5\necho 'SMCT-EXIT code=0'\n"))
	b.Tail = "smct-init: waiting for kmemleak"
	calls := 0
	var at time.Duration
	start := time.Now()
	b.OnTail = func() { calls++; at = time.Since(start) }
	res, err := Run(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || at >= res.Duration-400*time.Millisecond {
		t.Fatalf("OnTail called %d times, at %s of a %s boot; want once, before the guest's last 0.5s", calls, at, res.Duration)
	}
	b = boot(t, fakeQEMU(t, "echo 'smct-init: running /suites.test'\necho 'SMCT-EXIT code=0'\n"))
	b.Tail, b.OnTail = "smct-init: waiting for kmemleak", func() { t.Error("OnTail called without the tail line") }
	if _, err := Run(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}
