// Result classes, in ftracetest's terms, told apart in a Ginkgo report.
//
// Ginkgo knows passed, failed and skipped. A spec that finds its feature
// missing skips with a message starting "UNSUPPORTED: "; a spec that cannot
// decide (its setup broke) fails with a message starting "UNRESOLVED: ".
package contract

import (
	"strings"

	"github.com/onsi/ginkgo/v2/types"
)

// Class is the verdict for one spec.
type Class string

const (
	Pass        Class = "PASS"
	Fail        Class = "FAIL"
	Unsupported Class = "UNSUPPORTED" // feature absent; the message says which
	Unresolved  Class = "UNRESOLVED"  // could not decide; never counts as a pass
	NotRun      Class = "NOTRUN"      // filtered out by labels; not part of the run
)

// Prefixes that mark the two classes Ginkgo does not have.
const (
	UnsupportedPrefix = "UNSUPPORTED: "
	UnresolvedPrefix  = "UNRESOLVED: "
)

// ClassOf classifies one spec report.
func ClassOf(s types.SpecReport) Class {
	msg := s.Failure.Message
	switch s.State {
	case types.SpecStatePassed:
		return Pass
	case types.SpecStateSkipped:
		if msg == "" {
			return NotRun
		}
		if strings.HasPrefix(msg, UnsupportedPrefix) {
			return Unsupported
		}
		// A bare Skip() without a reason hides why: never let it look intended.
		return Unresolved
	case types.SpecStatePending:
		return NotRun
	case types.SpecStateFailed:
		if strings.HasPrefix(msg, UnresolvedPrefix) {
			return Unresolved
		}
		return Fail
	default: // panicked, interrupted, aborted, timed out
		return Unresolved
	}
}
