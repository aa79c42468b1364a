// SPDX-License-Identifier: GPL-2.0-only

package bench

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/page"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/results/golden"
)

func TestMedian(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median = %v", m)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median = %v", m)
	}
}

func TestTableComparesSameImageOnly(t *testing.T) {
	r := &Report{Image: "debian-6.12", Reps: 3, Host: "2 CPUs",
		Figures: []Figure{{Name: "arm64 qemu-test, warm", Value: 4.4, Unit: "s"}},
		Targets: []Target{{Name: "arm64 full run", Value: 4.4, Limit: 3, Met: false}, {Name: "both", Value: 5, Limit: 6, Met: true}}}
	path := filepath.Join(t.TempDir(), "last.json")
	prev := &Report{Image: "debian-6.12", Figures: []Figure{{Name: "arm64 qemu-test, warm", Value: 4, Unit: "s"}}}
	if err := prev.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	met, missed := r.WriteTable(&b, loaded)
	if met != 1 || missed != 1 {
		t.Errorf("met %d missed %d", met, missed)
	}
	for _, want := range []string{"4.40s           4.00s    +10.0%", "NOT MET"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	loaded.Image = "reference"
	r.WriteTable(&b, loaded)
	if strings.Contains(b.String(), "%") || !strings.Contains(b.String(), "not compared") {
		t.Errorf("compared figures of another image:\n%s", b.String())
	}
	if r, err := Load(filepath.Join(t.TempDir(), "none.json")); r != nil || err != nil {
		t.Errorf("missing file: %v %v", r, err)
	}
	// The sanitized lane: not compared with the plain lane's figures, and
	// the plain lane's targets shown but not judged; a target of every
	// lane is judged.
	b.Reset()
	loaded.Image, r.Lane = r.Image, "sanitized (debug.config)"
	if met, missed := r.WriteTable(&b, loaded); met != 0 || missed != 0 || r.Unjudged() != 2 {
		t.Errorf("sanitized lane: met %d missed %d, unjudged %d; want the plain lane's targets not judged", met, missed, r.Unjudged())
	}
	for _, want := range []string{"IMAGE=debian-6.12, sanitized (debug.config)", "of another lane: not compared", "not judged: the plain lane's target"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("sanitized table lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "%") || strings.Contains(b.String(), "NOT MET") {
		t.Errorf("sanitized table compared or judged:\n%s", b.String())
	}
	b.Reset()
	r.Targets = append(r.Targets, everyLane(limit("arm64 per-boot overhead", 4, 3)))
	if met, missed := r.WriteTable(&b, loaded); met != 0 || missed != 1 || !strings.Contains(b.String(), "NOT MET") {
		t.Errorf("sanitized lane, a target of every lane: met %d missed %d\n%s", met, missed, b.String())
	}
}

func TestFloorBootSwapsInitrdAndCatchesPanics(t *testing.T) {
	ok := []string{"/bin/sh", "-c", `test "$2" = floor.cpio`, "sh", "-initrd", "suite.cpio"}
	if _, err := floorBoot(context.Background(), ok, "floor.cpio", 5*time.Second); err != nil {
		t.Errorf("initrd not swapped: %v", err)
	}
	panicked := []string{"/bin/sh", "-c", "echo Kernel panic - not syncing", "sh", "-initrd", "x"}
	if _, err := floorBoot(context.Background(), panicked, "y", 5*time.Second); err == nil {
		t.Error("a panic was taken for a floor")
	}
}

// TestGuestPartsFromTheKernelLog reads each part of a boot from the marks
// in its kept kernel log, and refuses a log without them.
func TestGuestPartsFromTheKernelLog(t *testing.T) {
	dir := t.TempDir()
	log := `<6>[    0.300000] Unpacking initramfs...
<6>[    0.450000] Freeing initrd memory: 13632K
<6>[    0.700000] Run /init as init process
<14>[    0.800000] smct-mark: mounted
<14>[    0.850000] smct-mark: suite-exec
<14>[    1.150000] smct-mark: suite-main
<14>[    1.200000] smct-mark: setup
<14>[    1.300000] smct-mark: specs
<14>[    3.300000] smct-mark: report
<14>[    3.400000] smct-mark: suite-exit
<14>[    3.450000] smct-mark: framed
<14>[    8.400000] smct-mark: checked
`
	write := func(plan, text string) {
		os.MkdirAll(filepath.Join(dir, "boots", plan), 0o755)
		os.WriteFile(filepath.Join(dir, "boots", plan, "dmesg.txt"), []byte(text), 0o644)
	}
	write("default", log)
	write("old", strings.Replace(log, "smct-mark: report", "something else", 1))
	res := &results.Result{Dir: dir}
	got, err := guestParts(res, results.BootResult{Plan: contract.BootPlan{Name: "default"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"the kernel unpacks the initramfs": 0.15, "the init starts and mounts": 0.1, "the suite binary starts": 0.3, specsPart: 2, transportPart: 0.05, checkersPart: 4.95}
	for name, w := range want {
		if math.Abs(got[name]-w) > 1e-9 {
			t.Errorf("%s: %v, want %v", name, got[name], w)
		}
	}
	if _, err := guestParts(res, results.BootResult{Plan: contract.BootPlan{Name: "old"}}); err == nil || !strings.Contains(err.Error(), "lacks the guest's marks specs and report") {
		t.Errorf("a log without the report mark: %v", err)
	}
}

// The torture's figure sums its actors' operations, not its rounds.
func TestActorOps(t *testing.T) {
	notes := []string{
		"actor                  operations  errors  first failure",
		"workload-0             120         0       -",
		"reader stack_map_bin   40          0       -",
		"deep stacks            0           0       did not run: no VLAN devices",
		"round                  11          0       -",
		"11 rounds, the map full in 3; kmemleak listed 0 objects",
		"judged only partly",
	}
	if got := actorOps(notes); got != 160 {
		t.Errorf("actorOps() = %d, want 160", got)
	}
}

// The bench's page from figures of a bench (a copy of a last.json), held to a golden
// file that the browser test opens.
func TestPageGolden(t *testing.T) {
	r, err := Load("testdata/report.json")
	if err != nil {
		t.Fatal(err)
	}
	html, err := page.Render(r.Page(nil))
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "bench/"+page.File, string(html))
}
