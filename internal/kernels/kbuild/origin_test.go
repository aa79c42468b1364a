// SPDX-License-Identifier: GPL-2.0-only

package kbuild

import (
	"reflect"
	"testing"
)

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

// The reference kernel names its source and its patches in the order
// they are applied; the fragments are the config, not patches.
func TestReferenceOrigin(t *testing.T) {
	in := Inputs{SourcePackage: SourcePackage, SourceVersion: "6.12.117-1~deb12u1", Compiler: "gcc 12",
		Files: map[string]string{"patches/0002-b.patch": "b", "config/common.config": "c", "patches/0001-a.patch": "a"}}
	got := in.origin([]string{"/k/config/common.config", "/k/config/arm64.config"})
	want := Origin{Package: "linux-source-6.12 6.12.117-1~deb12u1", Config: "tinyconfig+common+arm64", Compiler: "gcc 12",
		Patches: []Patch{{"0001-a.patch", "a"}, {"0002-b.patch", "b"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("origin = %+v, want %+v", got, want)
	}
}

// A series' mbox is split at each message's "From " line, the way b4
// writes one message after another, not at a line of text that begins
// with "From ".
func TestSeriesPatches(t *testing.T) {
	one := "From 0123 Mon Sep 17 00:00:00 2001\nSubject: [PATCH 1/2] a\n\nFrom the start\n"
	two := "From git@z Thu Jan  1 00:00:00 1970\nSubject: [PATCH 2/2] b\n"
	got := seriesPatches([]byte(one + two))
	want := seriesPatches([]byte(one))
	want = append(want, seriesPatches([]byte(two))...)
	if len(got) != 2 || !reflect.DeepEqual(got, want) {
		t.Errorf("seriesPatches = %v, want %v", got, want)
	}
}
