// SPDX-License-Identifier: GPL-2.0-only

// Command workload is the guest's stack source: each run is one exec, so one
// sched_process_exec, fork and exit with a known filename, and nothing else.
// It replaces re-executing the suite binary, whose start costs three times
// as much under emulation.
package main

import (
	"os"
	"time"
)

func main() {
	// The suite's -smct.workload-delay (harness's workloadDelayEnv), for
	// tests that interrupt a workload.
	if d, err := time.ParseDuration(os.Getenv("SMCT_WORKLOAD_DELAY")); err == nil {
		time.Sleep(d)
	}
}
