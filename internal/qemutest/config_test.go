// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"slices"
	"testing"
	"time"

	"github.com/u-root/u-root/pkg/cpio"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/contract"
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
	cfg, extra := o.runConfig("SM-NODE-01", nil)
	want := []string{"-ginkgo.v", "-ginkgo.no-color", "-ginkgo.fail-on-empty", "-ginkgo.seed=42", "-smct.profile=v3",
		"-smct.workload=/workload", "-smct.capture=/tmp/capture", "-ginkgo.label-filter=SM-NODE-01"}
	if !slices.Equal(cfg.Args, want) {
		t.Errorf("suite args %q, want %q", cfg.Args, want)
	}
	if cfg.TimeoutSeconds != 280 || cfg.Ftracetest != nil || extra != nil {
		t.Errorf("timeout %d, ftracetest %v, extra %v", cfg.TimeoutSeconds, cfg.Ftracetest, extra)
	}
	// A TIMEOUT too short for any run still gives the guest a whole second.
	o.Timeout = time.Second
	if cfg, _ := o.runConfig("", nil); cfg.TimeoutSeconds != 1 {
		t.Errorf("TIMEOUT=1s: the guest has %d s, want 1", cfg.TimeoutSeconds)
	}
	st := &selftestSetup{tests: []string{"a.tc"}, records: []cpio.Record{{}}}
	if cfg, extra := o.runConfig("", st); !slices.Equal(cfg.Ftracetest, st.tests) || len(extra) != 1 {
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
		{contract.BootPlan{Name: "default"}, []string{"trace_options=noannotate", "rcupdate.rcu_expedited=1", "loglevel=8"}},
		{contract.BootPlan{Name: "bits-12", Append: []string{"ftrace_stackmap.bits=12"}},
			[]string{"trace_options=noannotate", "rcupdate.rcu_expedited=1", "ftrace_stackmap.bits=12", "loglevel=8"}},
	} {
		if got := o.kernelArgs(tc.plan); !slices.Equal(got, tc.want) {
			t.Errorf("boot %s: %q, want %q", tc.plan.Name, got, tc.want)
		}
	}
	if len(defaultBootArgs) != 2 {
		t.Errorf("kernelArgs changed the suite's own words: %q", defaultBootArgs)
	}
}

// Only a boot with parameters of its own turns earlycon on: it may die
// parsing them.
func TestQEMUBoot(t *testing.T) {
	o := Options{Request: results.Request{Timeout: time.Minute}, Mem: "1024", QEMUOpts: []string{"-smp", "2"}}
	m := qemu.MachineFor(arch.MustLookup("x86_64"))
	for _, tc := range []struct {
		plan  contract.BootPlan
		early bool
	}{
		{contract.BootPlan{Name: "default"}, false},
		{contract.BootPlan{Name: "stress", Append: []string{"ftrace_stackmap.bits=10"}, CPUs: 2}, true},
	} {
		b := o.qemuBoot(m, "/k", "/i", "/run/boots/"+tc.plan.Name, tc.plan)
		if b.EarlyConsole != tc.early || b.CPUs != tc.plan.CPUs || b.ConsoleLog != "/run/boots/"+tc.plan.Name+"/console.log" {
			t.Errorf("boot %s: earlycon %v, CPUs %d, console %s", tc.plan.Name, b.EarlyConsole, b.CPUs, b.ConsoleLog)
		}
		if b.BootQuiet != BootQuiet || b.RunQuiet != RunQuiet || b.Timeout != time.Minute || b.Memory != "1024" || !slices.Equal(b.Extra, o.QEMUOpts) {
			t.Errorf("boot %s: %+v", tc.plan.Name, b)
		}
	}
}
