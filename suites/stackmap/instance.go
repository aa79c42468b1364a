// SPDX-License-Identifier: GPL-2.0-only

package stackmap

import (
	"fmt"
	"iter"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/sys/unix"

	"github.com/ftrace-stackmap/conformance/harness"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	fmtx "github.com/ftrace-stackmap/conformance/internal/stackmapfmt"
)

const instanceName = "smct-stackmap"

// newInstance makes a fresh instance and removes it when the spec ends,
// if the spec did not.
func newInstance(tfs *harness.TraceFS, name string) (*harness.TraceFS, string) {
	harness.Require(tfs, harness.Node("instances"))
	dir := tfs.Path("instances/" + name)
	harness.Must(os.Mkdir(dir, 0o755), "making instance %s", name)
	DeferCleanup(func() {
		if _, err := os.Stat(dir); err == nil {
			os.Remove(dir)
		}
	})
	return tfs.Instance(name), dir
}

// topLevelStates are the top-level stackmap values an instance is made
// under: an instance must not inherit the flag when it is on.
var topLevelStates = []string{"0", "1"}

// instancesUnder yields a fresh instance made under each top-level state
// of the option, with the state it was made under.
func instancesUnder(tfs *harness.TraceFS) iter.Seq2[string, *harness.TraceFS] {
	return func(yield func(string, *harness.TraceFS) bool) {
		quiet(tfs)
		for _, top := range topLevelStates {
			harness.Set(tfs, optionNode, top)
			inst, _ := newInstance(tfs, instanceName+"-top"+top)
			if !yield(top, inst) {
				return
			}
		}
	}
}

// inheritedFlag says what is wrong when an instance's trace_options shows
// stackmap set, or nil: SM-INST-01's question.
func inheritedFlag(inst *harness.TraceFS, top string) error {
	opts, err := inst.Read("trace_options")
	harness.Must(err, "reading the instance's trace_options")
	if harness.HasLine(opts, "stackmap") {
		return fmt.Errorf("an instance made with the top-level options/stackmap=%s lists stackmap set in its trace_options", top)
	}
	return nil
}

var _ = describe("stackmap and instances", func() {
	harness.ReqIt("SM-INST-01", "gives a new instance no stackmap option, no stack_map nodes and no inherited flag, with the top-level option off or on", func() {
		tfs := harness.Root()
		for top, inst := range instancesUnder(tfs) {
			for _, n := range []string{optionNode, mapNode, statNode, binNode} {
				Expect(inst.Exists(n)).To(BeFalse(), harness.Clause("SM-INST-01.1", "an instance made with the top-level options/stackmap=%s has %s", top, n))
			}
			harness.FailOn(inheritedFlag(inst, top), harness.Clause("SM-INST-01.2", ""))
			if top == "1" {
				By("tracing stacks in an instance made while the top-level option is on")
				Expect(instanceStackIDs(inst)).To(BeZero(), harness.Clause("SM-INST-01.2", "events of an instance made with the top-level stackmap on carry <stack_id N>"))
			}
		}
	})

	harness.ReqIt("SM-INST-02", "rejects stackmap in an instance's trace_options (v3: accepts it without effect)", func() {
		tfs := harness.Root()
		for top, inst := range instancesUnder(tfs) {
			harness.Prerequisite("SM-INST-01", inheritedFlag(inst, top))
			err := inst.Write("trace_options", "stackmap")
			if harness.Profile() == contract.ProfileV3 {
				Expect(err).NotTo(HaveOccurred(), harness.Clause("SM-INST-02.1", "v3: writing stackmap to an instance's trace_options"))
				Expect(tfs.ReadTrimmed(optionNode)).To(Equal(top), harness.Clause("SM-INST-02.1", "the instance's write changed the top-level option"))
				continue
			}
			Expect(harness.Errno(err)).To(Equal(unix.EINVAL), harness.Clause("SM-INST-02.1", "writing stackmap to an instance's trace_options (top-level options/stackmap=%s): got %s, want EINVAL", top, errText(err)))
			opts, err := inst.Read("trace_options")
			harness.Must(err, "reading the instance's trace_options")
			Expect(harness.HasLine(opts, "nostackmap")).To(BeTrue(), harness.Clause("SM-INST-02.1", "the instance's trace_options has no line nostackmap"))
			Expect(harness.HasLine(opts, "stackmap")).To(BeFalse(), harness.Clause("SM-INST-02.1", "the instance's trace_options has a line stackmap"))
			Expect(inst.Write("trace_options", "nostackmap")).To(Succeed(), harness.Clause("SM-INST-02.1", "writing nostackmap to an instance's trace_options"))
		}
	})

	harness.ReqIt("SM-INST-03", "lets the instance be removed afterwards", func() {
		inst, dir := newInstance(harness.Root(), instanceName)
		inst.Write("trace_options", "stackmap") // its outcome is SM-INST-02's question
		Expect(os.Remove(dir)).To(Succeed(), harness.Clause("SM-INST-03.1", "rmdir of the instance"))
		Expect(dir).NotTo(BeADirectory(), harness.Clause("SM-INST-03.1", "the instance after its rmdir"))
	})
})

// instanceStackIDs traces the workload's exec events with a stack in the
// instance alone and returns how many carry <stack_id N>.
func instanceStackIDs(inst *harness.TraceFS) int {
	harness.Require(inst, harness.Event(execEvent))
	harness.Set(inst, "options/stacktrace", "1")
	harness.Set(inst, execEnable, "1")
	harness.Set(inst, "tracing_on", "1")
	harness.Must(harness.RunWorkload(workloadRuns), "running the workload")
	harness.Must(inst.Write("tracing_on", "0"), "turning the instance's tracing off")
	text, err := inst.Read("trace")
	harness.Must(err, "reading the instance's trace")
	if strings.Count(text, "sched_process_exec:") == 0 {
		harness.Unresolved("the instance recorded no sched_process_exec event to look at:\n%s", text)
	}
	return len(fmtx.ParseTrace(text).IDs)
}
