// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/onsi/gomega/format"
	"golang.org/x/sys/unix"
)

// A failed assertion names the errno as the kernel does, whether it holds
// the errno itself or the error of the write that got it.
func TestErrnosPrintByName(t *testing.T) {
	write := &os.PathError{Op: "write", Path: "/sys/kernel/tracing/stack_map", Err: unix.EBUSY}
	for _, tc := range []struct {
		value     any
		want, not string
	}{
		{unix.EBUSY, "\n    EBUSY", "0x10"},
		{unix.Errno(0), "\n    success", "0x0"},
		{write, "device or resource busy\n    EBUSY", "Op:"},
		{fmt.Errorf("resetting: %w", write), "\n    EBUSY", "Op:"},
		{unix.Errno(4095), "\n    errno 4095", "0xfff"},
	} {
		got := format.Object(tc.value, 1)
		if !strings.Contains(got, tc.want) || strings.Contains(got, tc.not) {
			t.Errorf("format.Object(%#v) = %q, want %q and no %q", tc.value, got, tc.want, tc.not)
		}
	}
	if got := format.Object(os.ErrNotExist, 1); strings.Contains(got, "ENOENT") {
		t.Errorf("an error without an errno printed as one: %q", got)
	}
}
