// SPDX-License-Identifier: GPL-2.0-only

package contract

import (
	"slices"
	"testing"
)

// A run starts the default boot, then the long boots, then the short
// ones, each group in plan order; a plan without the default keeps the
// rule.
func TestStartOrder(t *testing.T) {
	names := func(plans []BootPlan) []string {
		var out []string
		for _, i := range StartOrder(plans) {
			out = append(out, plans[i].Name)
		}
		return out
	}
	all := Plans()
	got := names(all)
	want := []string{"default", "full-map", "trace-options", "bits-12", "bits-hex", "bits-30", "bits-3",
		"bits-word", "bits-minus", "bits-trailing", "bits-bare", "two-cpus", "stress", "torture"}
	if !slices.Equal(got, want) {
		t.Errorf("start order %v, want %v", got, want)
	}
	noDefault := slices.DeleteFunc(Plans(), func(p BootPlan) bool { return p.IsDefault() })
	if got := names(noDefault); got[0] != "full-map" || got[1] != "trace-options" {
		t.Errorf("without the default boot: %v, want full-map then trace-options first", got)
	}
}
