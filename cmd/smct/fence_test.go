// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The host command links neither the guest's harness nor Ginkgo's DSL or
// Gomega: their init code and flags belong to the suite binary (an
// environment variable once made the host exit 0 through the harness's
// init). The shared vocabulary is internal/contract.
func TestHostCommandLinksNoGuestCode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch {
		case dep == "github.com/onsi/ginkgo/v2",
			strings.HasPrefix(dep, "github.com/onsi/gomega"),
			dep == "github.com/ftrace-stackmap/conformance/harness",
			strings.HasPrefix(dep, "github.com/ftrace-stackmap/conformance/suites"):
			t.Errorf("cmd/smct links %s", dep)
		}
	}
}
