// SPDX-License-Identifier: GPL-2.0-only

package kbuild

import (
	"reflect"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/kernels/korigin"
)

// The reference kernel names its source and its patches in the order
// they are applied; the fragments are the config, not patches.
func TestReferenceOrigin(t *testing.T) {
	in := Inputs{SourcePackage: SourcePackage, SourceVersion: "6.12.117-1~deb12u1", Compiler: "gcc 12",
		Files: map[string]string{"patches/0002-b.patch": "b", "config/common.config": "c", "patches/0001-a.patch": "a"}}
	got := in.origin([]string{"/k/config/common.config", "/k/config/arm64.config"})
	want := korigin.Origin{Package: "linux-source-6.12 6.12.117-1~deb12u1", Config: "tinyconfig+common+arm64", Compiler: "gcc 12",
		Patches: []korigin.Patch{{Name: "0001-a.patch", SHA256: "a"}, {Name: "0002-b.patch", SHA256: "b"}}}
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
