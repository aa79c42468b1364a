// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"errors"
	"fmt"
	"slices"

	. "github.com/onsi/ginkgo/v2"

	"github.com/ftrace-stackmap/conformance/internal/contract"
)

// Unsupported ends the spec as UNSUPPORTED: the kernel lacks what it needs.
func Unsupported(format string, args ...any) {
	end(contract.Unsupported, fmt.Sprintf(format, args...), 1)
}

// Unresolved ends the spec as UNRESOLVED: the suite could not decide, for
// example because a setup step the spec relies on failed.
func Unresolved(format string, args ...any) {
	end(contract.Unresolved, fmt.Sprintf(format, args...), 1)
}

// Supported ends the spec unless err, a probe's answer, is nil: UNSUPPORTED
// when err Is ErrNotSupported (the kernel lacks what the spec needs), and
// UNRESOLVED otherwise. A probe that could not read tracefs has shown
// nothing missing, and an UNSUPPORTED would let a run pass on a kernel
// declared without the feature.
func Supported(err error) { supported(err, 1) }

func supported(err error, skip int) {
	switch {
	case err == nil:
	case errors.Is(err, ErrNotSupported):
		end(contract.Unsupported, err.Error(), skip+1)
	default:
		end(contract.Unresolved, err.Error(), skip+1)
	}
}

// Must ends the spec as UNRESOLVED when a setup step failed: a write the
// spec needs in order to ask its question is not the question, and FAIL
// would blame the kernel for it.
func Must(err error, format string, args ...any) {
	if err != nil {
		end(contract.Unresolved, fmt.Sprintf("%s: %v", fmt.Sprintf(format, args...), err), 1)
	}
}

// end marks the spec with class c (UNSUPPORTED or UNRESOLVED) and ends it
// with msg; skip is how many callers up Ginkgo reports it from.
func end(c contract.Class, msg string, skip int) {
	AddReportEntry(contract.ClassEntry, string(c))
	if c == contract.Unsupported {
		Skip(msg, skip+1)
	}
	Fail(msg, skip+1)
}

// Prerequisite ends the spec as UNRESOLVED, naming id, when a check that
// requirement id covers failed: the spec of id fails for it, in its own
// body, so that one broken requirement is reported once and not echoed by
// every spec that depends on it. A spec checks its own requirement in its
// body; Prerequisite of its own id is a mistake of the suite, UNRESOLVED
// whatever err is, so that a correct kernel shows it too.
func Prerequisite(id string, err error) {
	if _, ok := contract.Requirements[id]; !ok {
		panic(fmt.Sprintf("Prerequisite(%q): unknown requirement ID", id))
	}
	if slices.Contains(CurrentSpecReport().Labels(), id) {
		end(contract.Unresolved, fmt.Sprintf("Prerequisite(%q) in a spec of %s: a spec checks its own requirement in its body", id, id), 1)
	}
	if err == nil {
		return
	}
	end(contract.Unresolved, fmt.Sprintf("%s is broken, so this cannot be checked: %v", id, err), 1)
}

// Warn records a miss of a clause of an informational requirement: the
// spec still passes, and the report shows the warning next to it.
func Warn(clause func() string) {
	msg := clause()
	AddReportEntry(contract.WarningEntry, msg)
	fmt.Fprintf(GinkgoWriter, "WARNING: %s\n", msg)
}

// Note records that a passing spec checked less than its requirement asks;
// the report shows it next to the spec, never silently.
func Note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	AddReportEntry(contract.NoteEntry, msg)
	fmt.Fprintf(GinkgoWriter, "NOTE: %s\n", msg)
}
