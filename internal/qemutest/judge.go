// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/initramfs/guest"
	"github.com/ftrace-stackmap/conformance/internal/consoleframe"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// Carried is what a boot's console carried: every file its frames
// brought, by name, and the guest's reports once they can be trusted.
// The verdict is made from these values; the files written into the boot's
// directory are for the reader.
type Carried struct {
	Files   map[string][]byte
	Reports []types.Report
	// Lost says, for each frame the guest sent that did not arrive whole,
	// what became of it.
	Lost []string
	// Spoke says the guest's init wrote on the console: a frame, whole or
	// not, an exit line or an error. Its init ran, whatever else the
	// console lost.
	Spoke bool
}

// KernelLog is the guest's kernel log, and whether it arrived at all.
func (c *Carried) KernelLog() ([]byte, bool) {
	log, ok := c.Files[guest.KernelLogFile]
	return log, ok
}

// Judge reads the frames the guest wrote on a boot's console (kept in the
// file log, which messages name) and decides whether they can be trusted;
// only then are there reports. boot is how QEMU ended, name the boot. The
// frames come back even when the reports cannot be trusted, for the
// reader. An error is why this boot's specs cannot be judged: each of its
// frames has a checksum, so damage elsewhere on its console (a lost
// capture, a cut kernel log) leaves an intact report trusted, and is
// named in Lost.
func Judge(console []byte, log, name string, boot *qemu.Result) (*Carried, error) {
	c, err := decode(console, boot)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", log, err)
	}
	out := &Carried{Files: c.Files, Spoke: len(c.Files) > 0 || c.HaveExit || len(c.GuestErrors) > 0 || len(c.Problems) > 0}
	for _, f := range c.Lost() {
		out.Lost = append(out.Lost, f+" "+c.Missing(f))
	}
	if err := untrusted(c, boot, log, name, "report.json"); err != nil {
		return out, err
	}
	reports, err := report.Parse(c.Files["report.json"])
	if err != nil {
		return out, fmt.Errorf("reading the guest's report: %w", err)
	}
	s := report.Summarize(contract.DefaultBoot, reports) // the boot's name matters not here
	switch {
	case len(s.SuiteProblems) > 0:
		return out, fmt.Errorf("suite: %s", s.SuiteProblems[0])
	case len(s.Specs) == 0:
		return out, fmt.Errorf("no spec ran: check LABELS")
	case (c.Exit == 0) != s.Succeeded:
		return out, fmt.Errorf("suite exit code %d disagrees with its report (succeeded=%v)", c.Exit, s.Succeeded)
	}
	out.Reports = reports
	return out, nil
}

// decode reads a boot's frames: those on its console, and those on its
// reports' port when it had one.
func decode(console []byte, boot *qemu.Result) (*consoleframe.Capture, error) {
	c, err := consoleframe.Decode(bytes.NewReader(console))
	if err == nil && boot != nil {
		c.AddPort(boot.Reports)
	}
	return c, err
}

// keepFiles writes the files the guest's frames carried into dir, for the
// reader; a file that cannot be written is an error, which leaves the run
// without a verdict, as any report that cannot be written does.
func keepFiles(dir string, files map[string][]byte) error {
	var errs []error
	for name, data := range files {
		if name != filepath.Base(name) || name == "." || name == ".." {
			continue // a file name only: the guest writes in dir, nowhere else
		}
		errs = append(errs, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
	if err := errors.Join(errs...); err != nil {
		return failed("writing the guest's files", err)
	}
	return nil
}

// untrusted says why what a boot's console carried cannot be trusted, or
// nil: the kernel panicked or hung, the guest reported an error, or the
// file the boot exists for (want) or the exit line did not arrive whole.
// It names what did arrive: a lost frame is not a boot that never ran.
func untrusted(c *consoleframe.Capture, boot *qemu.Result, log, name, want string) error {
	switch {
	case boot.Panic != "":
		return fmt.Errorf("the kernel panicked: %s (see %s)", boot.Panic, log)
	case boot.TimedOut:
		return fmt.Errorf("the guest did not power off within %s: hung? (see %s)", boot.Duration.Round(time.Second), log)
	case len(c.GuestErrors) > 0:
		return fmt.Errorf("the guest: %s (see %s)", c.GuestErrors[0], log)
	case c.Files[want] == nil:
		return fmt.Errorf("%s of boot %s %s; %s (see %s)", want, name, c.Missing(want), arrived(c), log)
	case !c.HaveExit:
		return fmt.Errorf("the exit line of boot %s did not arrive: the guest did not finish, or its end was cut; %s (see %s)", name, arrived(c), log)
	}
	return nil
}

// arrived says which of a boot's frames arrived whole, and whether its
// exit line did: whether its init ran, and how far.
func arrived(c *consoleframe.Capture) string {
	names := slices.Sorted(maps.Keys(c.Files))
	if c.HaveExit {
		names = append(names, "the exit line")
	}
	if len(names) == 0 {
		return "nothing of the guest's arrived: did its init run?"
	}
	return "its init ran: " + strings.Join(names, ", ") + " arrived"
}
