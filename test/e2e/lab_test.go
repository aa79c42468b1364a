// SPDX-License-Identifier: GPL-2.0-only

package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

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
// gives qemu-test's verdict, closing line and exit status, for the
// reference kernel and for a fault, on both arches.
func TestLabServerGivesQemuTestsVerdict(t *testing.T) {
	srv := needLab(t)
	for _, a := range []string{"arm64", "x86_64"} {
		for _, tc := range []struct{ name, fault string }{{"reference", ""}, {"fault", "ftrace_stackmap.faults=no_ebusy"}} {
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
