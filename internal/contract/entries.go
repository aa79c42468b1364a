// SPDX-License-Identifier: GPL-2.0-only

package contract

import "strings"

// Names of the report entries a spec adds and the host reads: the guest
// and the host agree on them here, not by matching prose.
const (
	KernelEntry  = "kernel"  // the kernel under test, as uname gives it
	WarningEntry = "warning" // a miss of an informational requirement
	NoteEntry    = "note"    // what a passing spec could not check
	// FeatureEntry is added by a spec that found the stackmap feature
	// absent; its value is the reason.
	FeatureEntry = "feature-absent"
)

// NoStackmapFeature starts the reason given when a kernel lacks the feature.
const NoStackmapFeature = "kernel has no stackmap feature"

// Labels the specs carry besides their requirement IDs.
const (
	LabelBaseline  = "baseline"   // plain ftrace, any tracing kernel
	LabelStackmap  = "stackmap"   // the stackmap ABI
	LabelNeedsBoot = "needs-boot" // needs a boot with its own command line
	LabelStress    = "stress"     // the hot path under load (make stress)
	LabelTorture   = "torture"    // the operating model for minutes to hours (make torture)
	LabelFullMap   = "full-map"   // the smallest map, filled past capacity
	LabelTwoCPUs   = "two-cpus"   // a second CPU to take off line and back
)

// CaseLabel starts the label that tells apart the specs of one requirement
// (or set of requirements): "case:<key>". A spec's case name is its boot,
// its IDs and this key, so that a lab that keeps one result per case name
// keeps every spec's.
const CaseLabel = "case:"

// CaseKeyOf is the key of a spec's case label, or "".
func CaseKeyOf(labels []string) string {
	for _, l := range labels {
		if key, ok := strings.CutPrefix(l, CaseLabel); ok {
			return key
		}
	}
	return ""
}
