// SPDX-License-Identifier: GPL-2.0-only

package contract

import (
	"slices"

	"github.com/ftrace-stackmap/conformance/internal/labels"
)

// A BootPlan is one boot of a run: extra kernel command line words and the
// specs that need them. Requirements about boot parameters need boots of
// their own; everything else runs in the default boot.
type BootPlan struct {
	Name   string
	Append []string
	Labels labels.Filter // selects this boot's specs
	CPUs   int           // 0 means one
	// OptIn is the label a user's filter asks for to make this boot;
	// "" for a boot every run makes.
	OptIn string
	// Long is a boot that takes several times a short one's time: it
	// starts before the short ones, so that no lane ends on it alone.
	Long bool
}

// DefaultBoot names the boot without parameters of its own, where most
// specs run; it is made first and tells whether the kernel has the feature.
const DefaultBoot = "default"

// IsDefault says whether p is the default boot.
func (p BootPlan) IsDefault() bool { return p.Name == DefaultBoot }

// plans are the boots a full run makes, default first. The bits values
// cover in range, in range as hex, both clamps, and values that are not a
// number: a word, a sign, digits with more after them (SM-BOOT-02), and the bare parameter (SM-BOOT-03); the full-map
// boot fills the smallest map.
var plans = []BootPlan{
	{Name: DefaultBoot, Labels: labels.MustParse("!" + LabelNeedsBoot + " && !" + LabelStress + " && !" + LabelTorture)},
	{Name: "trace-options", Append: []string{"trace_options=stackmap,stacktrace"}, Labels: labels.MustParse("SM-BOOT-01")},
	{Name: "bits-12", Append: []string{"ftrace_stackmap.bits=12"}, Labels: labels.MustParse("SM-BOOT-02")},
	{Name: "bits-hex", Append: []string{"ftrace_stackmap.bits=0x10"}, Labels: labels.MustParse("SM-BOOT-02")},
	{Name: "bits-30", Append: []string{"ftrace_stackmap.bits=30"}, Labels: labels.MustParse("SM-BOOT-02")},
	{Name: "bits-3", Append: []string{"ftrace_stackmap.bits=3"}, Labels: labels.MustParse("SM-BOOT-02")},
	{Name: "bits-word", Append: []string{"ftrace_stackmap.bits=many"}, Labels: labels.MustParse("SM-BOOT-02")},
	{Name: "bits-minus", Append: []string{"ftrace_stackmap.bits=-5"}, Labels: labels.MustParse("SM-BOOT-02")},
	{Name: "bits-trailing", Append: []string{"ftrace_stackmap.bits=12abc"}, Labels: labels.MustParse("SM-BOOT-02")},
	{Name: "bits-bare", Append: []string{"ftrace_stackmap.bits"}, Labels: labels.MustParse("SM-BOOT-03")},
	// The smallest map, on one CPU, filled past its capacity: drops, the
	// success rate and the exports at capacity, and a reset of a full map.
	{Name: "full-map", Append: []string{"ftrace_stackmap.bits=10"}, Labels: labels.MustParse(LabelFullMap), Long: true},
	// A second CPU, to take off line and back with the map in use. Not
	// Long: beside two other boots its second CPU is a third busy thread
	// on a 2-core host (the sanitized default boot took 40 % longer when
	// it started early); last, it overlaps the fewest.
	{Name: "two-cpus", Labels: labels.MustParse(LabelTwoCPUs), CPUs: 2},
	// The hot path under load, on two CPUs, with the smallest map so that
	// it fills and the full-stack fallback runs too: `make stress`.
	{Name: "stress", Append: []string{"ftrace_stackmap.bits=10"}, Labels: labels.MustParse(LabelStress), CPUs: 2, OptIn: LabelStress},
	// The series' operating model: stackmap and stacks on from the command
	// line with an event enabled there, the smallest map, two CPUs, actors
	// for as long as asked: `make torture`.
	{Name: "torture", Append: []string{"trace_options=stackmap,stacktrace", "trace_event=sched:sched_process_exec", "ftrace_stackmap.bits=10"},
		Labels: labels.MustParse(LabelTorture), CPUs: 2, OptIn: LabelTorture},
}

// Plans are the boots a full run makes, default first: a copy, so no
// caller changes them for the others.
func Plans() []BootPlan { return slices.Clone(plans) }

// StartOrder is the order a run starts its plans' boots in: the default
// boot first (it tells whether the kernel has the feature), then the long
// ones, then the rest, each in plan order. Reports keep plan order.
func StartOrder(plans []BootPlan) []int {
	rank := func(p BootPlan) int {
		switch {
		case p.IsDefault():
			return 0
		case p.Long:
			return 1
		}
		return 2
	}
	order := make([]int, len(plans))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return rank(plans[a]) - rank(plans[b]) })
	return order
}

// Filter is the boot's label filter narrowed by the user's.
func (p BootPlan) Filter(user labels.Filter) labels.Filter { return user.And(p.Labels) }

// Prefixed names a spec's containers after the boot that runs it; the
// default boot's specs keep their own names.
func (p BootPlan) Prefixed(texts []string) []string {
	if p.IsDefault() {
		return texts
	}
	return append([]string{"boot " + p.Name}, texts...)
}
