// SPDX-License-Identifier: GPL-2.0-only

// Package stackmap checks the ftrace stackmap ABI: one spec per requirement
// of the contract (CONTRACT.md), named by its IDs.
package stackmap

import (
	"github.com/ftrace-stackmap/conformance/internal/contract"
	. "github.com/onsi/ginkgo/v2"

	"github.com/ftrace-stackmap/conformance/harness"
)

// Nodes of the feature, relative to the tracefs root.
const (
	optionNode = "options/stackmap"
	mapNode    = "stack_map"
	statNode   = "stack_map_stat"
	binNode    = "stack_map_bin"
)

// featureMissing says why the kernel does not have the feature, or "" when it
// has. Both the option and the text export must be there; an option without
// the map is a failed init, which SM-INIT-01 reports as a failure and every
// other spec as the reason it cannot run.
func featureMissing(t *harness.TraceFS) string {
	hasOption, hasMap := t.Exists(optionNode), t.Exists(mapNode)
	switch {
	case !hasOption && !hasMap:
		return contract.NoStackmapFeature + " (no options/stackmap, no stack_map)"
	case !hasOption:
		return "kernel has stack_map but no options/stackmap"
	case !hasMap:
		return "options/stackmap exists but stack_map does not: map init failed (see SM-INIT-01)"
	}
	return ""
}

// requireFeature ends the spec as UNSUPPORTED when the feature is absent.
func requireFeature(t *harness.TraceFS) {
	if why := featureMissing(t); why != "" {
		AddReportEntry(contract.FeatureEntry, why)
		harness.Unsupported("%s", why)
	}
}

// describe declares a container of specs that need the feature: on a
// kernel without it each of them ends UNSUPPORTED with the reason.
func describe(text string, args ...any) bool {
	body := args[len(args)-1].(func())
	args[len(args)-1] = func() {
		BeforeEach(func() { requireFeature(harness.Root()) })
		body()
	}
	return Describe(text, append([]any{Label(contract.LabelStackmap)}, args...)...)
}
