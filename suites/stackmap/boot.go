// SPDX-License-Identifier: GPL-2.0-only

package stackmap

import (
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ftrace-stackmap/conformance/harness"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	fmtx "github.com/ftrace-stackmap/conformance/internal/stackmapfmt"
)

const bitsParam = "ftrace_stackmap.bits"

// Capacity bounds of the map, as log2.
const (
	minBits, maxBits, defaultBits = 10, 18, 14
)

// expectedBits is what ftrace_stackmap.bits=value must give: the value read
// as C's strtoul with base 0 does (0x hex, 0 octal, decimal), clamped to
// [10, 18]; the default when it is not a number.
func expectedBits(value string) int {
	n, ok := harness.KernelUint(value)
	if !ok {
		return defaultBits
	}
	return int(min(max(n, minBits), maxBits))
}

// checkStackIDsResolve is SM-TRACE-01's check on the current trace, for
// a map on from boot.
func checkStackIDsResolve(tfs *harness.TraceFS) {
	ids := fmtx.ParseTrace(readTrace(tfs)).IDs
	Expect(ids).NotTo(BeEmpty(), harness.Clause("SM-BOOT-01.2", "no <stack_id N> in trace after a stack-traced workload"))
	blocks := fmtx.IDs(readBlocks(tfs))
	for _, id := range ids {
		Expect(blocks).To(HaveKey(id), harness.Clause("SM-BOOT-01.2", "trace has <stack_id %d>, stack_map has no block %d", id, id))
	}
}

var _ = describe("stackmap at boot", Label(contract.LabelNeedsBoot), func() {
	harness.ReqIt("SM-BOOT-01", "turns the map on from trace_options=stackmap,stacktrace and keeps it live", func() {
		tfs := harness.Root()
		value, set, _ := harness.KernelParam("trace_options")
		tokens := strings.Split(value, ",")
		if !set || !slices.Contains(tokens, "stackmap") || !slices.Contains(tokens, "stacktrace") {
			harness.Unsupported("needs a boot with trace_options=stackmap,stacktrace")
		}
		for _, o := range []string{"stackmap", "stacktrace"} {
			got, _ := harness.AtStart().Option(o)
			Expect(got).To(Equal("1"), harness.Clause("SM-BOOT-01.1", "options/%s when userspace started, booted with trace_options=%s", o, value))
		}
		By("turning on a stack source as booted: stackmap and stacktrace stay on")
		quiet(tfs)
		resetMap(tfs)
		harness.Set(tfs, execEnable, "1")
		armTwin(tfs, []string{execEvent})
		traceWorkload(tfs, workloadRuns)
		checkStackIDsResolve(tfs)
	})

	harness.ReqIt("SM-BOOT-02", "sizes the map from ftrace_stackmap.bits=, clamped to 10..18, default 14 when not a number", func() {
		value, set, _ := harness.KernelParam(bitsParam)
		if !set {
			harness.Unsupported("needs a boot with %s=", bitsParam)
		}
		bits := expectedBits(value)
		st := readStat(harness.Root())
		Expect(st.Capacity).To(Equal(int64(1)<<bits), harness.Clause("SM-BOOT-02.1", "booted with %s=%s: capacity %d, want 2^%d = %d", bitsParam, value, st.Capacity, bits, 1<<bits))
		// A map of this size in use: the checkpoint after the spec holds
		// its ids, counters and exports as in every other boot.
		record(harness.Root(), 2)
	})

	harness.ReqIt("SM-BOOT-03", "boots with the default size given a bare ftrace_stackmap.bits", func() {
		if _, _, bare := harness.KernelParam(bitsParam); !bare {
			harness.Unsupported("needs a boot with a bare %s", bitsParam)
		}
		st := readStat(harness.Root())
		Expect(st.Capacity).To(Equal(int64(1)<<defaultBits), harness.Clause("SM-BOOT-03.1", "capacity %d with a bare %s, want the default %d", st.Capacity, bitsParam, 1<<defaultBits))
		record(harness.Root(), 2) // in use, for the checkpoint after the spec
	})
})
