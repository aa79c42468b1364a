// SPDX-License-Identifier: GPL-2.0-only

// Package qemu boots a kernel with an initramfs under QEMU (software
// emulation is assumed), saves the raw console and tells how the boot ended.
// It says nothing about the tests: only the frames in the console do.
package qemu

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/textlines"
)

// Machine is QEMU's settings for one arch.
type Machine struct {
	Arch   arch.Arch // its console, earlycon= and QEMU package too
	Binary string    // qemu-system-*: the arch's, unless a test says otherwise
	Args   []string  // machine and CPU
	Accel  Accel     // how the guest runs, once chosen (WithAccel)
}

// Accel is how QEMU runs the guest, "kvm" or "tcg", and why.
type Accel struct{ Name, Why string }

// ChooseAccel picks KVM when /dev/kvm is usable (kvmUsable says why not)
// and the guest's arch is the host's, else emulation. want is the user's
// ACCEL=: "" to choose, "kvm" or "tcg" to insist.
func ChooseAccel(guestGOARCH, want string, kvmUsable func() error) (Accel, error) {
	switch want {
	case "tcg":
		return Accel{"tcg", "ACCEL=tcg"}, nil
	case "", "kvm":
	default:
		return Accel{}, fmt.Errorf("ACCEL=%q: want kvm or tcg", want)
	}
	why := ""
	if guestGOARCH != runtime.GOARCH {
		why = fmt.Sprintf("the guest (%s) is not the host's arch (%s)", guestGOARCH, runtime.GOARCH)
	} else if err := kvmUsable(); err != nil {
		why = fmt.Sprintf("no usable /dev/kvm: %v", err)
	}
	switch {
	case why == "":
		return Accel{"kvm", "/dev/kvm usable, same arch"}, nil
	case want == "kvm":
		return Accel{}, fmt.Errorf("ACCEL=kvm: %s", why)
	}
	return Accel{"tcg", why}, nil
}

// KVMProbeTime is how long the KVM probe gives a kernel to end its boot:
// under KVM one panics for want of a root file system within a second or
// two.
const KVMProbeTime = 10 * time.Second

// kvmFailure is what QEMU prints when KVM cannot run an instruction of the
// guest (nested virtualization that lacks a CPU feature): the guest stops,
// QEMU does not exit.
const kvmFailure = "KVM internal error"

// KVMWorks says why m cannot run kernel under KVM, or nil. An openable
// /dev/kvm is not enough, nor a QEMU that starts under it: nested
// virtualization may run the firmware and stop at an instruction of the
// kernel. So the kernel itself is booted, without an initramfs, and must
// end its boot (a panic for want of a root file system, then QEMU exits)
// within KVMProbeTime.
func KVMWorks(m Machine, kernel string) error {
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return err
	}
	f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), KVMProbeTime)
	defer cancel()
	args := append(m.WithAccel(Accel{Name: "kvm"}).Args, "-display", "none", "-nographic", "-no-reboot", "-nic", "none",
		"-m", "256", "-kernel", kernel, "-append", "console="+m.Arch.Console+" panic=-1 loglevel=1")
	cmd := exec.CommandContext(ctx, m.Binary, args...)
	out := &wordWatch{word: kvmFailure, seen: cancel}
	cmd.Stdout, cmd.Stderr = out, out
	err = cmd.Run()
	switch {
	case cmd.ProcessState == nil:
		// QEMU never ran: that says nothing of KVM.
		return fmt.Errorf("%w: starting %s: %v", ErrUndecided, m.Binary, err)
	case out.found():
		return fmt.Errorf("%s: %s (KVM cannot run this kernel here, nested virtualization?)", m.Binary, kvmFailure)
	case ctx.Err() != nil:
		return fmt.Errorf("%s under KVM: the kernel did not end its boot within %s", m.Binary, KVMProbeTime)
	case err != nil && out.has(filepath.Base(m.Binary)+": "):
		// QEMU itself gave up (a vCPU it could not set up), not the kernel.
		return fmt.Errorf("%s under KVM: %v: %s (nested virtualization?)", m.Binary, err, out.line(filepath.Base(m.Binary)+": "))
	case KernelSilent(out.bytes()):
		// A kernel that dies before its first console line (a debug
		// build through PVH) dies so under emulation too.
		return fmt.Errorf("%s under KVM: %w", m.Binary, ErrKernelSilent)
	}
	return nil // it booted and ended, whatever the status
}

// ErrUndecided is KVMWorks' error when the probe could not run at all, so
// that its answer is not one to remember.
var ErrUndecided = errors.New("the KVM probe could not decide")

// ErrKernelSilent is KVMWorks' error when QEMU exited before the kernel
// printed anything: that says nothing of KVM, and another way to boot the
// kernel (a bzImage) may.
var ErrKernelSilent = fmt.Errorf("%w: the kernel printed nothing before QEMU exited", ErrUndecided)

// GaveUp is QEMU's own complaint when QEMU or KVM, not the kernel, ended
// a boot, as KVMWorks recognises it: KVM could not run an instruction of
// the guest, or QEMU exited on an error of its own (a vCPU it could not
// set up) before the init started, without a panic and without being
// stopped for silence or time. "" otherwise.
func (r *Result) GaveUp(binary string) string {
	if l := lineWith(r.Stderr, kvmFailure); l != "" {
		return l
	}
	if r.Reached || r.Panic != "" || r.Silent || r.TimedOut || r.ExitCode == 0 {
		return ""
	}
	return lineWith(r.Stderr, filepath.Base(binary)+": ")
}

// lineWith is the first line of text that holds s, or "".
func lineWith(text, s string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// wordWatch keeps what a process writes and calls seen once word appears.
type wordWatch struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	word string
	seen func()
}

func (w *wordWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if bytes.Contains(w.buf.Bytes(), []byte(w.word)) {
		w.seen()
	}
	return len(p), nil
}

// bytes is what the process wrote.
func (w *wordWatch) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf.Bytes())
}

// has says whether what the process wrote holds s.
func (w *wordWatch) has(s string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Contains(w.buf.Bytes(), []byte(s))
}

// line is the first line of what the process wrote that holds s.
func (w *wordWatch) line(s string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return lineWith(w.buf.String(), s)
}

func (w *wordWatch) found() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Contains(w.buf.Bytes(), []byte(w.word))
}

// WithCPU is the machine with another CPU model (e.g. max, which on arm64
// has pointer authentication).
func (m Machine) WithCPU(cpu string) Machine {
	args := slices.Clone(m.Args)
	if i := slices.Index(args, "-cpu"); i >= 0 && i+1 < len(args) {
		args[i+1] = cpu
	}
	m.Args = args
	return m
}

// WithAccel is the machine run with a: under KVM the guest gets the host's
// CPU, since KVM cannot give it another.
func (m Machine) WithAccel(a Accel) Machine {
	args := slices.Clone(m.Args)
	if i := slices.Index(args, "-cpu"); a.Name == "kvm" && i >= 0 && i+1 < len(args) {
		args[i+1] = "host"
	}
	m.Args, m.Accel = append(args, "-accel", a.Name), a
	return m
}

// MachineFor is QEMU's machine for a, as the arch table describes it.
func MachineFor(a arch.Arch) Machine {
	return Machine{Arch: a, Binary: a.QEMU, Args: a.Machine}
}

// Boot is one boot to perform.
type Boot struct {
	Machine    Machine
	Kernel     string
	Initrd     string
	Append     []string      // extra kernel command line words
	CPUs       int           // 0 means one
	Timeout    time.Duration // the whole boot, power-off included
	ConsoleLog string        // where the raw console goes
	Echo       io.Writer     // if set, the console is copied here as it arrives
	// EarlyConsole turns on earlycon, first on the command line, so that a
	// kernel that dies while parsing its command line shows why.
	EarlyConsole bool
	// Started is the line the guest's init prints when it starts. Until
	// the console shows it, BootQuiet of silence ends the boot as Silent;
	// after it, RunQuiet does (0: no limit but Timeout).
	Started             string
	BootQuiet, RunQuiet time.Duration
	// Tail is the line the init prints when only an idle wait is left;
	// OnTail, if set, is called once when the console shows it.
	Tail   string
	OnTail func()
	// Memory is -m (default 512M); Extra are the user's own QEMU options,
	// added last.
	Memory string
	Extra  []string
	// Reports, when set, gives the guest a virtio-serial port for bulk
	// data, written to a host file that Run reads back.
	Reports *Port
}

// Result is how a boot ended.
type Result struct {
	Command  []string
	Started  time.Time // on the host's clock
	Duration time.Duration
	TimedOut bool
	// Silent is set when the console said nothing for the quiet limit, and
	// Quiet is that limit; Reached says whether the init had started.
	Silent   bool
	Quiet    time.Duration
	Reached  bool
	Panic    string // the kernel's panic line, if it panicked
	ExitCode int    // QEMU's own; says nothing about the tests
	Stderr   string // QEMU's complaints, if any
	// Reports is what the guest wrote on the boot's port (Boot.Reports).
	Reports []byte
}

// CommandLine is the kernel command line of a boot.
func (b Boot) CommandLine() string {
	var words []string
	if b.EarlyConsole {
		// First: early parameters are parsed in command-line order.
		words = append(words, "earlycon="+b.Machine.Arch.EarlyCon)
	}
	words = append(words, "console="+b.Machine.Arch.Console, "panic=-1", "loglevel=4")
	return strings.Join(append(words, b.Append...), " ")
}

// Args is QEMU's full argument list.
func (b Boot) Args() []string {
	args := append([]string{}, b.Machine.Args...)
	smp := "1"
	if b.CPUs > 1 {
		// sockets= so that a kernel without ACPI still sees them all.
		smp = fmt.Sprintf("%d,sockets=%d", b.CPUs, b.CPUs)
	}
	mem := b.Memory
	if mem == "" {
		mem = "512"
	}
	args = append(args,
		"-m", mem, "-smp", smp, "-nographic", "-no-reboot", "-nic", "none",
		"-kernel", b.Kernel, "-initrd", b.Initrd, "-append", b.CommandLine())
	if b.Reports != nil {
		args = append(args, b.Reports.args(b.Machine.Arch.SerialBus)...)
	}
	return append(args, b.Extra...)
}

// PanicMarker begins the line of a kernel that panics.
const PanicMarker = "Kernel panic - not syncing"

// PanicIn is a console line's panic, from its marker on, or "".
func PanicIn(line string) string {
	if i := strings.Index(line, PanicMarker); i >= 0 {
		return strings.TrimSpace(line[i:])
	}
	return ""
}

// firmwareHandover is what x86's firmware (SeaBIOS) prints as it jumps to
// the kernel QEMU loaded: what follows on the console is the kernel's, or
// its init's, own.
const firmwareHandover = "Booting from ROM"

// escape is a terminal control sequence, as the firmware clears the
// screen with.
var escape = regexp.MustCompile(`\x1b(\[[0-9;?]*[A-Za-z]|.)`)

// KernelSilent says whether a boot's console shows nothing of the kernel:
// nothing at all, or only the firmware up to its handover. A console
// without the handover line counts its every word as the kernel's, so that
// a firmware not known here never makes a kernel look silent.
func KernelSilent(console []byte) bool {
	text := string(console)
	if i := strings.LastIndex(text, firmwareHandover); i >= 0 {
		text = strings.TrimLeft(text[i+len(firmwareHandover):], ".")
	}
	return strings.TrimSpace(escape.ReplaceAllString(text, "")) == ""
}

// ErrConsoleLog is Run's error when the console could not be saved.
var ErrConsoleLog = errors.New("writing the console log")

// Run boots and waits for QEMU to exit, the timeout, or a panic.
func Run(ctx context.Context, b Boot) (*Result, error) {
	if _, err := exec.LookPath(b.Machine.Binary); err != nil {
		return nil, fmt.Errorf("%s not found: install the Debian package %s", b.Machine.Binary, b.Machine.Arch.QEMUPkg)
	}
	logf, err := os.Create(b.ConsoleLog)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	ctx, cancel := context.WithTimeout(ctx, b.Timeout)
	defer cancel()
	args := b.Args()
	cmd := exec.CommandContext(ctx, b.Machine.Binary, args...)
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	res := &Result{Command: append([]string{b.Machine.Binary}, args...), Started: start}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var logErr error // the console file is a report: its loss is not silent
	w := &watch{last: time.Now()}
	go w.silence(ctx, b, res, cancel)
	rd := bufio.NewReader(&activity{out, w})
	for {
		line, err := rd.ReadString('\n')
		if _, werr := logf.Write([]byte(line)); werr != nil && logErr == nil {
			logErr = werr
		}
		if b.Echo != nil {
			b.Echo.Write([]byte(line)) // a copy: the boot goes on without it
		}
		if b.Started != "" && strings.Contains(line, b.Started) {
			w.started()
		}
		if b.OnTail != nil && b.Tail != "" && strings.Contains(line, b.Tail) {
			b.OnTail()
			b.OnTail = nil
		}
		if p := PanicIn(line); p != "" && res.Panic == "" {
			res.Panic = p
			// panic=-1 and -no-reboot make QEMU exit; give it a moment to
			// print the rest, then stop waiting for it.
			time.AfterFunc(3*time.Second, cancel)
		}
		if err != nil {
			break
		}
	}
	w.stop()
	waitErr := cmd.Wait()
	res.Duration = time.Since(start)
	res.Stderr = strings.TrimSpace(stderr.String())
	res.ExitCode = cmd.ProcessState.ExitCode()
	res.Silent, res.Quiet, res.Reached = w.result()
	if logErr = errors.Join(logErr, logf.Close()); logErr != nil {
		return res, fmt.Errorf("%w: %w", ErrConsoleLog, logErr)
	}
	if b.Reports != nil {
		// QEMU creates the file when it starts: none means it never did.
		if res.Reports, err = os.ReadFile(b.Reports.File); err != nil && !errors.Is(err, os.ErrNotExist) {
			return res, fmt.Errorf("the reports' port: %w", err)
		}
	}
	if res.Silent && res.Panic == "" {
		return res, nil
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && res.Panic == "" {
		res.TimedOut = true
		return res, nil
	}
	if waitErr != nil && res.Panic == "" && res.ExitCode != 0 {
		return res, fmt.Errorf("%s exited %d: %s", b.Machine.Binary, res.ExitCode, firstLine(res.Stderr))
	}
	return res, nil
}

// costs that limit, not the whole timeout.
func (w *watch) silence(ctx context.Context, b Boot, res *Result, cancel func()) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		w.mu.Lock()
		limit := b.BootQuiet
		if w.begun {
			limit = b.RunQuiet
		}
		quiet := time.Since(w.last)
		if w.stopped {
			w.mu.Unlock()
			return
		}
		if limit > 0 && quiet > limit {
			w.silent, w.limit = true, limit
			w.mu.Unlock()
			cancel()
			return
		}
		w.mu.Unlock()
	}
}

func firstLine(s string) string {
	if s == "" {
		return "(nothing on stderr)"
	}
	return textlines.First(s)
}

// Version is the first line of `qemu-system-* --version`.
func (m Machine) Version() string {
	out, err := exec.Command(m.Binary, "--version").Output()
	if err != nil {
		return "unknown"
	}
	return firstLine(strings.TrimSpace(string(out)))
}

// Describe names the emulator and machine, e.g. for a report header.
func (m Machine) Describe() string {
	d := m.Version() + " " + strings.Join(m.Args, " ")
	if m.Accel.Why != "" {
		d += " (" + m.Accel.Why + ")"
	}
	return d
}
