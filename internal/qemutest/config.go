// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/u-root/u-root/pkg/cpio"

	"github.com/ftrace-stackmap/conformance/initramfs/guest"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// defaultBootArgs are added to every boot. The trace_options token lets the
// baseline check that the kernel honours options given at boot. Expedited
// RCU grace periods: tracefs writes (clearing a buffer, switching an event)
// wait for them, several jiffies each under emulation; this cuts a fifth of
// a run and changes nothing the contract speaks of.
var defaultBootArgs = []string{"trace_options=noannotate", "rcupdate.rcu_expedited=1"}

// Silence limits of a boot's console. Before the guest's init starts, a
// kernel that says nothing for BootQuiet has halted: even under emulation
// the slowest boot here prints within a few seconds. Once the suite runs,
// its longest quiet spell is the 30 s stress workload.
const (
	BootQuiet = 20 * time.Second
	RunQuiet  = 2 * time.Minute
)

// suiteArgs are the suite binary's flags in the guest, for the specs
// filter selects.
func (o Options) suiteArgs(filter string) []string {
	return []string{"-ginkgo.v", "-ginkgo.no-color", "-ginkgo.fail-on-empty", fmt.Sprintf("-ginkgo.seed=%d", o.Seed),
		"-smct.profile=" + o.Profile.String(), "-smct.workload=" + guest.WorkloadPath, "-smct.capture=" + guest.CaptureDir,
		"-ginkgo.label-filter=" + filter}
}

// guestTimeout is how long the guest gives the suite of a boot that may
// take timeout: 20 s less, for booting and powering off, or half of it
// when that leaves less than 10 s.
func guestTimeout(timeout time.Duration) time.Duration {
	if t := timeout - 20*time.Second; t >= 10*time.Second {
		return t
	}
	return timeout / 2
}

// runConfig is what the guest runs in a boot of the specs filter selects,
// and the files it needs beyond the initramfs: the tree's selftests when
// st has them.
func (o Options) runConfig(filter string, st *selftestSetup) (guest.RunConfig, []cpio.Record) {
	// Whole seconds, at least one: a TIMEOUT too short for any run must end
	// as the host's "did not power off", not as a guest refusing its config.
	cfg := guest.RunConfig{Args: o.suiteArgs(filter), TimeoutSeconds: max(1, int(guestTimeout(o.Timeout).Seconds()))}
	if st == nil {
		return cfg, nil
	}
	cfg.Ftracetest = st.tests
	return cfg, st.records
}

// kernelArgs are the kernel command line of a plan's boot: the suite's
// own words, the plan's, then the user's.
func (o Options) kernelArgs(plan contract.BootPlan) []string {
	return append(append(append([]string{}, defaultBootArgs...), plan.Append...), o.BootArgs...)
}

// qemuBoot is a plan's boot of kernel and initrd on m, its console saved
// in dir.
func (o Options) qemuBoot(m qemu.Machine, kernel, initrd, dir string, plan contract.BootPlan) qemu.Boot {
	return qemu.Boot{Machine: m, Kernel: kernel, Initrd: initrd, Append: o.kernelArgs(plan), CPUs: plan.CPUs,
		Timeout: o.Timeout, ConsoleLog: filepath.Join(dir, "console.log"), Echo: o.Echo,
		EarlyConsole: len(plan.Append) > 0, Started: guest.StartMarker, BootQuiet: BootQuiet, RunQuiet: RunQuiet,
		Memory: o.Mem, Extra: o.QEMUOpts}
}
