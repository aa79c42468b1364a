// SPDX-License-Identifier: GPL-2.0-only

package e2e

import (
	"regexp"
	"strings"
	"testing"
)

// The sanitized lane on x86_64 (SANITIZE=1): the reference kernel built
// with the tree's kernel/configs/debug.config passes the default boot's
// specs with nothing in its kernel log, and a short torture on it holds
// its invariants and ends with the actor table.
func TestSanitizedLane(t *testing.T) {
	needBoots(t)
	r := qemuTest(t, "-arch", "x86_64", "-sanitize", "1", "-labels", "!needs-boot")
	m := closing.FindStringSubmatch(r.last)
	if r.code != 0 || m == nil || m[2] != "0" || m[1] == "0" {
		t.Fatalf("exit %d, last line %q; want every spec of the default boot passed", r.code, r.last)
	}
	if strings.Contains(r.stdout, "\nKERNEL ") || !strings.Contains(r.stdout, "sanitized (debug.config)") {
		t.Fatalf("want a sanitized kernel whose log reports nothing:\n%s", r.stdout)
	}

	r = qemuTest(t, "-arch", "x86_64", "-sanitize", "1", "-labels", "torture", "-torture", "1m")
	if r.code != 0 || !closing.MatchString(r.last) {
		t.Fatalf("torture: exit %d, last line %q", r.code, r.last)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`NOTE +actor +operations +errors +first failure`),
		regexp.MustCompile(`NOTE +reader stack_map_bin +[1-9]\d* +0 +-`),
		regexp.MustCompile(`NOTE +round +[1-9]\d* +0 +-`),
	} {
		if !want.MatchString(r.stdout) {
			t.Errorf("torture: no line matching %q in:\n%s", want, r.stdout)
		}
	}
}
