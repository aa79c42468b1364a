// SPDX-License-Identifier: GPL-2.0-only

package lava

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ftrace-stackmap/conformance/internal/apt"
	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// testJob is a job of two boots over artefacts in dir: the default boot
// and one with a parameter on two CPUs.
func testJob(t *testing.T, dir, archName string) Job {
	a := arch.MustLookup(archName)
	art := func(name string) Artefact {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		return Artefact{Path: p, SHA256: strings.Repeat("ab", 32)}
	}
	m := qemu.MachineFor(a).WithAccel(qemu.Accel{Name: "tcg"})
	return Job{Name: "stackmap conformance reference " + a.Name, Arch: a, Machine: m, Memory: "512", Kernel: art("kernel.gz"),
		Metadata: map[string]string{"stackmap.seed": "7"},
		Blocks: []Block{
			{Name: "default", CommandLine: "console=" + a.Console + " panic=-1", Initrd: art("initrd-default.cpio.gz"), Timeout: 5 * time.Minute},
			{Name: "stress", CommandLine: "console=" + a.Console + " ftrace_stackmap.bits=10", CPUs: 2, Initrd: art("initrd-stress.cpio.gz"), Timeout: 90 * time.Second},
		}}
}

// writeTestJob writes a test job's files as Write does, with a notify
// callback unless notify is "".
func writeTestJob(t *testing.T, archName, notify string) *Files {
	dir := t.TempDir()
	j := testJob(t, dir, archName)
	j.Notify = notify
	job, err := j.YAML()
	if err != nil {
		t.Fatal(err)
	}
	device, err := j.Device()
	if err != nil {
		t.Fatal(err)
	}
	f := &Files{Dir: dir, Job: filepath.Join(dir, "job.yaml"), Device: filepath.Join(dir, "device.yaml")}
	os.WriteFile(f.Job, job, 0o644)
	os.WriteFile(f.Device, device, 0o644)
	return f
}

// Each boot is a deploy, boot and test block of its own namespace: its
// kernel parameters in the kernel's image_arg, the time of its test the
// boot's, skipped on a timeout so the next boots run.
func TestJobHasABlockPerBoot(t *testing.T) {
	f := writeTestJob(t, "x86_64", "")
	data, _ := os.ReadFile(f.Job)
	var job jobFile
	if err := yaml.Unmarshal(data, &job); err != nil {
		t.Fatal(err)
	}
	if len(job.Actions) != 6 {
		t.Fatalf("%d actions, want deploy, boot and test for each of 2 boots", len(job.Actions))
	}
	d, b, tst := job.Actions[3].Deploy, job.Actions[4].Boot, job.Actions[5].Test
	if d == nil || b == nil || tst == nil || d.Namespace != "stress" || b.Namespace != "stress" || tst.Namespace != "stress" {
		t.Fatalf("second block: %+v", job.Actions[3:])
	}
	if arg := d.Images["kernel"].ImageArg; !strings.Contains(arg, `-append "console=ttyS0 ftrace_stackmap.bits=10"`) || !strings.Contains(arg, "-smp 2") {
		t.Errorf("kernel image_arg %q: want the boot's command line and its CPUs", arg)
	}
	if d.Images["ramdisk"].URL != "file://"+filepath.Join(f.Dir, "initrd-stress.cpio.gz") {
		t.Errorf("ramdisk url %q", d.Images["ramdisk"].URL)
	}
	if tst.Timeout != (limit{Seconds: 90, Skip: true}) {
		t.Errorf("test timeout %+v, want the boot's 90 s, skipped", tst.Timeout)
	}
	m := tst.Monitors[0]
	if m.Name != "stackmap_stress" || m.Fixupdict["UNRESOLVED"] != "fail" || m.Fixupdict["UNSUPPORTED"] != "skip" {
		t.Errorf("monitor %+v", m)
	}
	if job.Timeouts["job"].Minutes < 2*5+2*2+5 {
		t.Errorf("job timeout %+v is less than its blocks'", job.Timeouts["job"])
	}
	if !strings.Contains(d.Images["kernel"].ImageArg, `-append "console=ttyS0 `) || d.Images["kernel"].SHA256 == "" {
		t.Errorf("kernel %+v: want the console in its arguments, and its sha256sum", d.Images["kernel"])
	}
	// What the run tested, as the stock qemu template reads it: TCG, and
	// the machine and CPU it drops on x86_64 as extra options.
	if c := job.Context; c["arch"] != "x86_64" || c["machine"] != "q35" || c["cpu"] != "qemu64" || c["no_kvm"] != true ||
		fmt.Sprint(c["extra_options"]) != "[-machine q35 -cpu qemu64]" {
		t.Errorf("context %v", job.Context)
	}
	if job.Notify != nil {
		t.Errorf("notify %+v without -notify", job.Notify)
	}
	// lava-run reads QEMU's options from the dictionary alone: it has the
	// machine, CPU and accelerator the context states.
	if device, _ := os.ReadFile(f.Device); !strings.Contains(string(device), "- -M q35\n") ||
		!strings.Contains(string(device), "- -cpu qemu64\n") || !strings.Contains(string(device), "- -accel tcg\n") {
		t.Errorf("device dictionary:\n%s", device)
	}
}

// -notify asks the LAVA server to post the job's log and results as JSON
// when it ends, as KernelCI's jobs do.
func TestJobNotify(t *testing.T) {
	j := testJob(t, t.TempDir(), "arm64")
	j.Notify = "https://lab.example.org/callback/stackmap"
	data, err := j.YAML()
	if err != nil {
		t.Fatal(err)
	}
	var job jobFile
	if err := yaml.Unmarshal(data, &job); err != nil {
		t.Fatal(err)
	}
	want := notify{Criteria: map[string]string{"status": "finished"},
		Callback: notifyCallback{URL: j.Notify, Method: "POST", Dataset: "all", ContentType: "json"}}
	if job.Notify == nil || fmt.Sprint(*job.Notify) != fmt.Sprint(want) {
		t.Errorf("notify %+v, want %+v", job.Notify, want)
	}
	// arm64's stock template reads machine and cpu itself.
	if c := job.Context; c["machine"] != "virt" || c["cpu"] != "cortex-a57" || c["extra_options"] != nil {
		t.Errorf("context %v", c)
	}
}

// renderStock renders LAVA's stock qemu device type as a LAVA server does
// for a job (Device.load_configuration: the device's dictionary rendered
// with the job's context), and returns QEMU's command and options.
const renderStock = `
import sys, json, yaml, jinja2
from jinja2.sandbox import SandboxedEnvironment
devices, types, dictionary, context = sys.argv[1:5]
env = SandboxedEnvironment(loader=jinja2.FileSystemLoader([devices, types]), autoescape=False, trim_blocks=True)
d = yaml.safe_load(env.get_template(dictionary).render(**json.loads(context)))
p = d["actions"]["boot"]["methods"]["qemu"]["parameters"]
print(" ".join([p["command"]] + p["options"] + [str(o) for o in p.get("extra", [])]))
`

// StockTemplates is where lava-server keeps its device-type templates.
const stockTemplates = "/usr/share/lava-server/device-types"

// On a LAVA server's stock qemu device type, the job's context gives the
// QEMU the suite tested: q35 and qemu64 on x86_64 (QEMU takes the last
// -cpu), no KVM when the run chose TCG. A dictionary that sets no_kvm
// itself beats the job: the job cannot turn KVM on there.
func TestJobOnTheStockTemplate(t *testing.T) {
	if _, err := os.Stat(filepath.Join(stockTemplates, "qemu.jinja2")); err != nil {
		t.Skip("lava-server's device-type templates are not here")
	}
	py, err := python()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "stock.jinja2"), []byte("{% extends 'qemu.jinja2' %}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "tcg-only.jinja2"), []byte("{% extends 'qemu.jinja2' %}\n{% set no_kvm = True %}\n"), 0o644)
	kvm := qemu.Accel{Name: "kvm"}
	for _, tc := range []struct {
		arch       string
		accel      *qemu.Accel
		dictionary string
		want       string
	}{
		{"x86_64", nil, "stock", "qemu-system-x86_64 -nographic .* -m 512 -monitor none -machine q35 -cpu qemu64$"},
		{"x86_64", &kvm, "stock", "qemu-system-x86_64 -cpu host -enable-kvm .* -machine q35 -cpu host$"},
		{"x86_64", &kvm, "tcg-only", "qemu-system-x86_64 -nographic .* -machine q35 -cpu host$"},
		{"arm64", nil, "stock", "qemu-system-aarch64 -cpu cortex-a57 -machine virt -nographic .* -monitor none$"},
		{"arm64", &kvm, "stock", "qemu-system-aarch64 -cpu host -machine virt -nographic .* -enable-kvm$"},
	} {
		j := testJob(t, dir, tc.arch)
		if tc.accel != nil {
			j.Machine = qemu.MachineFor(j.Arch).WithAccel(*tc.accel)
		}
		ctx, _ := json.Marshal(j.context())
		out, err := exec.Command(py, "-c", renderStock, dir, stockTemplates, tc.dictionary+".jinja2", string(ctx)).CombinedOutput()
		got := strings.TrimSpace(string(out))
		if err != nil || !regexp.MustCompile("^"+tc.want).MatchString(got) {
			t.Errorf("%s %s on %s: %v\n%s\nwant %s", tc.arch, j.Machine.Accel.Name, tc.dictionary, err, got, tc.want)
		}
	}
}

// A lab's file server: the artefacts' URLs are under its prefix.
func TestJobURLPrefix(t *testing.T) {
	j := testJob(t, t.TempDir(), "arm64")
	j.URL = "https://lab.example.org/stackmap/job-1/"
	data, err := j.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "url: https://lab.example.org/stackmap/job-1/initrd-default.cpio.gz") {
		t.Errorf("no artefact under the URL prefix in\n%s", data)
	}
}

// needDispatcher skips a test without LAVA's dispatcher, unless the run
// was asked to set up what the boots need (make test: SMCT_E2E=1), which
// installs it from Debian.
func needDispatcher(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(LavaRun); err == nil {
		return
	}
	if os.Getenv("SMCT_E2E") != "1" {
		t.Skip("lava-dispatcher is not installed (apt-get install --no-install-recommends lava-dispatcher; make test installs it)")
	}
	if err := apt.Ensure(os.Stderr, apt.Need{Path: LavaRun, Package: "lava-dispatcher"}); err != nil {
		t.Fatal(err)
	}
}

// The job (notify callback, no_kvm and extra options included) and the
// device dictionary pass LAVA's own schemas, and lava-run --validate
// builds the job's pipeline for the device: the dispatcher refuses a
// device without a constant it reads, a context variable it does not
// know, a timeout longer than the job's.
func TestJobPassesLAVAsValidation(t *testing.T) {
	needDispatcher(t)
	for _, a := range arch.Names() {
		f := writeTestJob(t, a, "http://127.0.0.1:8000/callback")
		if err := Validate(context.Background(), f, true); err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		if os.Geteuid() != 0 {
			t.Logf("not root: lava-run --validate not run, only LAVA's schemas")
		}
	}
}

// LAVA's schema is the judge: a job it would refuse is refused.
func TestValidationRefusesABadJob(t *testing.T) {
	f := writeTestJob(t, "x86_64", "")
	data, _ := os.ReadFile(f.Job)
	os.WriteFile(f.Job, []byte(strings.Replace(string(data), "method: qemu", "method: qemu\n      bogus: 1", 1)), 0o644)
	needDispatcher(t)
	err := Validate(context.Background(), f, false)
	if err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("Validate = %v, want LAVA's schema to refuse the extra key", err)
	}
}

// The monitor's patterns, run as LAVA runs them (Python's re, pexpect's
// earliest match, ties to the end): every case line is a case, a kernel
// panic is the case "Kernel" that fails, and the monitor ends after it, at
// the exit line, or at a guest error.
func TestMonitorPatternsAsLAVAReadsThem(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3: LAVA's own matching cannot be tried")
	}
	const script = `
import json, re, sys
end, pattern, fixup = re.compile(sys.argv[1], re.DOTALL), re.compile(sys.argv[2], re.DOTALL), json.loads(sys.argv[3])
buf, out = sys.stdin.read(), []
while True:
    m = [(x.start(), i, x) for i, x in ((0, end.search(buf)), (1, pattern.search(buf))) if x]
    if not m:
        out.append("timeout"); break
    _, i, x = min(m, key=lambda t: (t[0], t[1]))
    buf = buf[x.end():]
    if i == 0:
        out.append("end"); break
    g = x.groupdict()
    out.append(re.sub(r"\W+", "_", g["test_case_id"].strip().lower()) + "=" + fixup.get(g["result"], g["result"]))
print(" ".join(out))
`
	fix, _ := json.Marshal(fixup)
	for console, want := range map[string]string{
		"SMCT-CASE default.SM-RESET-01.sleeper PASS\r\r\nSMCT-CASE default.SM-OPT-01 FAIL\r\nSMCT-CASE default.kernel-log PASS\r\nSMCT-EXIT code=1 frames=report.json\r\n": "default_sm_reset_01_sleeper=pass default_sm_opt_01=fail default_kernel_log=pass end",
		"SMCT-CASE bits-12.SM-BOOT-02 PASS\r\n[   12.5] Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000009\r\n[   12.6] CPU: 0 PID: 1\r\n":            "bits_12_sm_boot_02=pass kernel=fail end",
		"SMCT-CASE default.verdict UNRESOLVED\r\nSMCT-GUEST-ERROR suite did not finish within 280s\r\n":                                                                    "default_verdict=fail end",
		"SMCT-CASE default.SM-OPT-01 UNSUPPORTED\r\n": "default_sm_opt_01=skip timeout",
	} {
		cmd := exec.Command(py, "-c", script, monitorEnd, monitorPattern, string(fix))
		cmd.Stdin = strings.NewReader(console)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("python3: %v\n%s", err, out)
		}
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("LAVA reads %q as\n  %s\nwant\n  %s", console, got, want)
		}
	}
}
