// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"os"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/initramfs/guest"
)

// Asked says whether the specs were asked to run on this machine, given the
// run's Ginkgo configuration. They change its tracing, so they run in the
// guest, whose init has the host's run configuration, or when the command
// line picks them with -ginkgo.label-filter, as the guest's and live
// mode's command lines do. `go test ./...` does neither: its run of the
// suite skips, and leaves the developer's machine alone. A dry run (the
// host lists the specs with it) runs none of them, so it is always asked.
func Asked(c types.SuiteConfig) bool {
	if c.LabelFilter != "" || c.DryRun {
		return true
	}
	_, err := os.Stat(guest.RunConfigPath)
	return err == nil
}

// NotAsked is why a run that was not asked for skips, and how to ask.
const NotAsked = "the specs change this machine's tracing, so they run in the guest (make qemu-test), " +
	"or in live mode, asked for with a label filter: ./suites.test -ginkgo.label-filter='!needs-boot && !stress && !torture'"
