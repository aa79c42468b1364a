// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/kernels"
	"github.com/ftrace-stackmap/conformance/internal/labels"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// What a fake QEMU does with the kernel it boots: die as a kernel that
// resets before its first console line, boot to the suite and report, or
// fail as QEMU itself.
const (
	dies     = "exit 0"
	boots    = "cat \"$CONSOLE\"; exit 0"
	qemuFail = "echo 'qemu-system-x86_64: could not load kernel' >&2; exit 1"
)

// routeQEMU is a fake QEMU: the firmware's lines, then what pvh says for
// the unpacked vmlinux (*.elf) and bz for the bzImage; each boot's kernel
// is logged as it starts and ends, in log.
func routeQEMU(t *testing.T, version, pvh, bz string) (bin, log string) {
	t.Helper()
	dir := t.TempDir()
	console := filepath.Join(dir, "console")
	if err := os.WriteFile(console, []byte(consoleOf(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	log = filepath.Join(dir, "boots.log")
	boot := "CONSOLE=" + console + "\nk=; prev=\nfor a in \"$@\"; do [ \"$prev\" = -kernel ] && k=$a; prev=$a; done\n" +
		"echo \"start $k\" >>" + log + "\nsleep 0.2\n" +
		"printf '\\033c\\033[2J\\033[0mSeaBIOS (version test)\\r\\nBooting from ROM..'\n" +
		"echo \"end $k\" >>" + log + "\n" +
		"case $k in *.elf) " + pvh + " ;; *) " + bz + " ;; esac\n"
	return fakeQEMUBin(t, version, boot), log
}

// consoleOf is a guest's console that reports BASE-ONOFF-01 passed.
func consoleOf(t *testing.T) string {
	return console(t, ginkgoReport(t, types.SpecStatePassed, ""), 0)
}

// routeRun is a run of an x86 bzImage unpacked for PVH, at the point of
// booting, its route chosen in rn: its boots are made by QEMU, bin.
func routeRun(t *testing.T, rn *Runner, cache, bin string, notes *bytes.Buffer, boots ...string) *run {
	t.Helper()
	a := arch.MustLookup("x86_64")
	req := results.Request{Arch: a, Labels: labels.MustParse("BASE-ONOFF-01 || SM-BOOT-02"), Timeout: time.Minute}
	dir := t.TempDir()
	r := &run{
		o: Options{Request: req, CacheDir: cache, Boots: boots, Lanes: 2, Progress: progress.Quiet(notes, "")},
		m: qemu.Machine{Arch: a, Binary: bin}.WithAccel(qemu.Accel{Name: "tcg"}), machine: "QEMU",
		res: &results.Result{Request: req, Derived: results.Derived{Timeout: req.Timeout}, Dir: dir}, console: results.NewConsole(dir), bootQuiet: 5 * time.Second,
		base: filepath.Join(t.TempDir(), "base.cpio"),
		specs: types.SpecReports{
			{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[BASE-ONOFF-01] toggles", LeafNodeLabels: []string{"BASE-ONOFF-01"}},
			{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[SM-BOOT-02] bits", LeafNodeLabels: []string{"SM-BOOT-02", "needs-boot"}},
		},
	}
	os.WriteFile(r.base, nil, 0o644)
	r.chooseRoute(rn, &kernels.Kernel{Path: "/k/bzImage", Bootable: "/k/vmlinux.elf", PVH: true, SHA256: "aaaa"})
	r.describeMachine()
	return r
}

// booted are the kernels a fake QEMU's boots started and ended with, in
// order.
func booted(t *testing.T, log string) []string {
	t.Helper()
	data, _ := os.ReadFile(log)
	os.Remove(log)
	return strings.Fields(strings.ReplaceAll(string(data), "/k/", ""))
}

// routeFiles are the answers kept in the cache.
func routeFiles(t *testing.T, cache string) []string {
	files, _ := filepath.Glob(filepath.Join(cache, "boot-route", "*.json"))
	return files
}

// A kernel whose PVH route dies before its first console line (QEMU exits
// after the firmware) is booted from its bzImage: the first boot, made
// alone, again from the bzImage, and every boot after it; the PVH boot's
// console and command are kept beside, the machine line says why, and the
// answer is kept, so that the next run (this process or another) boots
// the bzImage from the start. Another QEMU decides afresh.
func TestRouteFallsBackToTheBzImage(t *testing.T) {
	cache := t.TempDir()
	bin, log := routeQEMU(t, "QEMU emulator version 9.9.9", dies, boots)
	rn := new(Runner)
	var notes bytes.Buffer
	r := routeRun(t, rn, cache, bin, &notes, "default", "bits-12")
	if !r.route.open || r.kernel != "/k/vmlinux.elf" {
		t.Fatalf("a kernel never booted: route %+v, kernel %s; want its first boot to decide, through PVH", r.route, r.kernel)
	}
	if err := r.bootAll(context.Background(), r.o.plans()); err != nil {
		t.Fatal(err)
	}
	// The first boot alone (both of its tries), then the other from the bzImage.
	want := []string{"start", "vmlinux.elf", "end", "vmlinux.elf", "start", "bzImage", "end", "bzImage", "start", "bzImage", "end", "bzImage"}
	if got := booted(t, log); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("boots %q, want %q", got, want)
	}
	const why = "booting the bzImage: the PVH route of vmlinux died before its first console line (QEMU exited (status 0) before the init started)"
	if !strings.Contains(r.res.Machine, "QEMU; "+why) || r.kernel != "/k/bzImage" {
		t.Errorf("machine %q, kernel %s; want %q and the bzImage", r.res.Machine, r.kernel, why)
	}
	if !strings.Contains(notes.String(), "note: boot default: the PVH route of vmlinux died before its first console line (QEMU exited (status 0) before the init started): booting the bzImage instead") {
		t.Errorf("notes %q", notes.String())
	}
	if len(r.res.Unjudged) != 0 || len(r.reports) != 2 {
		t.Errorf("unjudged %v, %d reports; want both boots judged", r.res.Unjudged, len(r.reports))
	}
	dir := filepath.Join(r.res.Dir, "boots", "default")
	pvhConsole, _ := os.ReadFile(filepath.Join(dir, "console-pvh.log"))
	pvhCommand, _ := os.ReadFile(filepath.Join(dir, "qemu-command-pvh.txt"))
	command, _ := os.ReadFile(filepath.Join(dir, "qemu-command.txt"))
	if !bytes.HasSuffix(pvhConsole, []byte("Booting from ROM..")) || !bytes.Contains(pvhCommand, []byte("-kernel /k/vmlinux.elf")) ||
		!bytes.Contains(command, []byte("-kernel /k/bzImage")) {
		t.Errorf("boot default's files: console-pvh.log %q, qemu-command-pvh.txt %q, qemu-command.txt %q", pvhConsole, pvhCommand, command)
	}
	runConsole, _ := os.ReadFile(filepath.Join(r.res.Dir, "console.log"))
	if !bytes.Contains(runConsole, []byte("===== boot default through PVH, which died before the kernel's first console line: ")) {
		t.Errorf("the run's console does not show the PVH boot:\n%s", runConsole)
	}
	files := routeFiles(t, cache)
	if len(files) != 1 {
		t.Fatalf("cache holds %v, want one answer", files)
	}
	data, _ := os.ReadFile(files[0])
	t.Logf("%s:\n%s", filepath.Base(files[0]), data)
	for _, want := range []string{`"pvh_boots": false`, `"how": "QEMU exited (status 0) before the init started"`, `"accel": "tcg"`,
		`"bzimage_sha256": "aaaa"`, `"qemu": "QEMU emulator version 9.9.9"`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("the answer's file lacks %s", want)
		}
	}

	for _, proc := range []string{"the same process", "another process"} {
		if proc == "another process" {
			rn = new(Runner)
		}
		notes.Reset()
		r = routeRun(t, rn, cache, bin, &notes, "default", "bits-12")
		if r.route.open || r.kernel != "/k/bzImage" || !strings.Contains(r.res.Machine, bzImageRoute+" (remembered from a boot of ") {
			t.Errorf("%s: route %+v, kernel %s, machine %q; want the bzImage, remembered", proc, r.route, r.kernel, r.res.Machine)
		}
		if !strings.Contains(notes.String(), "remove "+files[0]+" to try PVH again") {
			t.Errorf("%s: notes %q; want the answer's file named", proc, notes.String())
		}
		if err := r.bootAll(context.Background(), r.o.plans()); err != nil {
			t.Fatal(err)
		}
		if got := booted(t, log); strings.Contains(strings.Join(got, " "), "vmlinux") {
			t.Errorf("%s: boots %q; want none through PVH", proc, got)
		}
	}

	// Another QEMU, a kernel changed, or a file that does not read: the
	// first boot decides again.
	other, _ := routeQEMU(t, "QEMU emulator version 10.0.0", dies, boots)
	os.WriteFile(files[0]+".bad", nil, 0o644)
	for what, r := range map[string]*run{
		"another QEMU": routeRun(t, new(Runner), cache, other, &notes, "default"),
		"no cache":     routeRun(t, new(Runner), t.TempDir(), bin, &notes, "default"),
	} {
		if !r.route.open || r.kernel != "/k/vmlinux.elf" {
			t.Errorf("%s: route %+v, kernel %s; want it decided again", what, r.route, r.kernel)
		}
	}
	for _, bad := range []string{`{"pvh_boots": fal`, "", `{"pvh_boots": false, "booted": "2026-01-01T00:00:00Z", "inputs": {}}`} {
		os.WriteFile(files[0], []byte(bad), 0o644)
		if r := routeRun(t, new(Runner), cache, bin, &notes, "default"); !r.route.open {
			t.Errorf("file %q: route %+v; want it decided again", bad, r.route)
		}
	}
}

// A kernel that prints through PVH keeps that route, decided by its first
// boot and kept: the next run boots through PVH from the start, its boots
// side by side at once.
func TestRouteKeptWhenPVHBoots(t *testing.T) {
	cache := t.TempDir()
	bin, log := routeQEMU(t, "QEMU emulator version 9.9.9", boots, dies)
	var notes bytes.Buffer
	r := routeRun(t, new(Runner), cache, bin, &notes, "default", "bits-12")
	if err := r.bootAll(context.Background(), r.o.plans()); err != nil {
		t.Fatal(err)
	}
	if got := booted(t, log); strings.Contains(strings.Join(got, " "), "bzImage") {
		t.Errorf("boots %q; want none from the bzImage", got)
	}
	if want := "QEMU; " + pvhRoute + " (the first boot's kernel printed through PVH)"; r.res.Machine != want || notes.Len() != 0 {
		t.Errorf("machine %q, notes %q; want %q and no note", r.res.Machine, notes.String(), want)
	}
	files := routeFiles(t, cache)
	if data, _ := os.ReadFile(files[0]); len(files) != 1 || !bytes.Contains(data, []byte(`"pvh_boots": true`)) {
		t.Fatalf("kept %v: %s", files, data)
	}
	r = routeRun(t, new(Runner), cache, bin, &notes, "default", "bits-12")
	if r.route.open || r.kernel != "/k/vmlinux.elf" || !strings.Contains(r.res.Machine, pvhRoute+" (remembered from a boot of ") {
		t.Errorf("another process: route %+v, kernel %s, machine %q; want PVH, remembered", r.route, r.kernel, r.res.Machine)
	}
}

// A bzImage that dies as silently tells nothing of the route: nothing is
// kept, and the boot's death is reported as the bzImage's.
func TestRouteBothDie(t *testing.T) {
	cache := t.TempDir()
	bin, log := routeQEMU(t, "QEMU emulator version 9.9.9", dies, dies)
	var notes bytes.Buffer
	r := routeRun(t, new(Runner), cache, bin, &notes, "default")
	if err := r.bootAll(context.Background(), r.o.plans()); err != nil {
		t.Fatal(err)
	}
	if got := booted(t, log); len(got) != 8 {
		t.Errorf("boots %q; want PVH then the bzImage", got)
	}
	if files := routeFiles(t, cache); len(files) != 0 {
		t.Errorf("kept %v; want nothing", files)
	}
	if !strings.HasSuffix(r.res.Machine, ", and the bzImage printed nothing either (nothing remembered)") {
		t.Errorf("machine %q", r.res.Machine)
	}
	if len(r.res.Unjudged) != 1 || r.res.Unjudged[0].Died != "QEMU exited (status 0) before the init started "+
		"(booted from the bzImage: the PVH route of vmlinux died before its first console line)" {
		t.Errorf("unjudged %+v; want the default boot's death, on the bzImage route", r.res.Unjudged)
	}
}

// QEMU's own error on the bzImage route names that route.
func TestRouteQEMUsErrorOnTheBzImage(t *testing.T) {
	bin, _ := routeQEMU(t, "QEMU emulator version 9.9.9", dies, qemuFail)
	var notes bytes.Buffer
	r := routeRun(t, new(Runner), t.TempDir(), bin, &notes, "default")
	err := r.bootAll(context.Background(), r.o.plans())
	if err == nil || !strings.HasPrefix(err.Error(), "boot default from the bzImage: ") || !strings.Contains(err.Error(), "could not load kernel") {
		t.Errorf("bootAll: %v; want QEMU's error on the bzImage route", err)
	}
	if !strings.HasSuffix(r.res.Machine, " (nothing remembered: the bzImage's boot failed)") {
		t.Errorf("machine %q", r.res.Machine)
	}
}

// QEMU's own error on the PVH route is not the kernel's: no bzImage boot,
// nothing kept, the error reported as ever.
func TestRouteNotDecidedByQEMUsError(t *testing.T) {
	cache := t.TempDir()
	bin, log := routeQEMU(t, "QEMU emulator version 9.9.9", qemuFail, boots)
	var notes bytes.Buffer
	r := routeRun(t, new(Runner), cache, bin, &notes, "default")
	err := r.bootAll(context.Background(), r.o.plans())
	var ie *InfraError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "could not load kernel") {
		t.Errorf("bootAll: %v; want QEMU's error", err)
	}
	if got := booted(t, log); strings.Contains(strings.Join(got, " "), "bzImage") {
		t.Errorf("boots %q; want none from the bzImage", got)
	}
	if files := routeFiles(t, cache); len(files) != 0 || r.route.open || r.kernel != "/k/vmlinux.elf" {
		t.Errorf("kept %v, route %+v, kernel %s; want nothing kept, decided for the run", files, r.route, r.kernel)
	}
}

// A user's ELF vmlinux has no bzImage to fall back to: a boot that dies
// before its first console line says what to give instead. arm64 kernels
// and a vmlinux built here have no route to choose.
func TestRouteOfAnELFVmlinux(t *testing.T) {
	bin, _ := routeQEMU(t, "QEMU emulator version 9.9.9", dies, dies)
	var notes bytes.Buffer
	r := routeRun(t, new(Runner), t.TempDir(), bin, &notes, "default")
	r.o.Kernel = "/k/vmlinux.elf"
	r.chooseRoute(new(Runner), &kernels.Kernel{Path: "/k/vmlinux.elf", Bootable: "/k/vmlinux.elf", PVH: true, SHA256: "aaaa"})
	if r.route.open || r.route.why != "" || !r.route.elfOnly {
		t.Fatalf("route %+v; want none to choose", r.route)
	}
	if err := r.bootAll(context.Background(), r.o.plans()); err != nil {
		t.Fatal(err)
	}
	if len(r.res.Unjudged) != 1 || !strings.Contains(r.res.Unjudged[0].Died, "QEMU exited (status 0) before the init started, before the kernel's first console line; "+
		"vmlinux.elf is an ELF vmlinux, which boots only through PVH, where some kernels die (a debug.config build): give its bzImage") {
		t.Errorf("unjudged %+v; want the bzImage named", r.res.Unjudged)
	}
	for what, k := range map[string]*kernels.Kernel{
		"arm64":                {Path: "/k/Image", Bootable: "/k/Image", SHA256: "aaaa"},
		"a vmlinux built here": {Path: "/cache/vmlinux", Bootable: "/cache/vmlinux", PVH: true, SHA256: "aaaa"},
	} {
		r.o.Kernel = ""
		r.chooseRoute(new(Runner), k)
		if r.route.open || r.route.elfOnly || r.route.bzImage != "" {
			t.Errorf("%s: route %+v; want none", what, r.route)
		}
	}
}

// The answer's file is for a reader too: its fields say what decided it.
func TestRouteAnswerFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "boot-route", "k.json")
	in := routeInputs{BzImageSHA256: "aaaa", QEMU: "QEMU emulator version 9.9.9"}
	a := &routeAnswer{How: "QEMU exited (status 0) before the init started", Accel: "tcg", Booted: time.Now(), Inputs: in}
	if err := writeRouteAnswer(path, a, progress.Discard()); err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &fields); err != nil || len(fields) != 5 {
		t.Errorf("%s: %v", data, err)
	}
	if got := readRouteAnswer(path, in); got == nil || got.PVHBoots || got.How != a.How {
		t.Errorf("read back %+v", got)
	}
	if got := readRouteAnswer(path, routeInputs{BzImageSHA256: "bbbb", QEMU: in.QEMU}); got != nil {
		t.Errorf("another kernel's answer: %+v", got)
	}
}
