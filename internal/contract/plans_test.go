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
	want := []string{"default", "full-map", "two-cpus", "trace-options", "bits-12", "bits-hex", "bits-30", "bits-3",
		"bits-word", "bits-minus", "bits-trailing", "bits-bare", "stress", "torture"}
	if !slices.Equal(got, want) {
		t.Errorf("start order %v, want %v", got, want)
	}
	short := slices.DeleteFunc(Plans(), func(p BootPlan) bool { return p.IsDefault() || p.Name == "full-map" })
	if got := names(short); got[0] != "two-cpus" || got[1] != "trace-options" {
		t.Errorf("without default and full-map: %v, want two-cpus then trace-options first", got)
	}
}
