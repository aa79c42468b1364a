// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// ReadUnderLoad runs workers that read every node in a loop (and, with
// exec, run the workload between rounds) while work runs, checking each
// read with check, and returns what was wrong (at most five problems) and
// how many reads there were. work is told the reads so far, so a quick
// load can keep going until the nodes were read while it ran. The workers
// have stopped when it returns, however work ends (a failed assertion in
// it included), and they stop early when ctx ends: a spec's SpecContext,
// so none outlives its spec.
func ReadUnderLoad(ctx context.Context, t *TraceFS, workers int, exec bool, nodes []string, check func(node string, data []byte) error, work func(reads func() int)) (problems []string, reads int) {
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
					RunWorkload(1)
				}
				for _, node := range nodes {
					data, err := os.ReadFile(t.Path(node))
					switch {
					case errors.Is(err, unix.EINTR):
						continue
					case err != nil:
						note("reading %s: %v", node, err)
						continue
					}
					if err := check(node, data); err != nil {
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
	work(func() int {
		mu.Lock()
		defer mu.Unlock()
		return reads
	})
	stop()
	return problems, reads
}
