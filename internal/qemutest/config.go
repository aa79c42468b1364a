// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/u-root/u-root/pkg/cpio"

	"github.com/ftrace-stackmap/conformance/initramfs/guest"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/labels"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// defaultBootArgs are added to every boot. The trace_options token lets the
// baseline check that the kernel honours options given at boot. Expedited
// RCU grace periods: tracefs writes (clearing a buffer, switching an event)
// wait for them, several jiffies each under emulation; this cuts a fifth of
// a run and changes nothing the contract speaks of. Not for a debug
// kernel: under its checkers an expedited grace period ends before a
// reset that waits for it is ever seen asleep (SM-RESET-01's sleeper),
// and its boots are slow for other reasons.
// A log buffer of 4 MB: the kernel-log check reads the whole log from its
// start, and a warning on every reset would overwrite a small one's,
// with the marks that place each report.
var defaultBootArgs = []string{"trace_options=noannotate", "rcupdate.rcu_expedited=1", "log_buf_len=4M"}

// debugBootArgs are defaultBootArgs for a debug kernel.
var debugBootArgs = []string{"trace_options=noannotate", "log_buf_len=4M"}

// emulatedDebugArgs are added for a debug kernel under TCG: its soft
// lockup and RCU stall detectors measure time the host did not give the
// guest's CPUs (a vCPU starved by lanes side by side reported a 22 s soft
// lockup in swapper while booting). With these thresholds a CPU must be
// stuck for two minutes to be reported, which a hang still is.
var emulatedDebugArgs = []string{"watchdog_thresh=60", "rcupdate.rcu_cpu_stall_timeout=120"}

// Silence limits of a boot's console. Once the suite runs, its longest
// quiet spell is the 30 s stress workload: RunQuiet. Before the guest's
// init starts, a kernel at loglevel=4 may print nothing at all, so the
// limit that tells a slow kernel from a halted one is how long the slowest
// may take (preInitQuiet). BootQuiet is a plain kernel's under KVM, which
// reaches its init within a second or two. Under TCG every guest
// instruction is translated, 10 to 50 times slower, and lanes side by side
// or a kernel build on the same CPUs slow each guest again: plain kernels
// printed within a few seconds on an idle host, so tcgQuiet triples the
// limit. A debug kernel (debugOptions) does much more before its init
// (KASAN fills its shadow memory, lockdep and the debug objects run
// self-tests, kmemleak tracks every allocation): one built with the
// kernel's debug.config printed nothing for 17 s under TCG on a loaded
// host (x86_64), and an arm64 one went 25 to 40 s of its own clock from
// unpacking the initramfs to its init with two runs side by side, and
// once past 2 minutes of the host's; so debugQuiet triples the limit
// again, to 3 minutes under TCG. A kernel that really hangs still ends
// its boot, at the limit.
const (
	BootQuiet  = 20 * time.Second
	tcgQuiet   = 3
	debugQuiet = 3
	RunQuiet   = 2 * time.Minute
)

// debugOptions are the Kconfig options that make a kernel slow to reach
// its init.
var debugOptions = []string{"CONFIG_KASAN", "CONFIG_LOCKDEP", "CONFIG_PROVE_LOCKING", "CONFIG_UBSAN",
	"CONFIG_DEBUG_KMEMLEAK", "CONFIG_DEBUG_OBJECTS"}

// debugIn are the debug options a kernel's config sets.
func debugIn(cfg map[string]string) []string {
	var on []string
	for _, opt := range debugOptions {
		if cfg[opt] == "y" {
			on = append(on, opt)
		}
	}
	return on
}

// preInitQuiet is the pre-init silence limit of a run's boots and, for
// the machine line, what it is and why: given (BOOT_QUIET=) when not 0,
// else BootQuiet scaled for the accelerator and for a kernel whose config
// (read from configFrom) sets debug options.
func preInitQuiet(given time.Duration, accel string, debug []string, configFrom string) (time.Duration, string) {
	if given > 0 {
		return given, fmt.Sprintf("pre-init silence limit %s (BOOT_QUIET=)", given)
	}
	limit := BootQuiet
	var why []string
	if accel != "kvm" {
		limit *= tcgQuiet
		why = append(why, fmt.Sprintf("x%d under TCG", tcgQuiet))
	}
	if len(debug) > 0 {
		limit *= debugQuiet
		why = append(why, fmt.Sprintf("x%d for a debug kernel: %s in %s", debugQuiet, strings.Join(debug, ", "), configFrom))
	}
	if len(why) == 0 {
		return limit, fmt.Sprintf("pre-init silence limit %s (KVM)", limit)
	}
	return limit, fmt.Sprintf("pre-init silence limit %s (%s %s)", limit, BootQuiet, strings.Join(why, ", "))
}

// runQuiet is the console's longest silence once the suite runs: a debug
// kernel's is debugQuiet times longer (a fill under the function tracer,
// which prints nothing until it ends, went past 2 minutes on a sanitized
// arm64 kernel under emulation, with other runs beside it).
func runQuiet(debug bool) time.Duration {
	if debug {
		return RunQuiet * debugQuiet
	}
	return RunQuiet
}

// DefaultTimeout is each boot's limit when TIMEOUT= does not set one.
const DefaultTimeout = 5 * time.Minute

// debugTimeout is how much longer a debug kernel's boot may take: its
// checkers (a kmemleak scan, KASAN's shadow checks) make every spec
// several times slower.
const debugTimeout = 4

// bootTimeout is the limit of each of a run's boots and, when it differs
// from the one asked for, why: the default limit, scaled for a kernel
// whose config sets debug options; a TIMEOUT= of its own is kept.
func bootTimeout(asked time.Duration, debug []string, torture time.Duration, tortured bool) (time.Duration, string) {
	limit, why := asked, ""
	if asked == DefaultTimeout && len(debug) > 0 {
		limit *= debugTimeout
		why = fmt.Sprintf("%s x%d for a debug kernel", asked, debugTimeout)
	}
	if tortured {
		// The torture's actors run that long, its checkpoints after them.
		limit += torture
		why = strings.TrimPrefix(why+" + "+torture.String()+" of torture", " + ")
	}
	if why == "" {
		return limit, ""
	}
	return limit, fmt.Sprintf("boot limit %s (%s)", limit, why)
}

// suiteArgs are the suite binary's flags in the guest, for the specs
// filter selects.
func (o Options) suiteArgs(filter labels.Filter) []string {
	args := []string{"-ginkgo.v", "-ginkgo.no-color", "-ginkgo.fail-on-empty", fmt.Sprintf("-ginkgo.seed=%d", o.Seed),
		"-smct.profile=" + o.Profile.String(), "-smct.workload=" + guest.WorkloadPath, "-smct.capture=" + guest.CaptureDir,
		"-ginkgo.label-filter=" + filter.String()}
	if o.Torture > 0 && filter.AsksFor(contract.LabelTorture) {
		args = append(args, "-smct.torture="+o.Torture.String())
	}
	return args
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

// runConfig is what the guest runs in boot, of the specs filter selects,
// and the files it needs beyond the initramfs: the tree's selftests when
// st has them. The suite names its specs after the boot (in the marks it
// leaves in the kernel's log, and in case lines).
func (o Options) runConfig(boot string, filter labels.Filter, st *selftestSetup, timeout time.Duration) (guest.RunConfig, []cpio.Record) {
	// Whole seconds, at least one: a TIMEOUT too short for any run must end
	// as the host's "did not power off", not as a guest refusing its config.
	cfg := guest.RunConfig{Args: append(o.suiteArgs(filter), "-smct.boot="+boot), TimeoutSeconds: max(1, int(guestTimeout(timeout).Seconds()))}
	if st == nil {
		return cfg, nil
	}
	cfg.Ftracetest = st.tests
	return cfg, st.records
}

// kernelArgs are the kernel command line of a plan's boot: the suite's
// own words, the plan's, the user's, then the run's (d).
func (o Options) kernelArgs(plan contract.BootPlan, d results.Derived) []string {
	debug := len(d.Debug) > 0
	base := defaultBootArgs
	if debug {
		base = debugBootArgs
	}
	if debug && d.Emulated {
		base = append(slices.Clone(base), emulatedDebugArgs...)
	}
	return slices.Concat(base, plan.Append, o.BootArgs, d.BootArgs)
}

// qemuBoot is a plan's boot of the run's kernel and initrd, its console
// saved in dir.
func (r *run) qemuBoot(initrd, dir string, plan contract.BootPlan) qemu.Boot {
	o, d := r.o, r.res.Derived
	b := qemu.Boot{Machine: r.m, Kernel: r.kernel, Initrd: initrd, Append: o.kernelArgs(plan, d), CPUs: plan.CPUs,
		Timeout: d.Timeout, ConsoleLog: filepath.Join(dir, "console.log"), Echo: o.Echo,
		EarlyConsole: len(plan.Append) > 0, Started: guest.StartMarker, Tail: guest.TailMarker, BootQuiet: r.bootQuiet, RunQuiet: runQuiet(len(d.Debug) > 0),
		Memory: o.Mem, Extra: o.QEMUOpts}
	if o.Reports.onPort() {
		b.Reports = &qemu.Port{Name: guest.ReportsPortName, File: filepath.Join(dir, portFile)}
	}
	return b
}

// Reports is how a boot's frames reach this machine when smct boots the
// guest itself. A runner elsewhere (LAVA) has only the console.
type Reports string

const (
	// ReportsOnPort: a virtio-serial port to a file, the bytes as they are
	// (the default): the console keeps the human log and the exit line.
	ReportsOnPort Reports = "port"
	// ReportsOnConsole: base64 on the serial console, as under LAVA.
	ReportsOnConsole Reports = "console"
)

func (r Reports) onPort() bool { return r != ReportsOnConsole }

// Set reads REPORTS= (a flag's value).
func (r *Reports) Set(s string) error {
	switch Reports(s) {
	case "", ReportsOnPort:
		*r = ReportsOnPort
	case ReportsOnConsole:
		*r = ReportsOnConsole
	default:
		return fmt.Errorf("%q: want port or console", s)
	}
	return nil
}

func (r Reports) String() string {
	if r == "" {
		return string(ReportsOnPort)
	}
	return string(r)
}

// portFile is where QEMU writes what the guest sends on the reports'
// port, in the boot's directory; read back, then removed unless KEEP=1.
const portFile = "reports-port.bin"
