// SPDX-License-Identifier: GPL-2.0-only

package review

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kchoice"
	"github.com/ftrace-stackmap/conformance/internal/page"
	"github.com/ftrace-stackmap/conformance/internal/results/golden"
)

// goldenWalk is a series of four patches walked on two arches: builds
// cached and made here, a build that fails, a boot that dies, a run without
// a verdict, a patch that does not apply and one not made after it.
func goldenWalk() *Walk {
	w := &Walk{Series: Series{Name: "stackmap-v5.mbox", Base: "v6.19-rc2"}, Tree: "/src/linux",
		Commit: "0123456789abcdef0123456789abcdef01234567", Arches: []string{"x86_64", "arm64"}, Steps: map[string][]*Step{},
		Started: time.Date(2026, 11, 22, 16, 45, 52, 0, time.UTC), Wall: 41*time.Minute + 7*time.Second}
	for _, s := range []string{"tracing: Add the stack map", "tracing: Export the stack map as binary",
		"tracing: Add the stackmap.bits boot parameter, and with it a long subject to clip", "tracing: Document the stack map"} {
		w.Series.Patches = append(w.Series.Patches, Patch{Subject: s})
	}
	// The base has none of the feature; the first patch brings the nodes.
	nodes := []string{"SM-NODE-01", "SM-NODE-02", "SM-NODE-03", "SM-TEXT-01", "SM-TEXT-02", "SM-STAT-01", "SM-STAT-02", "SM-RESET-01", "SM-RESET-02"}
	judged := func(k int, arch string, wall time.Duration, pairs ...string) *Step {
		c := classes(pairs...)
		for _, id := range nodes {
			c[id] = contract.Unsupported
			if k > 0 {
				c[id] = contract.Pass
			}
		}
		why := map[string]string{}
		for id, class := range c {
			switch class {
			case contract.Unsupported:
				why[id] = "kernel has no stackmap feature (no options/stackmap, no stack_map)"
			case contract.Unresolved:
				why[id] = "cannot write \"1\" to options/stackmap: device or resource busy"
			case contract.Fail:
				why[id] = "write \"0\" to stack_map with tracing on: accepted"
			}
		}
		return &Step{K: k, Arch: arch, Build: "ok", Boot: "ok", Wall: wall, Cached: k == 0, built: k > 0, Classes: c, Reasons: why}
	}
	notApplied := func(arch string) []*Step {
		return []*Step{
			{K: 3, Arch: arch, Build: "does not apply: patch failed: kernel/trace/trace_stackmap.c:12",
				Problems: []string{"patch 3/4 does not apply: patch failed: kernel/trace/trace_stackmap.c:12"}},
			{K: 4, Arch: arch, Build: "not made: an earlier patch does not apply"},
		}
	}
	x := append([]*Step{
		judged(0, "x86_64", 95*time.Second, "BASE-ONOFF-01", "PASS", "SM-BIN-01", "UNSUPPORTED", "SM-OPT-01", "UNSUPPORTED"),
		judged(1, "x86_64", 7*time.Minute, "BASE-ONOFF-01", "PASS", "SM-BIN-01", "UNSUPPORTED", "SM-OPT-01", "UNRESOLVED"),
		judged(2, "x86_64", 6*time.Minute, "BASE-ONOFF-01", "FAIL", "SM-BIN-01", "FAIL", "SM-OPT-01", "PASS"),
	}, notApplied("x86_64")...)
	x[1].Warnings = []string{"kernel/trace/trace_stackmap.c:120:7: warning: unused variable 'n' [-Wunused-variable]"}
	x[2].Decoder = "DIFFERS"
	x[2].Problems = []string{"the tree's stackmap_dump.py disagrees with the kernel: stack 7: depth 5, the kernel's 6"}
	a := append([]*Step{
		judged(0, "arm64", 2*time.Minute, "BASE-ONOFF-01", "PASS", "SM-BIN-01", "UNSUPPORTED", "SM-OPT-01", "UNSUPPORTED"),
		{K: 1, Arch: "arm64", Build: "ok", Boot: "Kernel panic - not syncing: stackmap: cannot allocate the map", Wall: 9 * time.Minute, built: true,
			Problems: []string{"does not boot: Kernel panic - not syncing: stackmap: cannot allocate the map"}},
		{K: 2, Arch: "arm64", Build: "ok", Wall: 8 * time.Minute, built: true,
			Infra: "boot default: QEMU exited: qemu-system-aarch64: cannot set up guest memory 'mach-virt.ram': Cannot allocate memory"},
	}, notApplied("arm64")...)
	w.Steps["x86_64"], w.Steps["arm64"] = x, a
	judge(x, 4)
	judge(a, 4)
	return w
}

// TestWalkGolden holds the walk's table, KTAP and evidence to testdata.
func TestWalkGolden(t *testing.T) {
	w := goldenWalk()
	w.Dir = t.TempDir()
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	names := []string{"series.txt", "series-ktap.txt", "evidence-cover.txt", page.File}
	for k := 1; k <= len(w.Series.Patches); k++ {
		names = append(names, fmt.Sprintf("evidence-patch-%d.txt", k))
	}
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(w.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, "walk/"+name, string(b))
	}
}

// A walk whose prefixes were built sanitized says so in its table's
// header and in its reply, whose command walks it sanitized again.
func TestSanitizedWalkSaysSo(t *testing.T) {
	w := goldenWalk()
	w.Sanitized = kchoice.Sanitized.Words()
	if text := w.Text(); !strings.Contains(text, "on /src/linux at v6.19-rc2 (0123456789ab), sanitized (debug.config)\n") {
		t.Errorf("table:\n%s", text)
	}
	r := w.Reply(contract.ProfileV4)
	if !slices.Contains(r.What, [2]string{"config", "sanitized (debug.config)"}) || !strings.HasSuffix(r.Reproduce[0], " SANITIZE=1") {
		t.Errorf("reply: what %v, reproduce %v", r.What, r.Reproduce)
	}
	if plain := goldenWalk().Reply(contract.ProfileV4); strings.Contains(fmt.Sprint(plain.What, plain.Reproduce), "anitize") {
		t.Errorf("a plain walk's reply: %v %v", plain.What, plain.Reproduce)
	}
}
