package stackmap

import (
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/sys/unix"

	"github.com/ftrace-stackmap/conformance/harness"
)

const instanceName = "smct-stackmap"

// newInstance makes a fresh instance and removes it when the spec ends,
// if the spec did not.
func newInstance(tfs *harness.TraceFS) (*harness.TraceFS, string) {
	harness.Require(tfs, harness.Node("instances"))
	dir := tfs.Path("instances/" + instanceName)
	if err := os.Mkdir(dir, 0o755); err != nil {
		harness.Unresolved("cannot make instance %s: %v", instanceName, err)
	}
	DeferCleanup(func() {
		if _, err := os.Stat(dir); err == nil {
			os.Remove(dir)
		}
	})
	return tfs.Instance(instanceName), dir
}

var _ = describe("stackmap and instances", func() {
	harness.ReqIt("SM-INST-01", "gives a new instance no stackmap option and no stack_map nodes", func() {
		inst, _ := newInstance(harness.Root())
		for _, n := range []string{optionNode, mapNode, statNode, binNode} {
			Expect(inst.Exists(n)).To(BeFalse(), "instance has %s", n)
		}
	})

	harness.ReqIt("SM-INST-02", "rejects stackmap in an instance's trace_options (v3: accepts it without effect)", func() {
		tfs := harness.Root()
		inst, _ := newInstance(tfs)
		top, err := tfs.ReadTrimmed(optionNode)
		Expect(err).NotTo(HaveOccurred())
		err = inst.Write("trace_options", "stackmap")
		if harness.Profile() == harness.ProfileV3 {
			Expect(err).NotTo(HaveOccurred(), "v3: writing stackmap to an instance's trace_options")
			Expect(tfs.ReadTrimmed(optionNode)).To(Equal(top), "the instance's write changed the top-level option")
			return
		}
		Expect(harness.Errno(err)).To(Equal(unix.EINVAL), "writing stackmap to an instance's trace_options: got %v, want EINVAL", err)
		opts, err := inst.Read("trace_options")
		Expect(err).NotTo(HaveOccurred())
		Expect(hasLine(opts, "nostackmap")).To(BeTrue(), "the instance's trace_options has no line nostackmap")
		Expect(hasLine(opts, "stackmap")).To(BeFalse(), "the instance's trace_options has a line stackmap")
		Expect(inst.Write("trace_options", "nostackmap")).To(Succeed(), "writing nostackmap to an instance's trace_options")
	})

	harness.ReqIt("SM-INST-03", "lets the instance be removed afterwards", func() {
		inst, dir := newInstance(harness.Root())
		inst.Write("trace_options", "stackmap") // its outcome is SM-INST-02's question
		Expect(os.Remove(dir)).To(Succeed(), "rmdir of the instance")
		Expect(dir).NotTo(BeADirectory())
	})
})
