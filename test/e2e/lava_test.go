// SPDX-License-Identifier: GPL-2.0-only

package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/u-root/u-root/pkg/cpio"
	"gopkg.in/yaml.v3"

	"github.com/ftrace-stackmap/conformance/initramfs"
	"github.com/ftrace-stackmap/conformance/internal/apt"
	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/kernels"
	"github.com/ftrace-stackmap/conformance/internal/kernels/images"
	"github.com/ftrace-stackmap/conformance/internal/lava"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// needLAVA skips unless kernels are to be booted here as root (lava-run
// runs jobs as root only), and installs LAVA's dispatcher from Debian.
func needLAVA(t *testing.T) {
	t.Helper()
	needBoots(t)
	if os.Geteuid() != 0 {
		t.Skip("lava-run runs jobs as root only")
	}
	if err := apt.Ensure(os.Stderr, apt.Need{Path: lava.LavaRun, Package: "lava-dispatcher"}); err != nil {
		t.Fatal(err)
	}
}

// jobIDs keep the jobs of one test run apart in LAVA's own directories.
var jobIDs atomic.Int64

// lavaRun runs a job with lava-run and returns LAVA's log (its stderr),
// kept as lava.log in the job's directory, and how long it took.
func lavaRun(t *testing.T, dir, job, device string) (string, time.Duration) {
	t.Helper()
	log := filepath.Join(dir, "lava.log")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	id := fmt.Sprintf("%d%03d", os.Getpid(), jobIDs.Add(1))
	cmd := exec.Command(lava.LavaRun, "--job-id", id, "--output-dir", filepath.Join(dir, "output"), "--device", device, job)
	cmd.Stderr = f
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Logf("lava-run: %v (the job's result is in its log)", err)
	}
	return log, time.Since(start)
}

// writeLavaJob writes the job of `smct lava args...` in a run directory
// under results and returns its lava/ directory.
func writeLavaJob(t *testing.T, results string, args ...string) string {
	t.Helper()
	cmd := exec.Command(smct, append([]string{"lava", "-results", results}, args...)...)
	cmd.Dir = rootDir
	out, err := cmd.CombinedOutput()
	t.Logf("smct lava %s:\n%s", strings.Join(args, " "), out)
	if err != nil {
		t.Fatalf("smct lava: %v", err)
	}
	return filepath.Join(results, "latest", "lava")
}

// runLavaJob runs a job written in dir with lava-run and returns LAVA's
// log.
func runLavaJob(t *testing.T, dir string) (*lava.Log, string, time.Duration) {
	t.Helper()
	logFile, took := lavaRun(t, dir, filepath.Join(dir, "job.yaml"), filepath.Join(dir, "device.yaml"))
	f, err := os.Open(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := lava.ParseLog(f)
	if err != nil {
		t.Fatal(err)
	}
	if why := l.Failed(); why != "" {
		t.Fatalf("%s (%s)", why, logFile)
	}
	return l, logFile, took
}

// lavaJob writes the job of `smct lava args...`, runs it with lava-run and
// returns LAVA's log.
func lavaJob(t *testing.T, args ...string) (*lava.Log, string, time.Duration) {
	t.Helper()
	return runLavaJob(t, writeLavaJob(t, t.TempDir(), args...))
}

// lavaResults runs `smct lava-results` on LAVA's log of a job.
func lavaResults(t *testing.T, logFile string) runOut {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(smct, "lava-results", "-results", dir, logFile)
	cmd.Dir = rootDir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, _ := cmd.Output()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	r := runOut{code: cmd.ProcessState.ExitCode(), stdout: string(out), last: lines[len(lines)-1], results: dir}
	t.Logf("smct lava-results %s: exit %d\n%s\n%s", logFile, r.code, stderr.String(), out)
	return r
}

// casesByBoot counts LAVA's cases of each boot and their results.
func casesByBoot(l *lava.Log) map[string]map[string]int {
	by := map[string]map[string]int{}
	for _, c := range l.Cases {
		if by[c.Namespace] == nil {
			by[c.Namespace] = map[string]int{}
		}
		by[c.Namespace][c.Result]++
	}
	return by
}

// The reference kernel through LAVA: a case per spec in each boot, and
// smct lava-results on LAVA's log gives qemu-test's closing line, status
// and verdicts; LAVA's cases agree with them.
func TestLAVAJobGivesQemuTestsVerdict(t *testing.T) {
	needLAVA(t)
	for _, a := range []string{"arm64", "x86_64"} {
		t.Run(a, func(t *testing.T) {
			start := time.Now()
			local := qemuTest(t, "-arch", a, "-seed", "4242")
			localTook := time.Since(start)
			l, logFile, took := lavaJob(t, "-arch", a, "-seed", "4242")
			t.Logf("wall time: qemu-test %s, lava-run %s", localTook.Round(100*time.Millisecond), took.Round(100*time.Millisecond))
			for boot, n := range casesByBoot(l) {
				t.Logf("LAVA's cases of boot %s: %v", boot, n)
			}
			r := lavaResults(t, logFile)
			if r.code != local.code || r.last != local.last {
				t.Fatalf("lava-results: exit %d, %q; qemu-test: exit %d, %q", r.code, r.last, local.code, local.last)
			}
			if !strings.Contains(r.stdout, "test cases recorded by LAVA as the suite judged them\n") {
				t.Errorf("LAVA's cases and the verdict differ")
			}
		})
	}
}

// A fault of the reference kernel: LAVA records a failure for its
// requirement and nothing else.
func TestLAVAFaultFailsItsRequirementAlone(t *testing.T) {
	needLAVA(t)
	args := []string{"-arch", "x86_64", "-append", "ftrace_stackmap.faults=no_ebusy"}
	local := qemuTest(t, args...)
	l, logFile, _ := lavaJob(t, args...)
	var failed []string
	for _, c := range l.Cases {
		if c.Result == "fail" {
			failed = append(failed, c.ID)
		}
	}
	// The spec's own case, and the boot's verdict that the guest adds.
	if want := "default.SM-RESET-01.tracing-on default.verdict"; strings.Join(failed, " ") != want {
		t.Errorf("LAVA's failed cases %v, want %s alone", failed, want)
	}
	if r := lavaResults(t, logFile); r.code != local.code || r.last != local.last {
		t.Errorf("lava-results: exit %d, %q; qemu-test: exit %d, %q", r.code, r.last, local.code, local.last)
	}
}

// A kernel that dies on a boot's parameter: the job goes on with the next
// boots, and lava-results fails that boot's specs as qemu-test does.
func TestLAVABootThatDies(t *testing.T) {
	needLAVA(t)
	args := []string{"-arch", "x86_64", "-append", "ftrace_stackmap.faults=bits_null"}
	local := qemuTest(t, args...)
	l, logFile, _ := lavaJob(t, args...)
	if b := l.Boots["bits-bare"]; b == nil || !b.Ended || b.TimedOut {
		t.Fatalf("the job's boots %v: want bits-bare ended at its panic", l.Order)
	}
	r := lavaResults(t, logFile)
	if r.code != local.code || r.last != local.last || !strings.Contains(r.stdout, "did not reach the suite") {
		t.Errorf("lava-results: exit %d, %q; qemu-test: exit %d, %q", r.code, r.last, local.code, local.last)
	}
	if got := only(coverage(r.stdout), "FAIL"); strings.Join(got, " ") != "SM-BOOT-03" {
		t.Errorf("FAIL %v, want SM-BOOT-03 alone", got)
	}
}

// A lab that serves the artefacts over HTTP (-url): lava-run downloads
// them from a file server on a loopback port, checking their sha256sum,
// and lava-results gives the closing line and status of the same job with
// file:// artefacts.
func TestLAVAJobOverHTTP(t *testing.T) {
	needLAVA(t)
	args := []string{"-arch", "x86_64", "-seed", "4242"}
	_, fileLog, _ := lavaJob(t, args...)

	results := t.TempDir()
	var mu sync.Mutex
	served := map[string]int{}
	files := http.FileServer(http.Dir(results))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		served[r.Method+" "+path.Base(r.URL.Path)]++
		mu.Unlock()
		files.ServeHTTP(w, r)
	}))
	defer srv.Close()
	dir := writeLavaJob(t, results, append(args, "-url", srv.URL+"/latest/lava/")...)
	job, _ := os.ReadFile(filepath.Join(dir, "job.yaml"))
	if strings.Contains(string(job), "file://") || !strings.Contains(string(job), "url: "+srv.URL+"/latest/lava/kernel.gz") {
		t.Fatalf("the job names its artefacts elsewhere than %s:\n%s", srv.URL, job)
	}
	_, httpLog, _ := runLavaJob(t, dir)
	mu.Lock()
	t.Logf("served: %v", served)
	if served["GET kernel.gz"] == 0 || served["GET initrd-default.cpio.gz"] == 0 {
		t.Errorf("lava-run did not download the artefacts from %s: %v", srv.URL, served)
	}
	mu.Unlock()
	f, h := lavaResults(t, fileLog), lavaResults(t, httpLog)
	if h.code != f.code || h.last != f.last {
		t.Fatalf("the job over HTTP: exit %d, %q; with file:// artefacts: exit %d, %q", h.code, h.last, f.code, f.last)
	}
	t.Logf("closing line over HTTP: %s (exit %d)", h.last, h.code)
}

// callbackData is what a LAVA server posts to a job's notify callback when
// it ends, with dataset "all" (lava-server's TestJob.create_job_data): the
// job's state, definition and metadata, its log as the server keeps it
// (lava-run's lines, each an item of a YAML list) and its results, each
// test suite's cases as a YAML list (lava_results_app's export_testcase).
func callbackData(t *testing.T, id int, jobFile, logFile string) map[string]any {
	t.Helper()
	definition, err := os.ReadFile(jobFile)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	// The job's metadata, as the server keeps it: a list of one-key maps.
	var job struct {
		Metadata map[string]string `yaml:"metadata"`
	}
	if err := yaml.Unmarshal(definition, &job); err != nil {
		t.Fatal(err)
	}
	metadata := []map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(job.Metadata)) {
		metadata = append(metadata, map[string]string{k: job.Metadata[k]})
	}
	var log strings.Builder
	suites := map[string][]map[string]any{}
	var order []string
	health := "Incomplete"
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		log.WriteString("- " + line + "\n")
		var rec struct {
			Lvl string         `yaml:"lvl"`
			Msg map[string]any `yaml:"msg"`
		}
		if yaml.Unmarshal([]byte(line), &rec) != nil || rec.Lvl != "results" {
			continue
		}
		suite, _ := rec.Msg["definition"].(string)
		if suites[suite] == nil {
			order = append(order, suite)
		}
		if suite == "lava" && rec.Msg["case"] == "job" && rec.Msg["result"] == "pass" {
			health = "Complete"
		}
		n := len(suites[suite]) + 1
		meta := maps.Clone(rec.Msg)
		if extra, ok := meta["extra"].(map[string]any); ok { // the server keeps extra as a list of one-key maps
			var list []map[string]any
			for k, v := range extra {
				list = append(list, map[string]any{k: v})
			}
			meta["extra"] = list
		}
		suites[suite] = append(suites[suite], map[string]any{"name": rec.Msg["case"], "job": fmt.Sprint(id), "suite": suite,
			"result": rec.Msg["result"], "measurement": "None", "unit": "", "level": rec.Msg["level"],
			"url": fmt.Sprintf("/results/testcase/%d", n), "id": fmt.Sprint(n), "logged": "2026-11-25 10:00:00+00:00",
			"log_start_line": "", "log_end_line": "", "metadata": meta})
	}
	results := map[string]string{}
	for _, suite := range order {
		y, err := yaml.Marshal(suites[suite])
		if err != nil {
			t.Fatal(err)
		}
		results[suite] = string(y)
	}
	status := map[string]int{"Complete": 2, "Incomplete": 3}[health]
	return map[string]any{"id": id, "status": status, "status_string": strings.ToLower(health), "state": 5, "state_string": "Finished",
		"health": map[string]int{"Complete": 1, "Incomplete": 2}[health], "health_string": health,
		"submit_time": "2026-11-25 10:00:00+00:00", "start_time": "2026-11-25 10:00:01+00:00", "end_time": "2026-11-25 10:00:30+00:00",
		"submitter_username": "lab", "failure_comment": nil, "priority": 50, "description": "", "actual_device_id": "qemu01",
		"definition": string(definition), "metadata": metadata, "log": log.String(), "results": results}
}

// -notify: the job asks the LAVA server to post its log and results to a
// URL when it ends. lava-run, the dispatcher alone, posts nothing (a
// server's scheduler does), so the test makes what a server would post
// from lava-run's log, posts it as the job's callback says to a receiver
// on a loopback port, and lava-results gives for what arrived the verdict
// it gives for the log, the server's job id named.
func TestLAVANotifyCallback(t *testing.T) {
	needLAVA(t)
	received := make(chan []byte, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.URL.Path != "/node/4711" || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("callback: %s %s, %s", r.Method, r.URL, r.Header.Get("Content-Type"))
		}
		received <- body
	}))
	defer srv.Close()
	dir := writeLavaJob(t, t.TempDir(), "-arch", "x86_64", "-notify", srv.URL+"/node/4711")
	_, logFile, _ := runLavaJob(t, dir)

	var job struct {
		Notify struct {
			Criteria map[string]string `yaml:"criteria"`
			Callback map[string]string `yaml:"callback"`
		} `yaml:"notify"`
	}
	data, _ := os.ReadFile(filepath.Join(dir, "job.yaml"))
	if err := yaml.Unmarshal(data, &job); err != nil {
		t.Fatal(err)
	}
	cb := job.Notify.Callback
	if job.Notify.Criteria["status"] != "finished" || cb["method"] != "POST" || cb["dataset"] != "all" || cb["content-type"] != "json" {
		t.Fatalf("the job's notify: %+v", job.Notify)
	}
	js, err := json.Marshal(callbackData(t, 4711, filepath.Join(dir, "job.yaml"), logFile))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(cb["url"], "application/json", bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	posted := filepath.Join(dir, "callback.json")
	os.WriteFile(posted, <-received, 0o644)

	l, c := lavaResults(t, logFile), lavaResults(t, posted)
	if c.code != l.code || c.last != l.last {
		t.Fatalf("the callback's data: exit %d, %q; LAVA's log: exit %d, %q", c.code, c.last, l.code, l.last)
	}
	if !strings.Contains(c.stdout, `LAVA job 4711 "stackmap conformance`) {
		t.Errorf("the run from the callback does not name the server's job 4711:\n%s", c.stdout)
	}
	t.Logf("closing line from the callback: %s (exit %d)", c.last, c.code)
}

// shellJob is a LAVA job that boots the kernel with a busybox rootfs
// holding the suite binary and runs the repository's test definition in
// LAVA's test shell, as a lab runs it on a board. The kernel's command
// line is a default boot's, whose trace_options= BASE-BOOTOPT-01 reads.
const shellJob = `job_name: stackmap conformance test definition %[1]s
device_type: qemu
visibility: public
timeouts:
  job: {minutes: 20}
context:
  arch: %[1]s
actions:
  - deploy:
      to: tmpfs
      timeout: {minutes: 5}
      images:
        kernel:
          url: file://%[2]s
          image_arg: -kernel {kernel} -append "console=%[3]s loglevel=4 panic=-1 trace_options=noannotate rcupdate.rcu_expedited=1" -no-reboot
        ramdisk:
          url: file://%[4]s
          compression: gz
          format: cpio.newc
          overlays: {lava: true}
          image_arg: -initrd {ramdisk}
  - boot:
      method: qemu
      media: tmpfs
      timeout: {minutes: 3}
      prompts: ["smct-shell# "]
      parameters: {kernel-start-message: "smct-shell: up"}
  - test:
      timeout: {minutes: 10}
      definitions:
        - from: git
          repository: %[5]s
          path: lava/stackmap-conformance.yaml
          name: stackmap-conformance
          parameters: {SUITE: /suites.test}
`

// shellInit starts busybox's shell on the console, with what the suite
// and LAVA's test shell need mounted.
const shellInit = `#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t devtmpfs devtmpfs /dev
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /tmp
echo "smct-shell: up"
export PATH=/bin:/ HOME=/tmp PS1='smct-shell# '
exec setsid cttyhack sh
`

// shellRamdisk writes a gzip-compressed single archive: busybox, the
// suite binary built for the arch, and an init that starts the shell.
func shellRamdisk(t *testing.T, a arch.Arch, out string) {
	t.Helper()
	b := initramfs.Builder{ModuleDir: rootDir, OutDir: filepath.Join(rootDir, "build", a.Name), Arch: a}
	if _, err := b.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	lock, err := images.Read(filepath.Join(rootDir, "images.lock"))
	if err != nil {
		t.Fatal(err)
	}
	tool, err := lock.Tool("busybox")
	if err != nil {
		t.Fatal(err)
	}
	busybox, err := images.Fetch(tool, a, kernels.CacheDir(), progress.New(os.Stderr))
	if err != nil {
		t.Fatal(err)
	}
	records, err := initramfs.BusyboxRecords(busybox)
	if err != nil {
		t.Fatal(err)
	}
	suite, err := os.ReadFile(filepath.Join(b.OutDir, "suites.test"))
	if err != nil {
		t.Fatal(err)
	}
	records = append([]cpio.Record{cpio.Directory("dev", 0o755), cpio.CharDev("dev/console", 0o600, 5, 1),
		cpio.Directory("proc", 0o555), cpio.Directory("sys", 0o555), cpio.Directory("tmp", 0o1777)}, records...)
	records = append(records, cpio.StaticFile("init", shellInit, 0o755), cpio.StaticFile("suites.test", string(suite), 0o755))
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	w := cpio.Newc.Writer(zw)
	cpio.MakeAllReproducible(records)
	if err := cpio.WriteRecordsAndDirs(w, records); err != nil {
		t.Fatal(err)
	}
	if err := cpio.WriteTrailer(w); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ktapCase is a top-level KTAP result line: ok or not ok, the test's
// name, and what follows it (a directive).
var ktapCase = regexp.MustCompile(`^(ok|not ok) \d+ (\S+)(.*)$`)

// The test definition under lava-run, on the reference kernel with a
// busybox rootfs: LAVA's cases are a local run's default boot, spec by
// spec, each with the result its KTAP gives.
func TestTestDefinitionUnderLAVA(t *testing.T) {
	needLAVA(t)
	a := arch.MustLookup("x86_64")
	out, err := exec.Command(smct, "-C", rootDir, "kernel", "-arch", a.Name).Output()
	if err != nil {
		t.Fatalf("smct kernel: %v", err)
	}
	kernel := strings.TrimSpace(string(out))
	dir := t.TempDir()
	ramdisk := filepath.Join(dir, "rootfs.cpio.gz")
	shellRamdisk(t, a, ramdisk)
	job := filepath.Join(dir, "job.yaml")
	os.WriteFile(job, []byte(fmt.Sprintf(shellJob, a.Name, kernel, a.Console, ramdisk, rootDir)), 0o644)
	device, err := lava.Job{Arch: a, Machine: qemu.MachineFor(a).WithAccel(qemu.Accel{Name: "tcg"}), Memory: "512"}.Device()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "device.yaml"), device, 0o644)
	logFile, took := lavaRun(t, dir, job, filepath.Join(dir, "device.yaml"))
	f, _ := os.Open(logFile)
	l, err := lava.ParseLog(f)
	f.Close()
	if err != nil || l.Failed() != "" {
		t.Fatalf("%v %s (%s)", err, l.Failed(), logFile)
	}
	t.Logf("the test definition under lava-run took %s", took.Round(100*time.Millisecond))
	got := map[string]string{}
	for _, c := range l.Cases {
		if strings.HasSuffix(c.Suite, "stackmap-conformance") {
			got[c.Name] = c.Result
		}
	}
	local := qemuTest(t, "-arch", a.Name, "-labels", "!needs-boot && !stress && !torture")
	ktap, err := os.ReadFile(filepath.Join(local.results, "latest", "ktap.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, line := range strings.Split(string(ktap), "\n") {
		m := ktapCase.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		switch {
		case m[1] == "not ok":
			want[m[2]] = "fail"
		case strings.HasPrefix(m[3], " # SKIP"):
			want[m[2]] = "skip"
		default:
			want[m[2]] = "pass"
		}
	}
	if len(want) == 0 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("LAVA's cases:\n%v\nthe local run's:\n%v", got, want)
	}
}
