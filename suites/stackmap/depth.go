// SPDX-License-Identifier: GPL-2.0-only

package stackmap

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ftrace-stackmap/conformance/harness"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	fmtx "github.com/ftrace-stackmap/conformance/internal/stackmapfmt"
)

var _ = describe("deep stacks", func() {
	harness.ReqIt("SM-DEPTH-01", "records a stack deeper than 64 frames in full, never cut and stored (v3: cut to 64 and stored)", func() {
		tfs := harness.Root()
		quiet(tfs)
		harness.SetUpDeepChain(tfs)
		sender := harness.NewDeepSender()
		deepest := harness.DeepChainEvents[len(harness.DeepChainEvents)-1]
		harness.Set(tfs, "events/synthetic/"+deepest+"/enable", "1")
		harness.Set(tfs, "options/stacktrace", "1")

		By("measuring the deep stack with stackmap off")
		harness.Set(tfs, optionNode, "0")
		depth := traceDeep(tfs, sender, deepest).Deepest()
		if depth <= fmtx.MaxDepth {
			harness.Unsupported("the deep-stack workload reached %d frames on this kernel, not more than %d", depth, fmtx.MaxDepth)
		}

		By(fmt.Sprintf("sending again with stackmap on: a %d-frame stack", depth))
		harness.Must(tfs.Write(optionNode, "1"), "turning stackmap on")
		resetMap(tfs)
		got := traceDeep(tfs, sender, deepest)
		cut := 0
		for _, b := range readBlocks(tfs) { // deeper than 64 is SM-TEXT-01's
			if b.Depth == fmtx.MaxDepth {
				cut++
			}
		}
		if harness.Profile() == contract.ProfileV3 {
			Expect(got.Deepest()).To(BeNumerically("<=", fmtx.MaxDepth), harness.Clause("SM-DEPTH-01.1", "v3 cuts deep stacks and stores them: a %d-frame <stack trace> in trace", got.Deepest()))
			Expect(cut).To(BeNumerically(">", 0), harness.Clause("SM-DEPTH-01.1", "v3 stores a %d-frame stack cut to %d frames: no block of depth %d", depth, fmtx.MaxDepth, fmtx.MaxDepth))
			return
		}
		Expect(got.Deepest()).To(BeNumerically(">", fmtx.MaxDepth), harness.Clause("SM-DEPTH-01.1",
			"a %d-frame stack was not recorded in full with stackmap on (deepest <stack trace> %d frames; %d blocks of depth %d in stack_map: stored cut?)",
			depth, got.Deepest(), cut, fmtx.MaxDepth))
	})
})

// traceDeep sends one datagram through the deep device stack with tracing
// on and returns what trace says about stacks. The deepest event of the
// chain must have fired.
func traceDeep(tfs *harness.TraceFS, sender *harness.DeepSender, event string) fmtx.TraceStacks {
	harness.Must(tfs.Write("trace", ""), "clearing trace")
	harness.Must(tfs.Write("tracing_on", "1"), "turning tracing on")
	err := sender.Send()
	harness.Must(tfs.Write("tracing_on", "0"), "turning tracing off")
	harness.Must(err, "sendfile() through the stacked devices")
	text := readTrace(tfs)
	if !strings.Contains(text, " "+event+":") {
		harness.Unresolved("the event chain did not reach %s:\n%s", event, text)
	}
	return fmtx.ParseTrace(text)
}
