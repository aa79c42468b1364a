// SPDX-License-Identifier: GPL-2.0-only

package kchoice

import (
	"encoding/json"
	"testing"
)

// A build's inputs are hashed into its cache key and images.lock's pin:
// the lane must marshal as the bool it replaced, absent when plain.
func TestInputsHashAsBefore(t *testing.T) {
	type before struct {
		Arch     string `json:"arch"`
		Sanitize bool   `json:"sanitize,omitempty"`
	}
	type after struct {
		Arch string `json:"arch"`
		Lane Lane   `json:"sanitize,omitempty"`
	}
	for _, l := range []Lane{Plain, Sanitized} {
		b, _ := json.Marshal(before{"arm64", l == Sanitized})
		a, _ := json.Marshal(after{"arm64", l})
		if string(a) != string(b) {
			t.Errorf("lane %v: %s, before %s", l, a, b)
		}
		var back after
		if err := json.Unmarshal(a, &back); err != nil || back.Lane != l {
			t.Errorf("lane %v read back as %v (%v)", l, back.Lane, err)
		}
	}
}

func TestParse(t *testing.T) {
	for v, want := range map[string]Lane{"": Plain, "0": Plain, "no": Plain, "1": Sanitized, "yes": Sanitized} {
		if got, err := ParseLane(v); err != nil || got != want {
			t.Errorf("ParseLane(%q) = %v, %v", v, got, err)
		}
	}
	if _, err := ParseLane("2"); err == nil {
		t.Error("SANITIZE=2 was taken")
	}
	if Sanitized.Suffix() != "-sanitized" || Plain.Suffix() != "" || Sanitized.BenchFile() != "last-sanitized.json" || Plain.BenchFile() != "last.json" {
		t.Error("a lane's paths changed")
	}
}
