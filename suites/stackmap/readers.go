// SPDX-License-Identifier: GPL-2.0-only

package stackmap

import (
	"errors"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/sys/unix"

	"github.com/ftrace-stackmap/conformance/harness"
	fmtx "github.com/ftrace-stackmap/conformance/internal/stackmapfmt"
)

// Ids reach a user through every file that prints the ring buffer: trace,
// each CPU's trace, the consuming trace_pipe (whole and per CPU) and the
// snapshot. Each is a reader of its own, and SM-TRACE-01 holds in each.

var _ = describe("the readers of ids", func() {
	harness.ReqIt("SM-TRACE-01", "names the right block in every <stack_id N> a CPU's own trace file shows", harness.Case("per-cpu"), func() {
		tfs := harness.Root()
		record(tfs, workloadRuns)
		for _, cpu := range cpusWithTrace(tfs) {
			node := fmt.Sprintf("per_cpu/cpu%d/trace", cpu)
			text, err := tfs.Read(node)
			harness.Must(err, "reading %s", node)
			judgeReader(tfs, node, text, false)
		}
	})

	harness.ReqIt("SM-TRACE-01", "names the right block in every <stack_id N> that trace_pipe shows, whole and per CPU", harness.Case("pipe"), func() {
		tfs := harness.Root()
		for _, node := range []string{"per_cpu/cpu0/trace_pipe", "trace_pipe"} {
			record(tfs, workloadRuns)
			judgeReader(tfs, node, drain(tfs, node), false)
		}
	})

	harness.ReqIt("SM-TRACE-01", "names the right block in every <stack_id N> that the snapshot shows", harness.Case("snapshot"), func() {
		tfs := harness.Root()
		record(tfs, workloadRuns)
		snapshotOwn(tfs)
		text, err := tfs.Read("snapshot")
		harness.Must(err, "reading snapshot")
		judgeReader(tfs, "snapshot", text, false)
	})
})

// snapshotOwn takes a snapshot of the buffer, and frees it when the spec
// ends: UNSUPPORTED without a snapshot file or with one someone else took.
func snapshotOwn(tfs *harness.TraceFS) {
	harness.Require(tfs, harness.Node("snapshot"))
	text, err := tfs.Read("snapshot")
	harness.Must(err, "reading snapshot")
	if !snapshotFree.MatchString(text) {
		harness.Unsupported("a snapshot buffer is already allocated, by someone else")
	}
	harness.Must(tfs.Write("snapshot", "1"), "taking a snapshot")
	DeferCleanup(tfs.Write, "snapshot", "0")
}

// judgeReader holds the ids a reader of the ring buffer showed (its text)
// to the map: each is a well-formed id (SM-TRACE-01.3) of a block of
// stack_map (.1) below table_size (.2), and names the stack captured for
// its event (.4), as the spec's twin recorded it. A reader that shows no
// id after a recording that put ids in the buffer breaks SM-OPT-03.1,
// unless none was expected (optional).
func judgeReader(tfs *harness.TraceFS, reader, text string, optional bool) {
	for _, p := range fmtx.CheckTrace(text) {
		if p.Owner == fmtx.OwnerIDLine {
			harness.FailOn(p, harness.Clause("SM-TRACE-01.3", "%s", reader))
		}
		broken("reading "+reader, shapeClause(p.Owner), p)
	}
	hits := fmtx.ParseHits(text)
	var ids []int
	for _, h := range hits {
		if h.ID >= 0 {
			ids = append(ids, h.ID)
		}
	}
	if len(ids) == 0 {
		if optional {
			return
		}
		harness.Prerequisite("SM-OPT-03", fmt.Errorf("%s shows no <stack_id N> after %d stack-traced workload runs with stackmap on", reader, workloadRuns))
	}
	list := readBlocks(tfs)
	blocks := fmtx.IDs(list)
	st := readStat(tfs)
	harness.Prerequisite("SM-STAT-02", st.CheckCapacity())
	for _, id := range ids {
		Expect(blocks).To(HaveKey(id), harness.Clause("SM-TRACE-01.1", "%s has <stack_id %d>, stack_map has no block %d", reader, id, id))
		Expect(int64(id)).To(BeNumerically("<", st.TableSize), harness.Clause("SM-TRACE-01.2", "%s: <stack_id %d> is not below table_size %d", reader, id, st.TableSize))
	}
	if twin == nil {
		return // judged only partly, as armTwin noted
	}
	bin := readBin(tfs)
	harness.Prerequisite("SM-BIN-03", agree(bin, list))
	theirs := twinHits()
	if err := twinRecordsIDs(theirs); err != nil {
		harness.Prerequisite("SM-INST-01", err)
	}
	judged, err := harness.Identity(hits, theirs, bin, list)
	if errors.As(err, new(*fmtx.BinError)) {
		harness.Prerequisite("SM-BIN-03", err)
	}
	harness.FailOn(err, harness.Clause("SM-TRACE-01.4", "%s", reader))
	if judged == 0 {
		harness.Unresolved("none of the %d ids %s shows could be paired with the twin instance's record of the same event", len(ids), reader)
	}
}

// twinRecordsIDs says so when the twin instance recorded ids, which an
// instance never does (SM-INST-01): it then holds no stack to judge by.
func twinRecordsIDs(hits []fmtx.Hit) error {
	for _, h := range hits {
		if h.ID >= 0 {
			return fmt.Errorf("the twin instance %s records <stack_id %d> (trace line %d): an instance must not use the map", harness.TwinName, h.ID, h.Line)
		}
	}
	return nil
}

// cpusWithTrace lists the CPUs that have a per_cpu/cpuN/trace.
func cpusWithTrace(tfs *harness.TraceFS) []int {
	var cpus []int
	for cpu := 0; tfs.Exists(fmt.Sprintf("per_cpu/cpu%d/trace", cpu)); cpu++ {
		cpus = append(cpus, cpu)
	}
	if len(cpus) == 0 {
		harness.Unsupported("no per_cpu/cpuN/trace files")
	}
	return cpus
}

// drain reads a consuming reader (trace_pipe, a per-CPU trace_pipe or
// trace_pipe_raw) until it has nothing more, without waiting for more.
// The file is read with plain system calls: Go's poller would wait on
// EAGAIN for a pipe that supports poll.
func drain(tfs *harness.TraceFS, node string) string {
	fd, err := unix.Open(tfs.Path(node), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	harness.Must(err, "opening %s", node)
	defer unix.Close(fd)
	var b strings.Builder
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(fd, buf)
		switch {
		case err == unix.EAGAIN || (err == nil && n == 0):
			return b.String()
		case err == unix.EINTR:
			continue
		case err != nil:
			harness.Must(err, "reading %s", node)
		}
		b.Write(buf[:n])
	}
}
