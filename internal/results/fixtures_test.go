// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"strings"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/kernels/korigin"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
	"github.com/ftrace-stackmap/conformance/qemu"
)

const sha = "391d229a7c641821b7414d001c090043d977e11daf865362d36ea832ccf0dd69"

// reference is where the reference kernel comes from: Debian's source
// and the project's patches.
var reference = korigin.Origin{Package: "linux-source-6.12 6.12.117-1~deb12u1", Config: "tinyconfig+common+x86_64",
	Compiler: "x86_64-linux-gnu-gcc (Debian 12.2.0-14+deb12u1) 12.2.0",
	Patches: []korigin.Patch{
		{Name: "0001-trace-add-the-TRACE_STACK_ID-ring-buffer-entry.patch", SHA256: strings.Repeat("1", 64)},
		{Name: "0002-trace-add-the-stackmap-a-table-of-kernel-stacks-refe.patch", SHA256: strings.Repeat("2", 64)},
	}}

var opts = Request{Arch: arch.MustLookup("x86_64"), Profile: "v4", Timeout: 5 * time.Minute, Seed: 4242}

// result is a run of the given specs: the default boot made, one boot not.
func result(specs ...report.Spec) *Result {
	return &Result{
		Request:   opts,
		Dir:       "results/20261122-164552-x86_64",
		Source:    "IMAGE=reference (built from kernel/, inputs 0123456789abcdef)",
		Entry:     "reference",
		KernelSHA: sha,
		Origin:    reference,
		Machine:   "QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3) -M q35 -cpu qemu64",
		Summary:   report.Summary{Specs: specs, Succeeded: true, Kernel: "6.12.117-stackmap #1 SMP PREEMPT_DYNAMIC x86_64"},
		Boots: []BootResult{
			{Plan: contract.Plans()[0], Boot: &qemu.Result{Duration: 3900 * time.Millisecond}},
			{Plan: contract.Plans()[1], Boot: &qemu.Result{Duration: 2500 * time.Millisecond}},
			{Plan: contract.Plans()[2], Skipped: NoSpecSelected},
		},
	}
}

var (
	pass = report.Spec{Name: "default.BASE-ONOFF-01", Boot: "default", Text: "ftrace baseline [BASE-ONOFF-01] turns tracing_on off and on again",
		IDs: []string{"BASE-ONOFF-01"}, Class: contract.Pass}
	fail = report.Spec{Name: "default.SM-RESET-01", Boot: "default", Text: "resetting the map [SM-RESET-01] refuses a reset with EBUSY while tracing is on, and changes nothing",
		IDs: []string{"SM-RESET-01"}, Class: contract.Fail,
		Message:  "write \"0\" to stack_map with tracing on: accepted Expected <bool>: false to be true",
		Detail:   "write \"0\" to stack_map with tracing on: accepted\nExpected\n    <bool>: false\nto be true",
		Location: "suites/stackmap/reset.go:42"}
	unsupported = report.Spec{Name: "default.SM-BIN-01", Boot: "default", Text: "the binary export [SM-BIN-01] starts with the profile's magic",
		IDs: []string{"SM-BIN-01"}, Class: contract.Unsupported,
		Message: "kernel has no stackmap feature (no options/stackmap, no stack_map)",
		Detail:  "kernel has no stackmap feature (no options/stackmap, no stack_map)"}
	unresolved = report.Spec{Name: "default.SM-OPT-01", Boot: "default", Text: "the stackmap option [SM-OPT-01] reads 0 or 1, round-trips 1 and 0, and trace_options agrees",
		IDs: []string{"SM-OPT-01"}, Class: contract.Unresolved,
		Message: "cannot write \"1\" to options/stackmap: device or resource busy",
		Detail:  "cannot write \"1\" to options/stackmap: device or resource busy"}
	timedOut = report.Spec{Name: "default.SM-ROBUST-01", Boot: "default", Text: "reading the nodes under load [SM-ROBUST-01] returns well-formed data",
		IDs: []string{"SM-ROBUST-01"}, Class: contract.Unresolved, TimedOut: true,
		Message: "A spec timeout occurred", Detail: "A spec timeout occurred"}
	warned = report.Spec{Name: "default.SM-EVT-01", Boot: "default", Text: "stackmap nodes [SM-EVT-01] describes the stack_id entry", IDs: []string{"SM-EVT-01"},
		Class: contract.Pass, Warnings: []string{"SM-EVT-01: no int stack_id field"}}
	oops = "WARNING: CPU: 0 PID: 1 at kernel/trace/trace_stackmap.c:88 stackmap_reset+0x44/0x90"
)

// withRequest is res as if asked for by o.
func withRequest(res *Result, o Request) *Result {
	res.Request = o
	return res
}
