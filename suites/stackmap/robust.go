// SPDX-License-Identifier: GPL-2.0-only

package stackmap

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ftrace-stackmap/conformance/harness"
	fmtx "github.com/ftrace-stackmap/conformance/internal/stackmapfmt"
)

var _ = describe("reading the nodes under load", func() {
	harness.ReqIt("SM-ROBUST-01", "returns well-formed data from every node while a traced workload runs", harness.Case("workload"), func(ctx SpecContext) {
		tfs := harness.Root()
		quiet(tfs)
		harness.Set(tfs, optionNode, "1")
		resetMap(tfs)
		harness.Set(tfs, "options/stacktrace", "1")
		harness.Set(tfs, execEnable, "1")

		// The workload is quick: it keeps going, traced, until every node
		// has been read three times while it runs.
		for _, n := range allNodes {
			statExport(tfs, n) // a missing export is SM-NODE-02's
		}
		minReads := 3 * len(allNodes)
		problems, reads := harness.ReadUnderLoad(ctx, tfs, 3, false, allNodes, wellFormed, func(reads func() int) {
			traceWorkloadUntil(tfs, workloadRuns, func() bool { return reads() >= minReads })
		})
		if len(problems) > 0 {
			atRest(tfs)
		}
		Expect(problems).To(BeEmpty(), harness.Clause("SM-ROBUST-01.1", "after %d reads", reads))
		Expect(reads).To(BeNumerically(">=", 3), harness.Clause("SM-ROBUST-01.1", "the readers barely ran"))
	})
})

var _ = describe("reading across a reset", func() {
	harness.ReqIt("SM-ROBUST-01", "gives a stack_map reader that reads on across a reset whole blocks, ids ascending, none twice", harness.Case("reader-reset"), func() {
		tfs := harness.Root()
		record(tfs, workloadRuns)
		readBlocks(tfs) // a map ill-formed at rest is SM-TEXT-01's or SM-TEXT-02's
		text, err := tfs.Read(mapNode)
		harness.Prerequisite("SM-TEXT-01", wrap(err, "reading stack_map"))
		second := strings.Index(text, "\nstack_id ")
		if second < 0 {
			harness.Unresolved("stack_map holds one block after a traced workload: nothing to stop a reader in the middle of")
		}
		f, err := os.Open(tfs.Path(mapNode))
		harness.Must(err, "opening stack_map")
		defer f.Close()
		// The first read ends inside the second block: the reader has a
		// place in the map when the reset comes.
		head := make([]byte, second+12)
		_, err = io.ReadFull(f, head)
		harness.Must(err, "reading the first %d bytes of stack_map", len(head))
		resetAsSetup(tfs, "0")
		// The same stacks come back, at the same ids: ids are slots of
		// the stacks' hashes.
		traceWorkload(tfs, workloadRuns)
		rest, err := io.ReadAll(f)
		Expect(err).NotTo(HaveOccurred(), harness.Clause("SM-ROBUST-01.2", "reading on after the reset"))
		whole := string(head) + string(rest)
		blocks, err := fmtx.ParseText(whole)
		Expect(err).NotTo(HaveOccurred(), harness.Clause("SM-ROBUST-01.2", "what a reader got across a reset:\n%s", whole))
		harness.FailOn(fmtx.CheckOrder(blocks), harness.Clause("SM-ROBUST-01.2", "what a reader got across a reset"))
		harness.FailOn(fmtx.CheckUnique(blocks), harness.Clause("SM-ROBUST-01.2", "what a reader got across a reset"))
	})
})

// atRest reads every node with nothing running: one that is ill-formed
// at rest too is broken for a reason another requirement covers, and
// that one reports it.
func atRest(tfs *harness.TraceFS) {
	readBlocks(tfs)
	readStat(tfs)
	readBin(tfs)
}

// allNodes are the feature's exports, read under load.
var allNodes = []string{mapNode, statNode, binNode}

// wellFormed parses one read of a node. A binary snapshot may end early,
// but only between two records.
func wellFormed(node string, data []byte) error {
	var err error
	switch node {
	case mapNode:
		_, err = fmtx.ParseText(string(data))
	case statNode:
		_, err = fmtx.ParseStat(string(data))
	case binNode:
		_, err = fmtx.ParseBin(data, binary.NativeEndian)
		if errors.Is(err, fmtx.ErrEndsAtRecordBoundary) {
			err = nil
		}
	}
	return err
}
