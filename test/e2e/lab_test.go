// SPDX-License-Identifier: GPL-2.0-only

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/lava"
)

// The lab (lava/lab.sh) is started once for the tests that submit to it;
// one the tests started is stopped when they end (stopLab), one that ran
// before is left running.
var (
	labOnce    sync.Once
	labSrv     lava.Server
	labErr     error
	labStarted bool
)

// stopLab stops the lab when the tests started it.
func stopLab() {
	if labStarted {
		exec.Command("sh", filepath.Join(rootDir, "lava", "lab.sh"), "stop").Run()
	}
}

// needLab starts the one-machine LAVA lab and returns its server.
func needLab(t *testing.T) lava.Server {
	t.Helper()
	needLAVA(t)
	labOnce.Do(func() {
		labStarted = exec.Command("sh", filepath.Join(rootDir, "lava", "lab.sh"), "status").Run() != nil
		cmd := exec.Command("sh", filepath.Join(rootDir, "lava", "lab.sh"), "start")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		t.Logf("lava/lab.sh start:\n%s%s", stderr.String(), out)
		if err != nil {
			labErr = errors.New("lava/lab.sh start: " + err.Error() + "\n" + stderr.String())
			return
		}
		for _, line := range strings.Split(string(out), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				switch k {
				case "LAB_URL":
					labSrv.URL = v
				case "LAB_TOKEN":
					labSrv.Token = v
				}
			}
		}
		if labSrv.URL == "" || labSrv.Token == "" {
			labErr = errors.New("lava/lab.sh start printed no LAB_URL and LAB_TOKEN:\n" + string(out))
		}
	})
	if labErr != nil {
		t.Fatal(labErr)
	}
	return labSrv
}

// The server route end to end: the job smct writes, submitted to a LAVA
// server from Debian's packages whose qemu devices are rendered from the
// stock template, followed, its log fetched through the API and judged,
// gives qemu-test's verdict, closing line and exit status, for a fault on
// both arches (the reference kernel's jobs are the lab matrix's, below).
func TestLabServerGivesQemuTestsVerdict(t *testing.T) {
	srv := needLab(t)
	for _, a := range []string{"arm64", "x86_64"} {
		for _, tc := range []struct{ name, fault string }{{"fault", "ftrace_stackmap.faults=no_ebusy"}} {
			t.Run(a+"/"+tc.name, func(t *testing.T) {
				args := []string{"-arch", a, "-seed", "4242", "-labels", "SM-RESET-01 || SM-NODE-01 || BASE-ONOFF-01"}
				if tc.fault != "" {
					args = append(args, "-append", tc.fault)
				}
				local := qemuTest(t, args...)
				r, err := runSmct(t, "lava", append(args, "-server", srv.URL, "-token", srv.Token)...)
				if err != nil {
					t.Fatal(err)
				}
				if r.code != local.code || r.last != local.last {
					t.Fatalf("through the lab: exit %d, %q; qemu-test: exit %d, %q", r.code, r.last, local.code, local.last)
				}
				if !strings.Contains(r.stdout, "test cases recorded by LAVA as the suite judged them\n") || !strings.Contains(r.stdout, " Finished Complete (") {
					t.Errorf("the job did not complete, or LAVA's cases and the verdict differ")
				}
			})
		}
	}
}

// A job the server will not take is reported in the server's words, as
// a run without a verdict.
func TestLabRefusesABadJob(t *testing.T) {
	srv := needLab(t)
	r, err := runSmct(t, "lava", "-arch", "x86_64", "-labels", "SM-NODE-01")
	if err != nil || r.code != 0 {
		t.Fatalf("writing the job: exit %d, %v", r.code, err)
	}
	job, err := os.ReadFile(filepath.Join(r.results, "latest", "lava", "job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, from, to, want string }{
		{"unknown device type", "device_type: qemu", "device_type: qemu-nosuch", "Device type 'qemu-nosuch' is unavailable"},
		{"not LAVA's schema", "visibility: public", "visibility: everyone", "data['visibility']"},
	} {
		bad := strings.Replace(string(job), tc.from, tc.to, 1)
		_, err := srv.Submit(context.Background(), []byte(bad))
		var refused *lava.Refused
		if !errors.As(err, &refused) || !strings.Contains(refused.Message, tc.want) {
			t.Errorf("%s: %v, want the server's refusal naming %q", tc.name, err, tc.want)
			continue
		}
		t.Logf("%s: %v", tc.name, err)
	}
	// Through smct, a refusal ends the run without a verdict: here a token
	// the server does not know.
	bad, err := runSmct(t, "lava", "-arch", "x86_64", "-labels", "SM-NODE-01", "-server", srv.URL, "-token", "not-a-token")
	if err != nil {
		t.Fatal(err)
	}
	if bad.code != 2 || bad.last != "0 passed, 0 failed, 0 skipped" || !strings.Contains(bad.stdout, "NO VERDICT: ") {
		t.Errorf("a job the server refused: exit %d, %q", bad.code, bad.last)
	}
}

// A matrix on the lab: every cell a job, the lab's two devices running
// them at once, gives the verdicts, table and KCIDB tests of the same
// matrix made here.
func TestLabMatrixIsTheLocalMatrix(t *testing.T) {
	srv := needLab(t)
	args := []string{"-images", "reference,debian-6.12", "-arches", "arm64,x86_64", "-seed", "4242",
		"-labels", "SM-RESET-01 || SM-NODE-01 || BASE-ONOFF-01"}
	local, err := runSmct(t, "matrix", args...)
	if err != nil {
		t.Fatal(err)
	}
	lab, err := runSmct(t, "matrix", append(args, "-server", srv.URL, "-token", srv.Token)...)
	if err != nil {
		t.Fatal(err)
	}
	if lab.code != local.code || lab.last != local.last {
		t.Fatalf("on the lab: exit %d, %q; here: exit %d, %q", lab.code, lab.last, local.code, local.last)
	}
	if got, want := matrixRows(lab.stdout), matrixRows(local.stdout); got != want || want == "" {
		t.Errorf("the lab's table:\n%s\nhere:\n%s", got, want)
	}
	dir := matrixDir(t, lab.stdout)
	labTxt, err := os.ReadFile(filepath.Join(dir, lava.LabFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("lab.txt:\n%s", labTxt)
	if !overlapping(t, string(labTxt)) {
		t.Errorf("no two jobs ran at once on two devices:\n%s", labTxt)
	}
	if kcidbTests(t, dir) != kcidbTests(t, matrixDir(t, local.stdout)) {
		t.Errorf("the lab's kcidb.json has another count of tests than the local matrix's")
	}
}

// matrixRows are a matrix table's cell rows, as smct matrix prints them.
func matrixRows(stdout string) string {
	var rows []string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "reference ") || strings.HasPrefix(l, "debian-6.12 ") {
			rows = append(rows, strings.Join(strings.Fields(l), " "))
		}
	}
	return strings.Join(rows, "\n")
}

// matrixDir is the matrix's directory its output names.
func matrixDir(t *testing.T, stdout string) string {
	for _, l := range strings.Split(stdout, "\n") {
		if d, ok := strings.CutPrefix(l, "results: "); ok {
			return strings.TrimSpace(d)
		}
	}
	t.Fatalf("no results: line in\n%s", stdout)
	return ""
}

// overlapping says whether two jobs of lab.txt ran on two devices at
// once, by the server's own times.
func overlapping(t *testing.T, labTxt string) bool {
	type span struct {
		device     string
		start, end time.Time
	}
	var spans []span
	for _, l := range strings.Split(strings.TrimSpace(labTxt), "\n") {
		// "<cell>: job N on <device>, <start> to <end>, <state> <health>"
		_, rest, isJob := strings.Cut(l, ": job ")
		if !isJob {
			continue // the cost, said last
		}
		_, rest, _ = strings.Cut(rest, " on ")
		device, times, _ := strings.Cut(rest, ", ")
		start, rest, _ := strings.Cut(times, " to ")
		end, _, _ := strings.Cut(rest, ", ")
		s, err1 := time.Parse(time.RFC3339Nano, start)
		e, err2 := time.Parse(time.RFC3339Nano, end)
		if err1 != nil || err2 != nil {
			t.Logf("%q: no times (%v, %v)", l, err1, err2)
			continue
		}
		spans = append(spans, span{device, s, e})
	}
	for i, a := range spans {
		for _, b := range spans[i+1:] {
			if a.device != b.device && a.start.Before(b.end) && b.start.Before(a.end) {
				return true
			}
		}
	}
	return false
}

// kcidbTests counts the tests of a matrix's kcidb.json.
func kcidbTests(t *testing.T, dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, "kcidb.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests []json.RawMessage `json:"tests"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return len(doc.Tests)
}
