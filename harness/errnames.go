// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"errors"
	"fmt"

	"github.com/onsi/gomega/format"
	"golang.org/x/sys/unix"
)

// Gomega prints an errno as Go's type and number (<syscall.Errno>0x10),
// and an error wrapping one as a struct; the kernel's documentation and the
// contract say EBUSY. Registered once, for the assertions of every spec.
func init() { format.RegisterCustomFormatter(errnoName) }

// errnoName formats an errno, or an error that wraps one (the
// *os.PathError of a tracefs write), as the errno's name: the text of the
// error itself Gomega prints anyway, just above.
func errnoName(v any) (string, bool) {
	err, ok := v.(error)
	var errno unix.Errno
	if !ok || !errors.As(err, &errno) {
		return "", false
	}
	if errno == 0 {
		return "success", true
	}
	if name := unix.ErrnoName(errno); name != "" {
		return name, true
	}
	return fmt.Sprintf("errno %d", int(errno)), true
}
