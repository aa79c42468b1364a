// SPDX-License-Identifier: GPL-2.0-only

package stackmap

import (
	"fmt"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/sys/unix"

	"github.com/ftrace-stackmap/conformance/harness"
	"github.com/ftrace-stackmap/conformance/internal/contract"
)

var _ = Describe("stackmap init", Label(contract.LabelStackmap), func() {
	harness.ReqIt("SM-INIT-01", "has stack_map whenever options/stackmap exists; after a failed init the option reads 0 and refuses 1", func() {
		tfs := harness.Root()
		if harness.Profile() != contract.ProfileV4 {
			harness.Unsupported("SM-INIT-01 belongs to the v4 profile only")
		}
		hasOption, err := tfs.Has(optionNode)
		harness.Must(err, "looking for options/stackmap")
		if !hasOption {
			requireFeature(tfs) // no option, no feature: UNSUPPORTED with the reason
		}
		hasMap, err := tfs.Has(mapNode)
		harness.Must(err, "looking for stack_map")
		if hasMap {
			return // the option has its map: nothing more to ask
		}
		By("finding options/stackmap without stack_map: the map failed to initialise")
		const noMap = "options/stackmap exists but stack_map does not: map init failed"
		var problems []string
		if v, err := tfs.ReadTrimmed(optionNode); err != nil || v != "0" {
			problems = append(problems, fmt.Sprintf("options/stackmap reads %q (%s), want 0 without a map", v, errText(err)))
		}
		err = tfs.Write(optionNode, "1")
		if err == nil {
			DeferCleanup(tfs.Write, optionNode, "0")
		}
		if harness.Errno(err) != unix.EINVAL {
			problems = append(problems, fmt.Sprintf("writing 1 to options/stackmap without a map: got %s, want EINVAL", errText(err)))
		}
		// A failed init breaks the first clause; the second says how the
		// option must then behave, the more telling failure when it does not.
		if len(problems) > 0 {
			harness.Violated(harness.Clause("SM-INIT-01.2", "%s (%s)", strings.Join(problems, "; "), noMap))
		}
		harness.Violated(harness.Clause("SM-INIT-01.1", noMap))
	})
})

var _ = describe("stackmap nodes", func() {
	harness.ReqIt("SM-NODE-01", "has options/stackmap at the top level", func() {
		Expect(harness.Root().Path(optionNode)).To(BeAnExistingFile(), harness.Clause("SM-NODE-01.1", "options/stackmap"))
	})

	harness.ReqIt("SM-NODE-02", "has stack_map, stack_map_stat and stack_map_bin at the top level", func() {
		for _, n := range []string{mapNode, statNode, binNode} {
			Expect(harness.Root().Path(n)).To(BeAnExistingFile(), harness.Clause("SM-NODE-02.1", "%s", n))
		}
	})

	harness.ReqIt("SM-MODE-01", "gives stack_map mode 0640, the others 0440, all owned like trace", func() {
		tfs := harness.Root()
		trace, err := tfs.Stat("trace")
		harness.Must(err, "stat of trace")
		for _, n := range []struct {
			node string
			perm os.FileMode
		}{{mapNode, 0o640}, {statNode, 0o440}, {binNode, 0o440}} {
			got := statExport(tfs, n.node)
			Expect(got.Perm).To(Equal(n.perm), harness.Clause("SM-MODE-01.1", "%s mode %#o, want %#o", n.node, got.Perm, n.perm))
			Expect([]uint32{got.UID, got.GID}).To(Equal([]uint32{trace.UID, trace.GID}),
				harness.Clause("SM-MODE-01.2", "%s owner %d:%d, want %d:%d like trace", n.node, got.UID, got.GID, trace.UID, trace.GID))
		}
	})

	harness.ReqIt("SM-EVT-01", "describes the stack_id entry in events/ftrace/stack_id/format", func() {
		format, err := harness.Root().Read("events/ftrace/stack_id/format")
		switch {
		case err != nil:
			harness.Warn(harness.Clause("SM-EVT-01.1", "no events/ftrace/stack_id/format: %v", err))
		case !harness.FieldDeclared(format, "int stack_id"):
			harness.Warn(harness.Clause("SM-EVT-01.1", "events/ftrace/stack_id/format has no `int stack_id` field:\n%s", format))
		}
	})
})
