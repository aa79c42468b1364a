// SPDX-License-Identifier: GPL-2.0-only

package stackmap

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ftrace-stackmap/conformance/harness"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	fmtx "github.com/ftrace-stackmap/conformance/internal/stackmapfmt"
)

var _ = describe("deep stacks", func() {
	harness.ReqIt("SM-DEPTH-01", "records a stack deeper than 64 frames in full, never cut and stored (v3: cut to 64 and stored)", harness.Case("deep"), func() {
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

	harness.ReqIt("SM-DEPTH-01", "stores a stack of exactly 64 frames as an id", harness.Case("boundary"), func() {
		tfs := harness.Root()
		quiet(tfs)
		harness.Require(tfs, harness.Tracer("function"), harness.Node("set_ftrace_filter"))
		harness.SetUpDeepChain(tfs)
		sender := harness.NewDeepSender()
		deepest := harness.DeepChainEvents[len(harness.DeepChainEvents)-1]

		By("finding the functions on the deep stack's path, stackmap off")
		harness.Set(tfs, optionNode, "0")
		harness.Set(tfs, "options/stacktrace", "1")
		harness.Set(tfs, "events/synthetic/"+deepest+"/enable", "1")
		functions := deepPath(deepTrace(tfs, sender, deepest))
		// Every event of the chain fires at each device of the stack, each
		// deeper than the last: their stacks and the functions' interleave.
		chain := append([]string{"net/net_dev_start_xmit"}, prefixed("synthetic/", harness.DeepChainEvents)...)
		for _, e := range chain {
			harness.Set(tfs, "events/"+e+"/enable", "1")
		}

		By(fmt.Sprintf("tracing the %d functions of that path with a stack each, and the chain's events, stackmap on", len(functions)))
		traced := filterFunctions(tfs, functions)
		if traced == 0 {
			harness.Unsupported("none of the deep path's %d functions can be traced", len(functions))
		}
		harness.Set(tfs, "current_tracer", "function")
		harness.Set(tfs, funcStacks, "1")
		harness.Set(tfs, optionNode, "1")
		resetMap(tfs)
		var at depthsSeen
		at.send(tfs, sender)
		// A stacktrace trigger takes the events' stacks from another depth
		// than options/stacktrace does: the depths the first send skipped
		// (each level of the chain adds an even count on some arches).
		// The functions stay out of this send: its stacks are the
		// triggers' alone, which must take the map (SM-OPT-03.1).
		harness.Must(tfs.Write("options/stacktrace", "0"), "turning stacktrace off")
		harness.Must(tfs.Write("current_tracer", "nop"), "setting the nop tracer")
		for _, e := range chain {
			node := "events/" + e + "/trigger"
			harness.Must(tfs.Append(node, "stacktrace"), "setting a stacktrace trigger on %s", e)
			DeferCleanup(tfs.Append, node, "!stacktrace")
		}
		if ids := at.send(tfs, sender); ids == 0 {
			harness.Prerequisite("SM-OPT-03", fmt.Errorf("stacktrace triggers on %v with stackmap on gave no <stack_id N>", chain))
		}
		st := readStat(tfs)
		AddReportEntry("boundary", map[string]any{"stacks of 64 frames stored": at.stored, "recorded in full": at.full, "deepest": slices.Max(slices.Collect(maps.Keys(at.seen)))})
		Expect(at.full).To(BeZero(), harness.Clause("SM-DEPTH-01.2", "%d stacks of exactly %d frames were recorded in full, %d stored, the map holding %d of %d",
			at.full, fmtx.MaxDepth, at.stored, st.Entries, st.Capacity))
		if at.stored == 0 {
			harness.Unsupported("the deep path's %d traced functions and its chain's events gave no stack of exactly %d frames: depths %v", traced, fmtx.MaxDepth, slices.Sorted(maps.Keys(at.seen)))
		}
	})
})

// depthsSeen is what sends through the deep path gave: the stacks of
// exactly MaxDepth frames stored and recorded in full, and every depth.
type depthsSeen struct {
	stored, full int
	seen         map[int]bool
}

// send sends one datagram with tracing on, adds trace's stacks and
// returns how many of them were ids.
func (d *depthsSeen) send(tfs *harness.TraceFS, sender *harness.DeepSender) (ids int) {
	harness.Must(tfs.Write("trace", ""), "clearing trace")
	harness.Must(tfs.Write("tracing_on", "1"), "turning tracing on")
	err := sender.Send()
	harness.Must(tfs.Write("tracing_on", "0"), "turning tracing off")
	harness.Must(err, "sendfile() through the stacked devices")
	stacks := fmtx.ParseTrace(readTrace(tfs))
	blocks := fmtx.IDs(readBlocks(tfs))
	if d.seen == nil {
		d.seen = map[int]bool{}
	}
	for _, s := range stacks.Order {
		depth := s.Depth
		if s.ID >= 0 {
			depth = blocks[s.ID].Depth
		}
		d.seen[depth] = true
		if s.ID >= 0 {
			ids++
		}
		switch {
		case s.ID >= 0 && depth == fmtx.MaxDepth:
			d.stored++
		case s.ID < 0 && depth == fmtx.MaxDepth:
			d.full++
		}
	}
	return ids
}

// deepPath is the functions of the deepest <stack trace> of trace: their
// names, without offsets, each once.
func deepPath(t string) []string {
	var deepest, cur []string
	for _, line := range strings.Split(t, "\n") {
		if f, ok := strings.CutPrefix(line, " => "); ok {
			name, _, _ := strings.Cut(f, "+")
			name, _, _ = strings.Cut(name, " ")
			if name != "[FTRACE" && !slices.Contains(cur, name) {
				cur = append(cur, name)
			}
			continue
		}
		if len(cur) > len(deepest) {
			deepest = cur
		}
		cur = nil
	}
	if len(cur) > len(deepest) {
		deepest = cur
	}
	return deepest
}

// prefixed is each name with prefix before it.
func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// deepTrace sends one datagram through the deep device stack with
// tracing on and returns trace's text; the deepest event of the chain must
// have fired.
func deepTrace(tfs *harness.TraceFS, sender *harness.DeepSender, event string) string {
	traceDeep(tfs, sender, event)
	return readTrace(tfs)
}

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
