// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"io"
	"strings"
	"testing"
)

// A sample a device took is judged as a claims boot's, with the sizes it
// could not boot said to be unmeasured; a missing file has no verdict.
func TestClaimsSample(t *testing.T) {
	var out strings.Builder
	if code := smct([]string{"claims", "-sample", "../../internal/claims/testdata/sample-arm64.json"}, &out, io.Discard); code != 0 {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	for _, want := range []string{"reproduced: retained events", "could not measure: the pool's memory at bits=18", "claims: 7 reproduced", "measured, no figure claimed: deduplication"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := smct([]string{"claims", "-sample", "no-such-sample.json"}, &out, io.Discard); code != exitNoVerdict || !strings.HasSuffix(out.String(), noneCounted+"\n") {
		t.Errorf("a missing sample: exit %d, %q", code, out.String())
	}
}
