// SPDX-License-Identifier: GPL-2.0-only

package bench

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// probe times the KVM probe a run makes once per host and kernel (its
// answer is kept on disk), where the guest is the host's arch and so
// could run under KVM; elsewhere there is no probe to time.
func (m *measure) probe(ctx context.Context, a arch.Arch, kernel string) error {
	if a.GOARCH != runtime.GOARCH {
		fmt.Fprintf(m.o.Notes, "%s: no KVM probe: the guest is not this host's arch\n", a.Name)
		return nil
	}
	var took []float64
	for i := range m.o.Reps {
		end := m.o.Progress.Step("%s: the KVM probe, %d/%d", a.Name, i+1, m.o.Reps)
		start := time.Now()
		err := qemu.KVMWorks(qemu.MachineFor(a), kernel)
		end(nil)
		took = append(took, time.Since(start).Seconds())
		if i == 0 {
			answer := "KVM usable"
			if err != nil {
				answer = err.Error()
			}
			fmt.Fprintf(m.o.Notes, "%s: the KVM probe says: %s\n", a.Name, answer)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	m.seconds(a.Name+" KVM probe, once per host and kernel", took)
	return nil
}
