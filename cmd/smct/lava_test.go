// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file that is not LAVA's log gives no verdict, said in the output's
// last lines and in results/latest, never a pass.
func TestLavaResultsOfWhatIsNotALog(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "console.log")
	os.WriteFile(log, []byte("[    0.000000] Linux version 6.12\nSMCT-EXIT code=0\n"), 0o644)
	results := filepath.Join(dir, "results")
	var stdout, stderr strings.Builder
	code := smct([]string{"lava-results", "-results", results, log}, &stdout, &stderr)
	out := stdout.String()
	if code != exitNoVerdict || !strings.Contains(out, "NO VERDICT: ") || !strings.HasSuffix(out, noneCounted+"\n") {
		t.Fatalf("exit %d, stdout %q; want %d, NO VERDICT and %q last", code, out, exitNoVerdict, noneCounted)
	}
	verdict, err := os.ReadFile(filepath.Join(results, "latest", "verdict.txt"))
	if err != nil || !strings.Contains(string(verdict), "not LAVA's log") {
		t.Errorf("latest/verdict.txt %q (%v)", verdict, err)
	}
}

func TestLavaResultsWantsALog(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := smct([]string{"lava-results"}, &stdout, &stderr); code != exitNoVerdict || !strings.Contains(stdout.String()+stderr.String(), "-log FILE") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}
