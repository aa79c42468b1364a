// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"slices"
	"testing"
	"time"

	"github.com/u-root/u-root/pkg/cpio"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/labels"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/qemu"
)

func TestGuestTimeout(t *testing.T) {
	for boot, want := range map[time.Duration]time.Duration{
		5 * time.Minute:  4*time.Minute + 40*time.Second,
		30 * time.Second: 10 * time.Second,
		29 * time.Second: 14500 * time.Millisecond,
		2 * time.Second:  time.Second,
	} {
		if got := guestTimeout(boot); got != want {
			t.Errorf("guestTimeout(%s) = %s, want %s", boot, got, want)
		}
	}
}

func TestRunConfig(t *testing.T) {
	o := Options{Request: results.Request{Profile: "v3", Seed: 42, Timeout: 5 * time.Minute}}
	cfg, extra := o.runConfig("bits-12", labels.MustParse("SM-NODE-01"), nil, o.Timeout)
	want := []string{"-ginkgo.v", "-ginkgo.no-color", "-ginkgo.fail-on-empty", "-ginkgo.seed=42", "-smct.profile=v3",
		"-smct.workload=/workload", "-smct.capture=/tmp/capture", "-ginkgo.label-filter=SM-NODE-01", "-smct.boot=bits-12"}
	if !slices.Equal(cfg.Args, want) {
		t.Errorf("suite args %q, want %q", cfg.Args, want)
	}
	if cfg.TimeoutSeconds != 280 || cfg.Ftracetest != nil || extra != nil {
		t.Errorf("timeout %d, ftracetest %v, extra %v", cfg.TimeoutSeconds, cfg.Ftracetest, extra)
	}
	// A TIMEOUT too short for any run still gives the guest a whole second.
	if cfg, _ := o.runConfig("default", labels.Filter{}, nil, time.Second); cfg.TimeoutSeconds != 1 {
		t.Errorf("TIMEOUT=1s: the guest has %d s, want 1", cfg.TimeoutSeconds)
	}
	st := &selftestSetup{tests: []string{"a.tc"}, records: []cpio.Record{{}}}
	if cfg, extra := o.runConfig("default", labels.Filter{}, st, time.Second); !slices.Equal(cfg.Ftracetest, st.tests) || len(extra) != 1 {
		t.Errorf("with selftests: %v, %d records", cfg.Ftracetest, len(extra))
	}
}

// The suite's own words come first, the plan's next, the user's last.
func TestKernelArgs(t *testing.T) {
	o := Options{Request: results.Request{BootArgs: []string{"loglevel=8"}}}
	for _, tc := range []struct {
		plan contract.BootPlan
		want []string
	}{
		{contract.BootPlan{Name: "default"}, []string{"trace_options=noannotate", "rcupdate.rcu_expedited=1", "log_buf_len=4M", "loglevel=8"}},
		{contract.BootPlan{Name: "bits-12", Append: []string{"ftrace_stackmap.bits=12"}},
			[]string{"trace_options=noannotate", "rcupdate.rcu_expedited=1", "log_buf_len=4M", "ftrace_stackmap.bits=12", "loglevel=8"}},
	} {
		if got := o.kernelArgs(tc.plan, results.Derived{}); !slices.Equal(got, tc.want) {
			t.Errorf("boot %s: %q, want %q", tc.plan.Name, got, tc.want)
		}
	}
	// What the run adds (the reference kernel's v3 profile) comes after the user's.
	if got := o.kernelArgs(contract.BootPlan{Name: "default"}, results.Derived{BootArgs: []string{"ftrace_stackmap.profile=v3"}}); got[len(got)-1] != "ftrace_stackmap.profile=v3" || got[len(got)-2] != "loglevel=8" {
		t.Errorf("with the run's words: %q", got)
	}
	if len(defaultBootArgs) != 3 {
		t.Errorf("kernelArgs changed the suite's own words: %q", defaultBootArgs)
	}
}

// Only a boot with parameters of its own turns earlycon on: it may die
// parsing them.
func TestQEMUBoot(t *testing.T) {
	o := Options{Request: results.Request{Timeout: time.Hour}, Mem: "1024", QEMUOpts: []string{"-smp", "2"}}
	// Each boot's limit is the run's, derived from the request's.
	res := &results.Result{Request: o.Request, Derived: results.Derived{Timeout: time.Minute}}
	r := &run{o: o, res: res, m: qemu.MachineFor(arch.MustLookup("x86_64")), kernel: "/k", bootQuiet: 40 * time.Second}
	for _, tc := range []struct {
		plan  contract.BootPlan
		early bool
	}{
		{contract.BootPlan{Name: "default"}, false},
		{contract.BootPlan{Name: "stress", Append: []string{"ftrace_stackmap.bits=10"}, CPUs: 2}, true},
	} {
		b := r.qemuBoot("/i", "/run/boots/"+tc.plan.Name, tc.plan)
		if b.EarlyConsole != tc.early || b.CPUs != tc.plan.CPUs || b.ConsoleLog != "/run/boots/"+tc.plan.Name+"/console.log" {
			t.Errorf("boot %s: earlycon %v, CPUs %d, console %s", tc.plan.Name, b.EarlyConsole, b.CPUs, b.ConsoleLog)
		}
		if b.Kernel != "/k" || b.BootQuiet != 40*time.Second || b.RunQuiet != RunQuiet || b.Timeout != time.Minute || b.Memory != "1024" || !slices.Equal(b.Extra, o.QEMUOpts) {
			t.Errorf("boot %s: %+v", tc.plan.Name, b)
		}
	}
}

// The pre-init silence limit is BOOT_QUIET= when given, else scaled: short
// under KVM, longer under TCG, longer again for a debug kernel, and always
// says why. A debug.config kernel printed nothing for 17 s under TCG on a
// loaded host: its limit is well above that.
func TestPreInitQuiet(t *testing.T) {
	debug := debugIn(map[string]string{"CONFIG_KASAN": "y", "CONFIG_PROVE_LOCKING": "y", "CONFIG_LOCKDEP": "y",
		"CONFIG_UBSAN": "n", "CONFIG_DEBUG_KMEMLEAK": "m", "CONFIG_PRINTK": "y"})
	if want := []string{"CONFIG_KASAN", "CONFIG_LOCKDEP", "CONFIG_PROVE_LOCKING"}; !slices.Equal(debug, want) {
		t.Errorf("debugIn = %q, want %q", debug, want)
	}
	if got := debugIn(nil); got != nil {
		t.Errorf("debugIn of no config = %q", got)
	}
	for _, tc := range []struct {
		given time.Duration
		accel string
		debug []string
		want  time.Duration
		why   string
	}{
		{0, "kvm", nil, 20 * time.Second, "pre-init silence limit 20s (KVM)"},
		{0, "tcg", nil, time.Minute, "pre-init silence limit 1m0s (20s x3 under TCG)"},
		{0, "kvm", debug, time.Minute, "pre-init silence limit 1m0s (20s x3 for a debug kernel: CONFIG_KASAN, CONFIG_LOCKDEP, CONFIG_PROVE_LOCKING in /b/.config)"},
		{0, "tcg", debug, 3 * time.Minute, "pre-init silence limit 3m0s (20s x3 under TCG, x3 for a debug kernel: CONFIG_KASAN, CONFIG_LOCKDEP, CONFIG_PROVE_LOCKING in /b/.config)"},
		{90 * time.Second, "tcg", debug, 90 * time.Second, "pre-init silence limit 1m30s (BOOT_QUIET=)"},
		{5 * time.Second, "kvm", nil, 5 * time.Second, "pre-init silence limit 5s (BOOT_QUIET=)"},
	} {
		got, why := preInitQuiet(tc.given, tc.accel, tc.debug, "/b/.config")
		if got != tc.want || why != tc.why {
			t.Errorf("preInitQuiet(%s, %s, %q) = %s, %q; want %s, %q", tc.given, tc.accel, tc.debug, got, why, tc.want, tc.why)
		}
	}
	if got, _ := preInitQuiet(0, "tcg", debug, ""); got < 5*17*time.Second {
		t.Errorf("a debug kernel under TCG may be silent %s, too close to the 17 s one was", got)
	}
}

// The default boot limit grows for a debug kernel; one the user gave stays.
func TestBootTimeout(t *testing.T) {
	debug := []string{"CONFIG_KASAN"}
	for _, tc := range []struct {
		asked time.Duration
		debug []string
		want  time.Duration
	}{
		{DefaultTimeout, nil, DefaultTimeout},
		{DefaultTimeout, debug, 4 * DefaultTimeout},
		{time.Minute, debug, time.Minute},
	} {
		if got, why := bootTimeout(tc.asked, tc.debug, time.Minute, false); got != tc.want || (got != tc.asked) != (why != "") {
			t.Errorf("bootTimeout(%s, %v) = %s, %q; want %s", tc.asked, tc.debug, got, why, tc.want)
		}
	}
}

// A torture run's boot may take its duration on top.
func TestBootTimeoutTortured(t *testing.T) {
	got, why := bootTimeout(DefaultTimeout, []string{"CONFIG_KASAN"}, 10*time.Minute, true)
	if got != 30*time.Minute || why != "boot limit 30m0s (5m0s x4 for a debug kernel + 10m0s of torture)" {
		t.Errorf("bootTimeout() = %s, %q", got, why)
	}
}

// A debug kernel keeps RCU's normal grace periods.
func TestKernelArgsOfADebugKernel(t *testing.T) {
	if got := (Options{}).kernelArgs(contract.BootPlan{Name: "default"}, results.Derived{Debug: []string{"CONFIG_KASAN"}}); slices.Contains(got, "rcupdate.rcu_expedited=1") {
		t.Errorf("kernelArgs() of a debug kernel = %q", got)
	}
}

// Under TCG a debug kernel's lockup and stall detectors wait two minutes.
func TestKernelArgsOfAnEmulatedDebugKernel(t *testing.T) {
	debug := results.Derived{Debug: []string{"CONFIG_KASAN"}, Emulated: true}
	got := (Options{}).kernelArgs(contract.BootPlan{Name: "default"}, debug)
	if !slices.Contains(got, "watchdog_thresh=60") || !slices.Contains(got, "rcupdate.rcu_cpu_stall_timeout=120") {
		t.Errorf("kernelArgs() = %q", got)
	}
	debug.Emulated = false
	if got := (Options{}).kernelArgs(contract.BootPlan{Name: "default"}, debug); slices.Contains(got, "watchdog_thresh=60") {
		t.Errorf("kernelArgs() under KVM = %q", got)
	}
}
