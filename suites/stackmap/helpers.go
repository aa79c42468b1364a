package stackmap

import (
	"encoding/binary"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ftrace-stackmap/conformance/harness"
	fmtx "github.com/ftrace-stackmap/conformance/harness/stackmapfmt"
)

// The stack source: the workload's runs, each one fork, one exec and one
// exit, each event with a stack. Its counts are exact, it needs no function
// tracer (slow to switch on under emulation), and its three call paths give
// the map several distinct stacks, so their order can be checked.
const (
	execEvent    = "sched/sched_process_exec"
	execEnable   = "events/" + execEvent + "/enable"
	workloadRuns = 5
)

var stackEvents = []string{execEvent, "sched/sched_process_fork", "sched/sched_process_exit"}

// quiet puts the top level in a known state for one spec: nop tracer,
// tracing off, plain trace output. Everything is put back when it ends.
func quiet(tfs *harness.TraceFS) {
	harness.Require(tfs, harness.Event(execEvent))
	harness.Set(tfs, "tracing_on", "0")
	harness.Set(tfs, "current_tracer", "nop")
	for _, o := range []string{"options/raw", "options/hex", "options/bin"} {
		if tfs.Exists(o) {
			harness.Set(tfs, o, "0")
		}
	}
}

// resetMap empties the map as a precondition. Whether reset itself behaves
// is the SM-RESET specs' question; here a failure leaves the spec undecided.
func resetMap(tfs *harness.TraceFS) {
	if err := tfs.Write(mapNode, "0"); err != nil {
		harness.Unresolved("cannot reset the map before the spec: %v", err)
	}
	if err := tfs.Write("trace", ""); err != nil {
		harness.Unresolved("cannot clear trace: %v", err)
	}
}

// record empties the map, runs the workload n times with stackmap and a
// stack on every sched_process_exec, and returns with tracing off.
func record(tfs *harness.TraceFS, n int) {
	quiet(tfs)
	resetMap(tfs)
	harness.Set(tfs, optionNode, "1")
	harness.Set(tfs, "options/stacktrace", "1")
	for _, e := range stackEvents {
		if tfs.Exists("events/" + e + "/enable") {
			harness.Set(tfs, "events/"+e+"/enable", "1")
		}
	}
	traceWorkload(tfs, n)
}

// traceWorkload runs the workload with tracing on, then turns tracing off.
func traceWorkload(tfs *harness.TraceFS, n int) {
	By("running the workload with tracing on")
	if err := tfs.Write("tracing_on", "1"); err != nil {
		harness.Unresolved("cannot turn tracing on: %v", err)
	}
	err := harness.RunWorkload(n)
	if werr := tfs.Write("tracing_on", "0"); werr != nil {
		harness.Unresolved("cannot turn tracing off: %v", werr)
	}
	if err != nil {
		harness.Unresolved("%v", err)
	}
}

// readBlocks reads and parses stack_map; a parse error fails the spec.
func readBlocks(tfs *harness.TraceFS) []fmtx.Block {
	text, err := tfs.Read(mapNode)
	Expect(err).NotTo(HaveOccurred(), "reading stack_map")
	blocks, err := fmtx.ParseText(text)
	Expect(err).NotTo(HaveOccurred(), "stack_map is not well-formed")
	return blocks
}

// readStat reads and parses stack_map_stat; a parse error fails the spec.
func readStat(tfs *harness.TraceFS) fmtx.Stat {
	text, err := tfs.Read(statNode)
	Expect(err).NotTo(HaveOccurred(), "reading stack_map_stat")
	st, err := fmtx.ParseStat(text)
	Expect(err).NotTo(HaveOccurred(), "stack_map_stat is not well-formed:\n%s", text)
	return st
}

// readBin reads and parses stack_map_bin for the run's profile.
func readBin(tfs *harness.TraceFS) fmtx.Bin {
	data, err := os.ReadFile(tfs.Path(binNode))
	Expect(err).NotTo(HaveOccurred(), "reading stack_map_bin")
	bin, err := fmtx.ParseBin(data, harness.Profile(), binary.NativeEndian)
	Expect(err).NotTo(HaveOccurred())
	return bin
}

// readTrace returns trace's text.
func readTrace(tfs *harness.TraceFS) string {
	text, err := tfs.Read("trace")
	Expect(err).NotTo(HaveOccurred(), "reading trace")
	return text
}
