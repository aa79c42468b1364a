// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/consoleframe"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// FuzzJudge damages the console of a recorded boot that failed (the
// reference kernel's default boot with a fault switch on) in every way a
// fuzzer finds: whatever the damage, the boot never passes, and a frame
// the guest's manifest lists that did not arrive whole is named.
func FuzzJudge(f *testing.F) {
	recorded, err := os.ReadFile("testdata/no_ebusy-default-console.log")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(recorded)
	f.Fuzz(func(t *testing.T, console []byte) {
		c, err := Judge(console, "console.log", contract.DefaultBoot, &qemu.Result{})
		if err == nil && report.Summarize(contract.DefaultBoot, c.Reports).ExitCode() == 0 {
			t.Fatal("a damaged console of a failing boot passes")
		}
		capture, derr := consoleframe.Decode(bytes.NewReader(console))
		if derr != nil || !capture.HaveManifest {
			return
		}
		said := ""
		if c != nil {
			said = strings.Join(c.Lost, "\n")
		}
		if err != nil {
			said += "\n" + err.Error()
		}
		for _, lost := range capture.Lost() {
			if !strings.Contains(said, lost) {
				t.Fatalf("%s did not arrive and nothing says so: %q", lost, said)
			}
		}
	})
}
