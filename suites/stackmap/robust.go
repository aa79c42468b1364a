package stackmap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	. "github.com/onsi/gomega"
	"golang.org/x/sys/unix"

	"github.com/ftrace-stackmap/conformance/harness"
	fmtx "github.com/ftrace-stackmap/conformance/harness/stackmapfmt"
)

var _ = describe("reading the nodes under load", func() {
	harness.ReqIt("SM-ROBUST-01", "returns well-formed data from every node while a traced workload runs", func() {
		tfs := harness.Root()
		quiet(tfs)
		resetMap(tfs)
		harness.Set(tfs, optionNode, "1")
		harness.Set(tfs, "options/stacktrace", "1")
		harness.Set(tfs, execEnable, "1")

		var stop atomic.Bool
		var mu sync.Mutex
		var problems []string
		reads := 0
		note := func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			if len(problems) < 5 {
				problems = append(problems, fmt.Sprintf(format, args...))
			}
		}
		var wg sync.WaitGroup
		for _, node := range []string{mapNode, statNode, binNode} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
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
		traceWorkload(tfs, workloadRuns)
		stop.Store(true)
		wg.Wait()
		Expect(problems).To(BeEmpty(), "after %d reads", reads)
		Expect(reads).To(BeNumerically(">=", 3), "the readers barely ran")
	})
})

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
		_, err = fmtx.ParseBin(data, harness.Profile(), binary.NativeEndian)
		if errors.Is(err, fmtx.ErrEndsAtRecordBoundary) {
			err = nil
		}
	}
	return err
}
