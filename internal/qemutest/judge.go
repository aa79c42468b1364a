// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
}

// KernelLog is the guest's kernel log, and whether it arrived at all.
func (c *Carried) KernelLog() ([]byte, bool) {
	log, ok := c.Files[guest.KernelLogFile]
	return log, ok
}

// Judge reads the frames the guest wrote on a boot's console (kept in the
// file log, which messages name) and decides whether they can be trusted;
// only then are there reports. boot is how QEMU ended. The frames come
// back even when the reports cannot be trusted, for the reader.
func Judge(console []byte, log string, boot *qemu.Result) (*Carried, error) {
	c, err := consoleframe.Decode(bytes.NewReader(console))
	if err != nil {
		return nil, failed("reading "+log, err)
	}
	out := &Carried{Files: c.Files}
	if err := untrusted(c, boot, log, "report.json"); err != nil {
		return out, &InfraError{Err: err}
	}
	reports, err := report.Parse(c.Files["report.json"])
	if err != nil {
		return out, failed("reading the guest's report", err)
	}
	s := report.Summarize(contract.DefaultBoot, reports) // the boot's name matters not here
	switch {
	case len(s.SuiteProblems) > 0:
		return out, infra("suite: %s", s.SuiteProblems[0])
	case len(s.Specs) == 0:
		return out, infra("no spec ran: check LABELS")
	case (c.Exit == 0) != s.Succeeded:
		return out, infra("suite exit code %d disagrees with its report (succeeded=%v)", c.Exit, s.Succeeded)
	}
	out.Reports = reports
	return out, nil
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
// nil: the kernel panicked or hung, the guest reported an error, a frame
// is damaged, or the file the boot exists for (want) or its exit code
// never came.
func untrusted(c *consoleframe.Capture, boot *qemu.Result, log, want string) error {
	switch {
	case boot.Panic != "":
		return fmt.Errorf("guest kernel panicked: %s (see %s)", boot.Panic, log)
	case boot.TimedOut:
		return fmt.Errorf("guest did not power off within %s: hung? (see %s)", boot.Duration.Round(time.Second), log)
	case len(c.GuestErrors) > 0:
		return fmt.Errorf("guest: %s (see %s)", c.GuestErrors[0], log)
	case len(c.Problems) > 0:
		return fmt.Errorf("result from the guest is damaged: %v (see %s)", c.Problems[0], log)
	case c.Files[want] == nil || !c.HaveExit:
		return fmt.Errorf("guest sent no complete result: did its init run? (see %s)", log)
	}
	return nil
}
