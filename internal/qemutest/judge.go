// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/internal/consoleframe"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// Judge reads the frames the guest wrote into dir/console.log, saves the
// files they carry into dir, and decides whether they can be trusted; only
// then are there reports. boot is how QEMU ended.
func Judge(dir string, boot *qemu.Result) ([]types.Report, error) {
	log := filepath.Join(dir, "console.log")
	f, err := os.Open(log)
	if err != nil {
		return nil, failed("reading the console", err)
	}
	defer f.Close()
	c, err := consoleframe.Decode(f)
	if err != nil {
		return nil, failed("reading "+log, err)
	}
	keepFiles(dir, c.Files)
	if err := untrusted(c, boot, log, "report.json"); err != nil {
		return nil, &InfraError{Err: err}
	}
	reports, err := report.Parse(c.Files["report.json"])
	if err != nil {
		return nil, failed("reading the guest's report", err)
	}
	s := report.Summarize(contract.DefaultBoot, reports) // the boot's name matters not here
	switch {
	case len(s.SuiteProblems) > 0:
		return reports, infra("suite: %s", s.SuiteProblems[0])
	case len(s.Specs) == 0:
		return reports, infra("no spec ran: check LABELS")
	case (c.Exit == 0) != s.Succeeded:
		return reports, infra("suite exit code %d disagrees with its report (succeeded=%v)", c.Exit, s.Succeeded)
	}
	return reports, nil
}

// keepFiles saves the files the guest's frames carried into dir. For the
// reader: a file not written changes no verdict.
func keepFiles(dir string, files map[string][]byte) {
	for name, data := range files {
		if name != filepath.Base(name) || name == ".." {
			continue // a file name only: the guest writes in dir, nowhere else
		}
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
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
