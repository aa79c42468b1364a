// SPDX-License-Identifier: GPL-2.0-only

package stackmap

import (
	"encoding/binary"
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ftrace-stackmap/conformance/harness"
	fmtx "github.com/ftrace-stackmap/conformance/internal/stackmapfmt"
)

var _ = describe("reading the nodes under load", func() {
	harness.ReqIt("SM-ROBUST-01", "returns well-formed data from every node while a traced workload runs", func(ctx SpecContext) {
		tfs := harness.Root()
		quiet(tfs)
		harness.Set(tfs, optionNode, "1")
		resetMap(tfs)
		harness.Set(tfs, "options/stacktrace", "1")
		harness.Set(tfs, execEnable, "1")

		// The workload is quick: it keeps going, traced, until every node
		// has been read three times while it runs.
		minReads := 3 * len(allNodes)
		problems, reads := harness.ReadUnderLoad(ctx, tfs, 3, false, allNodes, wellFormed, func(reads func() int) {
			traceWorkloadUntil(tfs, workloadRuns, func() bool { return reads() >= minReads })
		})
		if len(problems) > 0 {
			// A node that is ill-formed at rest too is broken for a reason
			// another requirement covers: that one reports it.
			readBlocks(tfs)
			readStat(tfs)
			readBin(tfs)
		}
		Expect(problems).To(BeEmpty(), "after %d reads", reads)
		Expect(reads).To(BeNumerically(">=", 3), "the readers barely ran")
	})
})

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
