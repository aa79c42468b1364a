// SPDX-License-Identifier: GPL-2.0-only

package report

import (
	"fmt"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/contract"
)

// Run is what a run's reports say besides its specs: what was booted
// where, how the specs were chosen, and why the run gave no verdict when it
// did not. A QEMU run and a live run fill it alike, so that their KTAP and
// JUnit read the same. What the run did not learn is "" and left out.
type Run struct {
	Name    string // what was booted, as the JUnit suite is named before the arch
	Arch    string
	Image   string // where the kernel came from
	SHA256  string // the kernel image's
	Machine string // QEMU's version and machine settings
	Profile contract.Profile
	Seed    int64
	Suite   string // the suite's repository and commit
	Require string // whether the run requires the feature, and who decided
	Verdict string // the run's
	Started time.Time
	// NoVerdict is why the run gave no trustworthy verdict, "" when it did;
	// then each boot of Plans is a test that could not run.
	NoVerdict string
	Plans     []string
	Summary   Summary
}

// Header is what a run was, as the summary and the KTAP begin.
func (r Run) Header() [][2]string {
	image := r.Image
	if r.SHA256 != "" {
		image += ", sha256 " + r.SHA256
	}
	machine := r.Arch
	if r.Machine != "" {
		machine += " on " + r.Machine
	}
	return [][2]string{{"kernel", r.Summary.Kernel}, {"image", image}, {"machine", machine},
		{"profile", r.Profile.String()}, {"seed", fmt.Sprint(r.Seed)}, {"suite", r.Suite}, {"require", r.Require}}
}

// boots are the boots a run without a verdict was to make: the default
// boot when the run did not get as far as planning.
func (r Run) boots() []string {
	if len(r.Plans) == 0 {
		return []string{contract.DefaultBoot}
	}
	return r.Plans
}
