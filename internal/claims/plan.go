// SPDX-License-Identifier: GPL-2.0-only

package claims

import "fmt"

// PlanBoot is one boot of the claims plan.
type PlanBoot struct {
	Name  string
	Bits  int // ftrace_stackmap.bits=; 0 boots without it (the default size)
	CPUs  int
	Parts []string
}

// Append is the boot's own kernel command line.
func (b PlanBoot) Append() []string {
	if b.Bits == 0 {
		return nil
	}
	return []string{fmt.Sprintf("ftrace_stackmap.bits=%d", b.Bits)}
}

// Plan is the claims plan: the default size measures every part, on two
// CPUs so that they can race; one boot per other size the contract
// allows measures the pool, so that its cost is seen per bits and by
// difference between sizes.
var Plan = []PlanBoot{
	{Name: "claims", CPUs: 2, Parts: Parts},
	{Name: "claims-bits-10", Bits: 10, CPUs: 1, Parts: []string{PartPool}},
	{Name: "claims-bits-12", Bits: 12, CPUs: 1, Parts: []string{PartPool}},
	{Name: "claims-bits-16", Bits: 16, CPUs: 1, Parts: []string{PartPool}},
	{Name: "claims-bits-18", Bits: 18, CPUs: 1, Parts: []string{PartPool}},
}
