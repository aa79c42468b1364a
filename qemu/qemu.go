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
	"strings"
	"time"
)

// Machine is QEMU's settings for one arch.
type Machine struct {
	Arch    string
	Binary  string   // qemu-system-*
	Package string   // the Debian package that has Binary
	Args    []string // machine and CPU
	Console string   // the kernel's name for the serial port
}

// Machines are the settings measured to boot fastest under emulation:
// cortex-a57 avoids the cost of emulating pointer authentication.
var Machines = map[string]Machine{
	"arm64": {Arch: "arm64", Binary: "qemu-system-aarch64", Package: "qemu-system-arm",
		Args: []string{"-M", "virt", "-cpu", "cortex-a57"}, Console: "ttyAMA0"},
	"x86_64": {Arch: "x86_64", Binary: "qemu-system-x86_64", Package: "qemu-system-x86",
		Args: []string{"-M", "q35", "-cpu", "qemu64"}, Console: "ttyS0"},
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
}

// Result is how a boot ended.
type Result struct {
	Command  []string
	Duration time.Duration
	TimedOut bool
	Panic    string // the kernel's panic line, if it panicked
	ExitCode int    // QEMU's own; says nothing about the tests
	Stderr   string // QEMU's complaints, if any
}

// CommandLine is the kernel command line of a boot.
func (b Boot) CommandLine() string {
	words := append([]string{"console=" + b.Machine.Console, "panic=-1", "loglevel=4"}, b.Append...)
	return strings.Join(words, " ")
}

// Args is QEMU's full argument list.
func (b Boot) Args() []string {
	args := append([]string{}, b.Machine.Args...)
	smp := "1"
	if b.CPUs > 1 {
		// sockets= so that a kernel without ACPI still sees them all.
		smp = fmt.Sprintf("%d,sockets=%d", b.CPUs, b.CPUs)
	}
	return append(args,
		"-m", "512", "-smp", smp, "-nographic", "-no-reboot", "-nic", "none",
		"-kernel", b.Kernel, "-initrd", b.Initrd, "-append", b.CommandLine())
}

const panicMarker = "Kernel panic - not syncing"

// Run boots and waits for QEMU to exit, the timeout, or a panic.
func Run(ctx context.Context, b Boot) (*Result, error) {
	if _, err := exec.LookPath(b.Machine.Binary); err != nil {
		return nil, fmt.Errorf("%s not found: install the Debian package %s", b.Machine.Binary, b.Machine.Package)
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
	res := &Result{Command: append([]string{b.Machine.Binary}, args...)}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var sinks io.Writer = logf
	if b.Echo != nil {
		sinks = io.MultiWriter(logf, b.Echo)
	}
	rd := bufio.NewReader(out)
	for {
		line, err := rd.ReadString('\n')
		sinks.Write([]byte(line))
		if i := strings.Index(line, panicMarker); i >= 0 && res.Panic == "" {
			res.Panic = strings.TrimSpace(line[i:])
			// panic=-1 and -no-reboot make QEMU exit; give it a moment to
			// print the rest, then stop waiting for it.
			time.AfterFunc(3*time.Second, cancel)
		}
		if err != nil {
			break
		}
	}
	waitErr := cmd.Wait()
	res.Duration = time.Since(start)
	res.Stderr = strings.TrimSpace(stderr.String())
	res.ExitCode = cmd.ProcessState.ExitCode()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && res.Panic == "" {
		res.TimedOut = true
		return res, nil
	}
	if waitErr != nil && res.Panic == "" && res.ExitCode != 0 {
		return res, fmt.Errorf("%s exited %d: %s", b.Machine.Binary, res.ExitCode, firstLine(res.Stderr))
	}
	return res, nil
}

func firstLine(s string) string {
	if s == "" {
		return "(nothing on stderr)"
	}
	l, _, _ := strings.Cut(s, "\n")
	return l
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
	return m.Version() + " " + strings.Join(m.Args, " ")
}
