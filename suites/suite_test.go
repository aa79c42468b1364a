// SPDX-License-Identifier: GPL-2.0-only

// Package suites is the conformance suite's single test binary: the
// baseline ftrace specs and the stackmap specs, compiled with `go test -c`
// and run inside the guest (or directly on a machine, in live mode). Run
// by `go test ./...`, it skips: see harness.Asked.
package suites

import (
	"flag"
	"fmt"
	"os"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ftrace-stackmap/conformance/harness"
	"github.com/ftrace-stackmap/conformance/initramfs/guest"
	_ "github.com/ftrace-stackmap/conformance/suites/baseline"
	"github.com/ftrace-stackmap/conformance/suites/claims"
	_ "github.com/ftrace-stackmap/conformance/suites/stackmap"
)

func init() {
	harness.RegisterFlags(flag.CommandLine)
	claims.RegisterFlags(flag.CommandLine)
}

// TestMain lets -smct.exit-codes=kselftest choose the exit status, and
// -smct.claims measure the series' claims instead of running the specs.
func TestMain(m *testing.M) {
	flag.Parse()
	guest.MarkIfAsked(guest.StageSuiteMain)
	if claims.Asked() {
		os.Exit(claims.Main())
	}
	os.Exit(harness.ExitCode(m.Run()))
}

func TestConformance(t *testing.T) {
	suiteConfig, reporterConfig := GinkgoConfiguration()
	if !harness.Asked(suiteConfig) {
		fmt.Fprintln(os.Stderr, "skipping the suite:", harness.NotAsked) // seen without -test.v too
		t.Skip(harness.NotAsked)
	}
	RegisterFailHandler(Fail)
	harness.ConfigureOutput(&reporterConfig)
	RunSpecs(t, "ftrace stackmap conformance", suiteConfig, reporterConfig)
	// A second interrupt makes Ginkgo skip the cleanup that restores tracefs.
	if err := harness.RestoreAfterRun(); err != nil {
		t.Error(err)
	}
}

var _ = BeforeSuite(harness.SetUpSuite)
