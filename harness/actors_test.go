// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
)

func TestProcParsing(t *testing.T) {
	call := fmt.Sprintf("%d 0x7 0xc000012345 0x1 0x0 0x0 0x0 0x7ffd 0x4000", unix.SYS_WRITE)
	if !inWrite(call, 7) || inWrite(call, 8) || inWrite("running", 7) || inWrite(fmt.Sprintf("%d 0x7", unix.SYS_WRITE+1), 7) {
		t.Errorf("inWrite misreads %q", call)
	}
	for stat, want := range map[string]bool{
		"123 (smct (guest)) D 1 2": true,
		"123 (suite) S 1 2":        true,
		"123 (suite) R 1 2":        false,
		"garbled":                  false,
	} {
		if asleep(stat) != want {
			t.Errorf("asleep(%q) = %v, want %v", stat, !want, want)
		}
	}
}
