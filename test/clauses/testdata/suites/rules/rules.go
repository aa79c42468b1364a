// SPDX-License-Identifier: GPL-2.0-only

// Package rules breaks each rule of test/clauses once; it is never built.
package rules

import "github.com/ftrace-stackmap/conformance/harness"

type counters struct{}

// refs is a method: a spec that names it reaches its mark.
func (counters) refs() { harness.FailOn(nil, harness.Clause("SM-STAT-03.3", "")) }

// entries is a helper two specs call.
func entries() { harness.FailOn(nil, harness.Clause("SM-STAT-03.2", "")) }

// unused is called by no spec: its mark counts for nothing.
func unused() { harness.FailOn(nil, harness.Clause("SM-STAT-03.1", "")) }

var _ = harness.ReqIt("SM-STAT-03", "judges in its body and through a helper", func() {
	harness.FailOn(nil, harness.Clause("SM-STAT-03.4", ""))
	entries()
})

var _ = harness.ReqIt("SM-STAT-03 SM-BIN-03", "judges through a method passed on", func() {
	var c counters
	run(c.refs)
	entries()
	harness.FailOn(nil, harness.Clause("SM-BIN-03.1", ""))
})

var _ = harness.ReqIt("SM-TEXT-01", "judges another requirement's clause and none of its own", func() {
	harness.FailOn(nil, harness.Clause("SM-TEXT-02.1", ""))
	id := "SM-TEXT-01.1"
	harness.FailOn(nil, harness.Clause(id, ""))
})

func run(f func()) { f() }
