// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"strings"
	"testing"
)

// TestBadFlagValuesAreRefused: a value smct cannot use ends the run at
// once, as no verdict, naming the flag.
func TestBadFlagValuesAreRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-exit-codes", "tap"}, `-exit-codes="tap": want smct or kselftest`},
		{[]string{"-seed", "many"}, "want a positive number"},
		{[]string{"-seed", "-3"}, "want a positive number"},
	} {
		var stdout, stderr strings.Builder
		code := qemuTestMain(tc.args, &stdout, &stderr)
		if code != exitNoVerdict || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("qemu-test %v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr.String(), exitNoVerdict, tc.want)
		}
	}
}
