// SPDX-License-Identifier: GPL-2.0-only

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/claims"
)

// claimsRun runs `smct claims args...` and returns how it ended and the
// report it wrote.
func claimsRun(t *testing.T, args ...string) (runOut, claims.Report) {
	t.Helper()
	r, err := runSmct(t, "claims", args...)
	if err != nil {
		t.Fatal(err)
	}
	return r, readClaims(t, filepath.Join(r.results, "latest"))
}

func readClaims(t *testing.T, runDir string) claims.Report {
	t.Helper()
	var rep claims.Report
	data, err := os.ReadFile(filepath.Join(runDir, "claims.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

func wantStatus(t *testing.T, rep claims.Report, id string, want claims.Status) {
	t.Helper()
	c, ok := rep.Find(id)
	if !ok || c.Status != want {
		t.Errorf("%s: %+v; want %s", id, c, want)
	}
}

// The reference kernel keeps what the series claims, on both arches.
func TestClaimsOfTheReferenceKernel(t *testing.T) {
	needBoots(t)
	for _, arch := range []string{"x86_64", "arm64"} {
		t.Run(arch, func(t *testing.T) {
			r, rep := claimsRun(t, "-arch", arch)
			if r.code != 0 || !strings.HasPrefix(r.last, "claims: ") {
				t.Fatalf("exit %d, last line %q; want 0 and the claims' line", r.code, r.last)
			}
			for _, id := range []string{"retention.events", "retention.bytes", "retention.depth", "retention.fallback", "pool.bits14", "pool.bits18", "pool.eager", "dedup.lookup"} {
				wantStatus(t, rep, id, claims.Reproduced)
			}
			// The series gives no figure for either: measured, not judged.
			wantStatus(t, rep, "hot-path", claims.NoFigure)
			wantStatus(t, rep, "dedup", claims.NoFigure)
		})
	}
}

// A kernel that never uses its ids (every event keeps its full stack)
// does not reproduce the retention claims: the measurement can fail.
func TestClaimsOfAKernelThatNeverUsesIDs(t *testing.T) {
	needBoots(t)
	r, rep := claimsRun(t, "-arch", "x86_64", "-append", "ftrace_stackmap.faults=no_stack_ids")
	if r.code != 0 {
		t.Fatalf("exit %d; want 0: claims never set the status", r.code)
	}
	for _, id := range []string{"retention.events", "retention.bytes", "retention.depth"} {
		wantStatus(t, rep, id, claims.NotReproduced)
	}
}

// A kernel whose ids name no entry does not reproduce "each duplicate a
// self-consistent entry": the lookup check can fail.
func TestClaimsOfAKernelWhoseIDsDangle(t *testing.T) {
	needBoots(t)
	r, rep := claimsRun(t, "-arch", "x86_64", "-append", "ftrace_stackmap.faults=dangling_ids")
	if r.code != 0 {
		t.Fatalf("exit %d; want 0: claims never set the status", r.code)
	}
	wantStatus(t, rep, "dedup.lookup", claims.NotReproduced)
}

// CLAIMS=1 adds the claims to a run without touching its verdict: a
// kernel that fails them still passes the specs it keeps.
func TestClaimsDoNotChangeTheVerdict(t *testing.T) {
	needBoots(t)
	r := qemuTest(t, "-arch", "arm64", "-labels", "SM-NODE-02", "-claims", "-append", "ftrace_stackmap.faults=no_stack_ids")
	if m := closing.FindStringSubmatch(r.last); r.code != 0 || m == nil || m[2] != "0" {
		t.Fatalf("exit %d, last line %q; want the specs' verdict alone", r.code, r.last)
	}
	if !strings.Contains(r.stdout, "claims: ") {
		t.Errorf("no claims line in the output:\n%s", r.stdout)
	}
	rep := readClaims(t, filepath.Join(r.results, "latest"))
	wantStatus(t, rep, "retention.events", claims.NotReproduced)
	for _, f := range []string{"claims.txt", "evidence.txt", "kcidb.json"} {
		data, err := os.ReadFile(filepath.Join(r.results, "latest", f))
		if err != nil || !strings.Contains(string(data), "not reproduced") {
			t.Errorf("%s does not carry the claims (%v)", f, err)
		}
	}
}
