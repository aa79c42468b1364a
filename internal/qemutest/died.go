// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/kernellog"
	"github.com/ftrace-stackmap/conformance/internal/labels"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/textlines"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// BootDied is a boot whose kernel never reached the suite: it panicked, or
// the init never started (a silent halt, a hang, QEMU gone).
type BootDied struct {
	Boot    string
	Params  []string // the plan's own command-line words
	How     string
	Console []byte // what the boot's console showed
}

func (d *BootDied) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "boot %s did not reach the suite", d.Boot)
	if len(d.Params) > 0 {
		fmt.Fprintf(&b, " with %s on the kernel command line", strings.Join(d.Params, " "))
	}
	fmt.Fprintf(&b, ": %s", d.How)
	if oops := oopsLines(d.Console, 16); len(oops) > 0 {
		b.WriteString("\nthe kernel's report on the console:")
		for _, l := range oops {
			b.WriteString("\n  " + l)
		}
		return b.String()
	}
	tail := lastLines(d.Console, 12)
	if len(tail) == 0 {
		b.WriteString("\nthe console shows nothing")
		return b.String()
	}
	fmt.Fprintf(&b, "\nthe console's last %d lines:", len(tail))
	for _, l := range tail {
		b.WriteString("\n  " + l)
	}
	return b.String()
}

// Unjudged is a boot whose specs cannot be judged: what its console
// carried is missing or damaged, or it was not made where the run was
// (a LAVA job that has no console of it). Its specs are UNRESOLVED,
// naming why; the other boots' verdicts stand.
type Unjudged struct {
	Boot string
	Err  error
}

func (u *Unjudged) Error() string { return u.Err.Error() }

func (u *Unjudged) Unwrap() error { return u.Err }

// deathOf says how a boot died before its suite could report, or "" when
// its kernel reached the suite and the frames must be judged.
func deathOf(b *qemu.Result) string {
	switch {
	case b.Panic != "":
		return "the kernel panicked: " + b.Panic
	case b.Reached:
		return ""
	case b.Silent:
		return fmt.Sprintf("the console fell silent for %s before the init started (a halt or a hang)", b.Quiet)
	case b.TimedOut:
		return fmt.Sprintf("the init had not started after %s", b.Duration.Round(time.Second))
	}
	return fmt.Sprintf("QEMU exited (status %d) before the init started", b.ExitCode)
}

// printkTime is the timestamp before a kernel message: the evidence keeps
// the words, which are what fit in a mail's width.
var printkTime = regexp.MustCompile(`^\[\s*\d+\.\d+\]\s?`)

// oopsPart matches the lines of a kernel fault report a reviewer reads: the
// fault, where it happened, the call trace and the panic.
var oopsPart = regexp.MustCompile(`RIP: |pc : |lr : |Call [Tt]race:|\+0x[0-9a-f]+/0x[0-9a-f]+|Kernel panic`)

// oopsLines returns the kernel's report of the first fault on the console,
// at most n lines of it, or nothing when the console shows no fault.
func oopsLines(console []byte, n int) []string {
	var out []string
	for _, l := range strings.Split(string(console), "\n") {
		l = printkTime.ReplaceAllString(strings.TrimSpace(l), "")
		switch {
		case len(out) == 0 && (kernellog.Trouble(l) || strings.Contains(l, "Kernel panic")):
			out = append(out, l)
		case len(out) > 0 && len(out) < n && oopsPart.MatchString(l):
			out = append(out, l)
		}
	}
	return out
}

// lastLines returns the last n non-blank lines of a console, each without
// the spaces and printk timestamp before it.
func lastLines(console []byte, n int) []string {
	return textlines.Last(printkLineStart.ReplaceAllString(string(console), ""), n)
}

// printkLineStart is what comes before a kernel message's words on the
// console: spaces, and the timestamp with one space after it.
var printkLineStart = regexp.MustCompile(`(?m)^[ \t]*(\[\s*\d+\.\d+\] ?)?`)

// linuxVersion is the kernel's banner line on the console.
var linuxVersion = regexp.MustCompile(`Linux version (\S+) .*?(#\d+ .*)$`)

// kernelFromConsole is the release and build of the kernel's banner, as
// uname would give them, or "".
func kernelFromConsole(console []byte) string {
	for _, l := range strings.Split(string(console), "\n") {
		if m := linuxVersion.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			return m[1] + " " + m[2] + " (from the console)"
		}
	}
	return ""
}

// KernelProblems returns the kernel log lines that report trouble.
func KernelProblems(dmesg []byte) []string { return kernellog.Problems(dmesg) }

// controlPlan is a boot without any plan's parameters that runs one cheap
// spec: it shows that the kernel comes up when a boot that has them did not.
var controlPlan = contract.BootPlan{Name: "control", Labels: labels.MustParse("BASE-TRACEFS-01")}

// controlBoot makes the control boot after died, when no boot without
// parameters has been made yet. Its result is not reported, only whether
// the kernel reached the suite: if it did not, nothing can be blamed on
// the parameter and the dead boots' specs cannot be judged (an
// *Unjudged error of the control boot); an error of this machine is an
// *InfraError.
func (r *run) controlBoot(ctx context.Context, died *BootDied) error {
	_, boot, console, err := r.bootOnce(ctx, controlPlan, controlPlan.Labels, nil, r.o.Progress)
	r.sawConsole(console)
	r.res.Boots = append(r.res.Boots, results.BootResult{Plan: controlPlan, Boot: boot, Control: true})
	var died2 *BootDied
	var unjudged *Unjudged
	switch {
	case err == nil:
		return nil
	case ctx.Err() == nil && (errors.As(err, &died2) || errors.As(err, &unjudged)):
		return &Unjudged{Boot: controlPlan.Name, Err: err}
	}
	return infra("%v; and a control boot without its parameters failed too: %w", died, err)
}
