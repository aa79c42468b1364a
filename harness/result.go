package harness

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"

	"github.com/ftrace-stackmap/conformance/outcome"
)

// Unsupported ends the spec as UNSUPPORTED: the kernel lacks what it needs.
func Unsupported(format string, args ...any) {
	Skip(outcome.UnsupportedPrefix+fmt.Sprintf(format, args...), 1)
}

// Unresolved ends the spec as UNRESOLVED: the suite could not decide, for
// example because a setup step the spec relies on failed.
func Unresolved(format string, args ...any) {
	Fail(outcome.UnresolvedPrefix+fmt.Sprintf(format, args...), 1)
}

// WarningEntry names the report entries that carry warnings.
const WarningEntry = "warning"

// Warn records a miss of an informational requirement: the spec still
// passes, and the report shows the warning next to it.
func Warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	AddReportEntry(WarningEntry, msg)
	fmt.Fprintf(GinkgoWriter, "WARNING: %s\n", msg)
}

// NoStackmapFeature starts the reason given when a kernel lacks the feature.
const NoStackmapFeature = "kernel has no stackmap feature"
