// SPDX-License-Identifier: GPL-2.0-only

// Package stackmap checks the ftrace stackmap ABI: one spec per requirement
// of the contract (CONTRACT.md), named by its IDs.
package stackmap

import (
	"errors"

	. "github.com/onsi/ginkgo/v2"

	"github.com/ftrace-stackmap/conformance/harness"
	"github.com/ftrace-stackmap/conformance/internal/contract"
)

// Nodes of the feature, relative to the tracefs root.
const (
	optionNode = "options/stackmap"
	mapNode    = "stack_map"
	statNode   = "stack_map_stat"
	binNode    = "stack_map_bin"
)

// featureErr says whether the kernel has the feature: nil when it has, an
// error that Is harness.ErrNotSupported saying why not, or the error of a
// lookup that could not tell. Both the option and the text export must be
// there; an option without the map is a failed init, which SM-INIT-01
// reports as a failure and every other spec as the reason it cannot run.
func featureErr(t *harness.TraceFS) error {
	hasOption, err := t.Has(optionNode)
	if err != nil {
		return err
	}
	hasMap, err := t.Has(mapNode)
	if err != nil {
		return err
	}
	switch {
	case !hasOption && !hasMap:
		return harness.Lacks("%s (no options/stackmap, no stack_map)", contract.NoStackmapFeature)
	case !hasOption:
		return harness.Lacks("kernel has stack_map but no options/stackmap")
	case !hasMap:
		return harness.Lacks("options/stackmap exists but stack_map does not: map init failed (see SM-INIT-01)")
	}
	return nil
}

// requireFeature ends the spec as UNSUPPORTED when the feature is absent,
// and as UNRESOLVED when tracefs could not be looked at.
func requireFeature(t *harness.TraceFS) {
	err := featureErr(t)
	if errors.Is(err, harness.ErrNotSupported) {
		AddReportEntry(contract.FeatureEntry, err.Error())
	}
	harness.Supported(err)
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
