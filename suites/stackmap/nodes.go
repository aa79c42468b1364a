package stackmap

import (
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/sys/unix"

	"github.com/ftrace-stackmap/conformance/harness"
)

var _ = Describe("stackmap nodes", Label("stackmap"), func() {
	var tfs *harness.TraceFS
	BeforeEach(func() { tfs = harness.Root() })

	harness.ReqIt("SM-INIT-01", "has stack_map whenever options/stackmap exists, or refuses the option", func() {
		if !tfs.Exists(optionNode) {
			harness.Unsupported("%s", featureMissing(tfs))
		}
		if tfs.Exists(mapNode) {
			return // the option has its map: nothing more to ask
		}
		// The map failed to initialise: the option must be off and refuse on.
		Expect(harness.Profile()).To(Equal(harness.ProfileV4), "v3 has no init-failure contract")
		Expect(tfs.ReadTrimmed(optionNode)).To(Equal("0"), "options/stackmap without a map")
		err := tfs.Write(optionNode, "1")
		if err == nil {
			DeferCleanup(tfs.Write, optionNode, "0")
		}
		Expect(harness.Errno(err)).To(Equal(unix.EINVAL), "writing 1 to options/stackmap without a map: %v", err)
		Fail("options/stackmap exists but stack_map does not: map init failed")
	})

	Context("when the kernel has the feature", func() {
		BeforeEach(func() { requireFeature(tfs) })

		harness.ReqIt("SM-NODE-01", "has options/stackmap at the top level", func() {
			Expect(tfs.Exists(optionNode)).To(BeTrue())
		})

		harness.ReqIt("SM-NODE-02", "has stack_map, stack_map_stat and stack_map_bin at the top level", func() {
			for _, n := range []string{mapNode, statNode, binNode} {
				Expect(tfs.Exists(n)).To(BeTrue(), "no %s", n)
			}
		})

		harness.ReqIt("SM-MODE-01", "gives stack_map mode 0640, the others 0440, all owned like trace", func() {
			trace, err := tfs.Stat("trace")
			Expect(err).NotTo(HaveOccurred())
			for _, n := range []struct {
				node string
				perm os.FileMode
			}{{mapNode, 0o640}, {statNode, 0o440}, {binNode, 0o440}} {
				got, err := tfs.Stat(n.node)
				Expect(err).NotTo(HaveOccurred())
				Expect(got.Perm).To(Equal(n.perm), "%s mode %#o, want %#o", n.node, got.Perm, n.perm)
				Expect([]uint32{got.UID, got.GID}).To(Equal([]uint32{trace.UID, trace.GID}),
					"%s owner %d:%d, want %d:%d like trace", n.node, got.UID, got.GID, trace.UID, trace.GID)
			}
		})
	})
})
