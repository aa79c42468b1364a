package stackmap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"

	. "github.com/onsi/gomega"
	"golang.org/x/sys/unix"

	"github.com/ftrace-stackmap/conformance/harness"
	fmtx "github.com/ftrace-stackmap/conformance/harness/stackmapfmt"
)

var _ = describe("reading the nodes under load", func() {
	harness.ReqIt("SM-ROBUST-01", "returns well-formed data from every node while a traced workload runs", func() {
		tfs := harness.Root()
		quiet(tfs)
		harness.Set(tfs, optionNode, "1")
		resetMap(tfs)
		harness.Set(tfs, "options/stacktrace", "1")
		harness.Set(tfs, execEnable, "1")

		problems, reads := readWhile(tfs, func() { traceWorkload(tfs, workloadRuns) })
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

// readWhile reads every node in a loop, one reader each, while work runs,
// and returns what was wrong with the reads (at most five) and how many
// there were. The readers have stopped when it returns, however work ends.
func readWhile(tfs *harness.TraceFS, work func()) (problems []string, reads int) {
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		done = make(chan struct{})
	)
	note := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(problems) < 5 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	for _, node := range []string{mapNode, statNode, binNode} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				data, err := os.ReadFile(tfs.Path(node))
				if err != nil {
					if !errors.Is(err, unix.EINTR) {
						note("reading %s: %v", node, err)
					}
					continue
				}
				if err := wellFormed(node, data); err != nil {
					note("%v", err)
				}
				mu.Lock()
				reads++
				mu.Unlock()
			}
		}()
	}
	// Stop the readers on every path, a failed setup step in work included.
	stop := sync.OnceFunc(func() {
		close(done)
		wg.Wait()
	})
	defer stop()
	work()
	stop()
	return problems, reads
}

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
