// SPDX-License-Identifier: GPL-2.0-only

// Command init is PID 1 of the test guest. It mounts what the suite needs,
// runs the compiled suite with the arguments the host put in
// /etc/smct/run.json, writes the reports to the console as checked frames
// (package consoleframe), and powers the machine off.
//
// The host trusts nothing but those frames: anything that goes wrong here
// is reported as a guest error line and ends in power-off, never in a
// silent hang.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/u-root/u-root/pkg/mount"
	"golang.org/x/sys/unix"

	"github.com/ftrace-stackmap/conformance/initramfs/guest"
	"github.com/ftrace-stackmap/conformance/internal/consoleframe"
	"github.com/ftrace-stackmap/conformance/internal/kernellog"
)

// The filesystems the suite needs, mounted in this order.
var mounts = []struct{ source, target, fstype string }{
	{"devtmpfs", "/dev", "devtmpfs"},
	{"proc", "/proc", "proc"},
	{"sysfs", "/sys", "sysfs"},
	{"tmpfs", "/tmp", "tmpfs"},
}

func mountAll() error {
	for _, m := range mounts {
		mkdir := func() error { return os.MkdirAll(m.target, 0o755) }
		if _, err := mount.Mount(m.source, m.target, m.fstype, "", 0, mkdir); err != nil {
			return err
		}
	}
	// debugfs holds kmemleak's file; a kernel without it has no kmemleak.
	mount.Mount("debugfs", "/sys/kernel/debug", "debugfs", "", 0)
	return nil
}

// scanLeaks has kmemleak list what it suspects into the kernel's log,
// where the kernel-log check finds it and places each object by its
// allocation's jiffies: one scan after the suite covers the boot too (a
// scan before it cost 9 s a boot under emulation and told the host
// nothing the jiffies do not).
func scanLeaks(when string) {
	if !guest.HasKmemleak() {
		return
	}
	n, err := guest.ScanLeaks()
	switch {
	case err != nil:
		log.Printf("kmemleak %s: %v", when, err)
	case n > 0:
		log.Printf("kmemleak %s: %d unreferenced objects, copied to the kernel log", when, n)
	}
}

const reportPath = "/tmp/report.json"

func main() {
	console, err := os.OpenFile("/dev/console", os.O_RDWR, 0)
	if err != nil {
		// Without a console nothing can reach the host; the host will see
		// no frames and call the run an infrastructure error.
		powerOff()
	}
	os.Stdout, os.Stderr = console, console
	log.SetOutput(console)
	log.SetPrefix("smct-init: ")
	log.SetFlags(0)

	frames := &consoleframe.Sender{W: console}
	cases := &ownCases{w: console}
	code, err := run(console, frames, cases)
	if err != nil {
		cases.write("verdict", "UNRESOLVED")
		consoleframe.WriteGuestError(console, err.Error())
	} else {
		consoleframe.WriteExit(console, code, frames.Sent)
	}
	unix.Sync()
	// Wait until the UART has sent everything: what is still queued at
	// power-off is lost.
	unix.IoctlSetInt(int(console.Fd()), unix.TCSBRK, 1)
	powerOff()
}

// openPort opens the virtio-serial port the kernel lists under name.
// Its writes return once the host has the bytes, so nothing is queued
// when the machine powers off.
func openPort(name string) (*os.File, error) {
	names, _ := filepath.Glob("/sys/class/virtio-ports/*/name")
	for _, p := range names {
		b, err := os.ReadFile(p)
		if err == nil && strings.TrimSpace(string(b)) == name {
			return os.OpenFile("/dev/"+filepath.Base(filepath.Dir(p)), os.O_WRONLY, 0)
		}
	}
	return nil, fmt.Errorf("no virtio port named %s (a kernel without CONFIG_VIRTIO_CONSOLE, or its virtio transport?)", name)
}

func run(console *os.File, frames *consoleframe.Sender, cases *ownCases) (int, error) {
	if err := mountAll(); err != nil {
		return 0, err
	}
	guest.Mark(guest.StageMounted)
	// Keep kernel messages off the console so they cannot cut a frame; the
	// kernel log travels in its own frame instead.
	if err := setConsoleLogLevel(1); err != nil {
		log.Printf("cannot lower the console log level: %v", err)
	}
	cfg, err := guest.ReadRunConfig(guest.RunConfigPath)
	if err != nil {
		return 0, err
	}
	if cfg.Shell {
		return 0, shell(console, cfg)
	}
	cases.boot = cfg.CaseBoot
	if cfg.ReportsPort != "" {
		port, err := openPort(cfg.ReportsPort)
		if err != nil {
			// Said on the console, where the host keeps it: the frames
			// still arrive, the slow way.
			log.Printf("reports on the console: %v", err)
		} else {
			defer port.Close()
			frames.W, frames.Raw = port, true
		}
	}
	if len(cfg.Job) > 0 {
		if err := frames.Write(guest.JobFile, cfg.Job); err != nil {
			return 0, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(cfg.TimeoutSeconds)*time.Second)
	defer cancel()
	// The machine powers off after the run: nothing need be put back.
	args := append([]string{"-smct.json-report=" + reportPath, "-smct.throwaway"}, cfg.Args...)
	if cases.boot != "" {
		args = append(args, "-smct.verdict-file="+guest.VerdictFile)
	}
	cmd := exec.CommandContext(ctx, guest.SuitePath, args...)
	cmd.Stdout, cmd.Stderr = console, console
	cmd.Dir = "/tmp"
	// On timeout, interrupt rather than kill: Ginkgo then runs the specs'
	// cleanups and still writes its report, which names the stuck spec.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 15 * time.Second
	cmd.Env = append(os.Environ(), "HOME=/tmp", "PATH=/", guest.MarksEnv+"=1")
	fmt.Fprintf(console, "%s %s %q\n", guest.StartMarker, guest.SuitePath, args)
	guest.Mark(guest.StageSuiteExec)
	err = cmd.Run()
	guest.Mark(guest.StageSuiteExit)
	exited := time.Now()
	code := cmd.ProcessState.ExitCode()
	var exitErr *exec.ExitError
	if ctx.Err() != nil {
		if report, err := os.ReadFile(reportPath); err == nil {
			frames.Write(filepath.Base(reportPath), report)
		}
		return 0, fmt.Errorf("suite did not finish within %ds", cfg.TimeoutSeconds)
	}
	switch {
	case err != nil && !errors.As(err, &exitErr):
		return 0, fmt.Errorf("cannot run %s: %v", guest.SuitePath, err)
	case code < 0:
		return 0, fmt.Errorf("suite killed: %v", err)
	}
	if !cfg.Claims {
		report, err := os.ReadFile(reportPath)
		if err != nil {
			return 0, fmt.Errorf("suite exited %d without a report: %v", code, err)
		}
		if err := frames.Write(filepath.Base(reportPath), report); err != nil {
			return 0, err
		}
	}
	captured, _ := os.ReadDir(guest.CaptureDir)
	for _, e := range captured {
		data, err := os.ReadFile(filepath.Join(guest.CaptureDir, e.Name()))
		if err != nil {
			return 0, err
		}
		if err := frames.Write(e.Name(), data); err != nil {
			return 0, err
		}
	}
	if len(cfg.Ftracetest) > 0 {
		out, logs := runFtracetest(ctx, cfg.Ftracetest)
		if err := frames.Write(guest.SelftestOutput, out); err != nil {
			return 0, err
		}
		if err := frames.Write(guest.SelftestLogs, logs); err != nil {
			return 0, err
		}
	}
	guest.Mark(guest.StageFramed)
	if guest.HasKmemleak() {
		// kmemleak reports nothing younger than its minimum age: wait it
		// out from the suite's exit (the frames went meanwhile), so that
		// the last spec's leaks show too.
		fmt.Fprintf(console, "%s %ds after the suite\n", guest.TailMarker, guest.KmemleakMinAge)
		time.Sleep(time.Until(exited.Add(guest.KmemleakMinAge * time.Second)))
		scanLeaks("after the suite")
	}
	guest.Mark(guest.StageChecked)
	dmesg, err := kernelLog()
	if err != nil {
		dmesg = fmt.Appendf(nil, "cannot read the kernel log: %v\n", err)
	}
	if err := frames.Write(guest.KernelLogFile, dmesg); err != nil {
		return 0, err
	}
	cases.end(err, dmesg)
	return code, nil
}

// ownCases are the init's own case lines, for a runner that reads results
// off the console: none unless the run configuration names the boot.
type ownCases struct {
	w    *os.File
	boot string
}

func (c *ownCases) write(name, class string) {
	if c.boot != "" {
		consoleframe.WriteCase(c.w, c.boot+"."+name, class)
	}
}

// end writes the boot's kernel-log check, as the host makes it, and its
// verdict: the specs' (the suite's verdict file), failed by a kernel that
// logged trouble, and none when the log could not be read.
func (c *ownCases) end(logErr error, dmesg []byte) {
	logClass := "PASS"
	switch {
	case logErr != nil:
		logClass = "UNRESOLVED"
	case len(kernellog.Problems(dmesg)) > 0:
		logClass = "FAIL"
	}
	c.write("kernel-log", logClass)
	verdict := "UNRESOLVED"
	switch b, _ := os.ReadFile(guest.VerdictFile); strings.TrimSpace(string(b)) {
	case "0":
		verdict = "PASS"
	case "1":
		verdict = "FAIL"
	}
	if verdict == "PASS" {
		verdict = logClass
	}
	c.write("verdict", verdict)
}

// runFtracetest runs the kernel tree's own ftracetest on the given tests
// with busybox's shell and utilities, after the suite has put tracefs back,
// and returns its output and the logs it kept (those of tests that did not
// pass), each headed by its file name. Its verdicts are read by the host.
func runFtracetest(ctx context.Context, tests []string) (out, logs []byte) {
	if b, err := exec.Command(guest.BusyboxPath, "--install", "-s", "/bin").CombinedOutput(); err != nil {
		return fmt.Appendf(nil, "cannot install busybox's links: %v\n%s", err, b), nil
	}
	const logDir = "/tmp/ftracetest"
	args := []string{filepath.Join(guest.FtraceDir, "ftracetest"), "--logdir", logDir}
	for _, t := range tests {
		args = append(args, filepath.Join(guest.FtraceDir, t))
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", args...)
	cmd.Dir = guest.FtraceDir
	cmd.Env = []string{"PATH=/bin", "HOME=/tmp", "TMPDIR=/tmp"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		out = fmt.Appendf(out, "ftracetest: %v\n", err)
	}
	names, _ := filepath.Glob(filepath.Join(logDir, "*-log.*"))
	for _, n := range names {
		b, _ := os.ReadFile(n)
		logs = fmt.Appendf(logs, "==> %s <==\n%s\n", filepath.Base(n), b)
	}
	return out, logs
}

// shell gives the user busybox's shell on the console, with the suite and
// tracefs at hand, until it exits.
func shell(console *os.File, cfg guest.RunConfig) error {
	if b, err := exec.Command(guest.BusyboxPath, "--install", "-s", "/bin").CombinedOutput(); err != nil {
		return fmt.Errorf("cannot install busybox's links: %v\n%s", err, b)
	}
	tracefs := "/sys/kernel/tracing"
	if _, err := mount.Mount("tracefs", tracefs, "tracefs", "", 0); err != nil {
		log.Printf("cannot mount tracefs on %s: %v", tracefs, err)
	}
	fmt.Fprintf(console, "\nsmct-init: a shell instead of the suite; tracefs is on %s.\n", tracefs)
	words := []string{guest.SuitePath}
	for _, a := range cfg.Args {
		// Quoted for the shell: a label filter has spaces and '!'.
		words = append(words, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	fmt.Fprintf(console, "smct-init: run the suite with: %s\n", strings.Join(words, " "))
	fmt.Fprintf(console, "smct-init: exit the shell to power off (or Ctrl-A x to stop QEMU)\n\n")
	// cttyhack makes the console the shell's controlling terminal, so
	// Ctrl-C reaches what runs in it and not the init.
	cmd := exec.Command("/bin/setsid", "/bin/cttyhack", "/bin/sh", "-l")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = console, console, console
	cmd.Dir = "/tmp"
	cmd.Env = []string{"PATH=/bin:/", "HOME=/tmp", "TERM=vt100", "PS1=" + guest.ShellPrompt}
	err := cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return fmt.Errorf("cannot run the shell: %v", err)
	}
	return nil
}

// setConsoleLogLevel is syslog(2) SYSLOG_ACTION_CONSOLE_LEVEL.
func setConsoleLogLevel(level int) error {
	_, _, errno := unix.Syscall(unix.SYS_SYSLOG, unix.SYSLOG_ACTION_CONSOLE_LEVEL, 0, uintptr(level))
	if errno != 0 {
		return errno
	}
	return nil
}

// kernelLog reads the kernel's whole log: its buffer is 4 MB (the host's
// log_buf_len=), and a shorter read would lose its start.
func kernelLog() ([]byte, error) {
	buf := make([]byte, 4<<20)
	n, err := unix.Klogctl(unix.SYSLOG_ACTION_READ_ALL, buf)
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

func powerOff() {
	unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	// Without ACPI an x86 kernel cannot power off; QEMU's -no-reboot turns a
	// restart into an exit.
	unix.Reboot(unix.LINUX_REBOOT_CMD_RESTART)
	select {}
}
