package stackmap

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/sys/unix"

	"github.com/ftrace-stackmap/conformance/harness"
	fmtx "github.com/ftrace-stackmap/conformance/harness/stackmapfmt"
)

var _ = describe("reading the nodes under load", func() {
	harness.ReqIt("SM-ROBUST-01", "returns well-formed data from every node while a traced workload runs", func(ctx SpecContext) {
		tfs := harness.Root()
		quiet(tfs)
		harness.Set(tfs, optionNode, "1")
		resetMap(tfs)
		harness.Set(tfs, "options/stacktrace", "1")
		harness.Set(tfs, execEnable, "1")

		problems, reads := readWhile(ctx, tfs, 3, false, func() { traceWorkload(tfs, workloadRuns) })
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

// readWhile runs workers that read every node in a loop (and, with exec,
// exec the workload between reads) while work runs, and returns what was
// wrong with the reads (at most five) and how many there were. The workers
// have stopped when it returns, however work ends, and they stop early
// when the spec's context ends.
func readWhile(ctx context.Context, tfs *harness.TraceFS, workers int, exec bool, work func()) (problems []string, reads int) {
	ctx, cancel := context.WithCancel(ctx)
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	note := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(problems) < 5 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if exec {
					harness.RunWorkload(1)
				}
				for _, node := range []string{mapNode, statNode, binNode} {
					data, err := os.ReadFile(tfs.Path(node))
					switch {
					case errors.Is(err, unix.EINTR):
						continue
					case err != nil:
						note("reading %s: %v", node, err)
						continue
					}
					if err := wellFormed(node, data); err != nil {
						note("%v", err)
					}
					mu.Lock()
					reads++
					mu.Unlock()
				}
			}
		}()
	}
	stop := sync.OnceFunc(func() {
		cancel()
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
