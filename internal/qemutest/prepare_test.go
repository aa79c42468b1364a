// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/results"
)

// Input a run cannot use is refused by check, which installs, probes,
// fetches, builds and boots nothing: a machine without QEMU refuses it
// the same way.
func TestCheckRefusesBadInput(t *testing.T) {
	host, foreign := "x86_64", "arm64"
	if runtime.GOARCH == "arm64" {
		host, foreign = foreign, host
	}
	ok := Options{Request: results.Request{Arch: arch.MustLookup(host), Profile: "v4"}}
	for _, tc := range []struct {
		name string
		edit func(o *Options)
		want string // "" when accepted
	}{
		{"a good run", func(o *Options) {}, ""},
		{"KVM insisted on, the host's arch: probed later", func(o *Options) { o.Accel = "kvm" }, ""},
		{"no arch", func(o *Options) { o.Arch = arch.Arch{} }, `ARCH=""`},
		{"an accel QEMU has not", func(o *Options) { o.Accel = "hvf" }, `ACCEL="hvf": want kvm or tcg`},
		{"KVM for another arch", func(o *Options) { o.Arch, o.Accel = arch.MustLookup(foreign), "kvm" }, "is not the host's arch"},
		{"a profile", func(o *Options) { o.Profile = "v9" }, `PROFILE="v9"`},
		{"a requirement", func(o *Options) { o.Require = "all" }, `REQUIRE="all"`},
		{"a parameter a boot sets", func(o *Options) { o.BootArgs = []string{"ftrace_stackmap.bits=14"} }, "which boot bits-12 sets itself"},
		{"two kernels", func(o *Options) { o.Kernel, o.Tree = "/k", "/t" }, "KERNEL= and TREE= name two kernels"},
		{"a tree that is not there", func(o *Options) { o.Tree = t.TempDir() }, "is not a kernel source tree"},
		{"a silence limit below 0", func(o *Options) { o.BootQuiet = -time.Second }, "BOOT_QUIET=-1s: want a duration above 0"},
	} {
		o := ok
		tc.edit(&o)
		_, err := o.check(o.plans())
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if _, isInfra := err.(*InfraError); err != nil && !isInfra {
			t.Errorf("%s: %T, want an *InfraError", tc.name, err)
		}
	}
}
