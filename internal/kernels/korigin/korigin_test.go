// SPDX-License-Identifier: GPL-2.0-only

package korigin

import "testing"

// The hash KCIDB documents: sha256sum *.patch | cut -c-64 | sha256sum,
// here of two files holding "a\n" and "b\n".
func TestPatchsetHash(t *testing.T) {
	patches := []Patch{
		{"1.patch", "87428fc522803d31065e7bce3cf03fe475096631e5e07bbd7a0fde60c4cf25c7"},
		{"2.patch", "0263829989b6fd954f72baaf2fc64bc2e2f01d692d4de72986ea808f6e99813f"},
	}
	if got, want := PatchsetHash(patches), "7b77b1b66500ed66bdb3e5f10e78f55ab6d4b404fa676ec1bee2ab5b31346a80"; got != want {
		t.Errorf("PatchsetHash = %s, want %s", got, want)
	}
	if got := PatchsetHash(nil); got != "" {
		t.Errorf("PatchsetHash(nil) = %q, want \"\"", got)
	}
}
