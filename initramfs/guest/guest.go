// SPDX-License-Identifier: GPL-2.0-only

// Package guest is what the host and the guest's init agree on: where
// each program is in the initramfs, the run configuration the host appends,
// and the names of what travels back. The init imports nothing heavier, so
// it starts fast under emulation.
package guest

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Where the guest finds its pieces.
const (
	InitPath      = "/init"
	SuitePath     = "/suites.test"
	WorkloadPath  = "/workload" // the suite's -smct.workload in the guest
	RunConfigPath = "/etc/smct/run.json"
	// CaptureDir is the suite's -smct.capture in the guest: the init sends
	// each file in it to the host, as a frame named after it.
	CaptureDir = "/tmp/capture"
)

// Where the kernel tree's ftrace selftests and the busybox they run with
// go in the guest.
const (
	FtraceDir   = "/ftrace"
	BusyboxPath = "/bin/busybox"
)

// Files the selftests' results travel in from the guest.
const (
	SelftestOutput = "ftracetest.txt"      // what ftracetest printed
	SelftestLogs   = "ftracetest-logs.txt" // the logs of the tests that did not pass
)

// KernelLogFile is the frame the init sends last: the kernel's log, which
// the host checks for warnings, oopses and lockups.
const KernelLogFile = "dmesg.txt"

// JobFile is the frame the init sends first when the run configuration
// has a Job.
const JobFile = "job.json"

// StartMarker begins the line the guest's init prints on the console when
// it starts the suite: the host knows from it that the kernel came up.
const StartMarker = "smct-init: running"

// TailMarker begins the line the init prints on the console when the
// suite's work is done and only kmemleak's wait is left (seconds with
// the guest idle): the host may start its next boot meanwhile.
const TailMarker = "smct-init: waiting for kmemleak"

// ShellPrompt is the prompt of the guest's shell (SHELL=1): the host holds
// back input that is not typed until it appears.
const ShellPrompt = "smct-guest# "

// RunConfig is what the host tells the guest about one run.
type RunConfig struct {
	Args           []string `json:"args"`            // arguments for the suite binary
	TimeoutSeconds int      `json:"timeout_seconds"` // the guest kills the suite after this
	// Ftracetest are the kernel tree's own selftests to run after the
	// suite, as paths under FtraceDir; none when empty.
	Ftracetest []string `json:"ftracetest,omitempty"`
	// Shell asks for busybox's shell on the console instead of the suite
	// (SHELL=1): the machine powers off when it exits.
	Shell bool `json:"shell,omitempty"`
	// Claims runs the suite binary in its claims mode (Args say what to
	// measure): it writes a sample into CaptureDir and no Ginkgo report.
	Claims bool `json:"claims,omitempty"`
	// Job is what the host that wrote this configuration knew of the run,
	// sent back as the frame JobFile before the suite starts: a runner
	// elsewhere (a LAVA job) keeps only the console, so the run's
	// description travels in it.
	Job json.RawMessage `json:"job,omitempty"`
	// CaseBoot, when set, asks the init for case lines of its own, named
	// after this boot, for a runner that reads results off the console (a
	// LAVA job): the boot's kernel-log check and its verdict, which no
	// spec's line gives.
	CaseBoot string `json:"case_boot,omitempty"`
	// ReportsPort names the virtio-serial port the host gave this boot
	// for the frames (ReportsPortName); without one they go on the
	// console, as they must where the console is all there is (LAVA).
	ReportsPort string `json:"reports_port,omitempty"`
}

// ReportsPortName is the name of the port the host gives a boot for its
// reports, as the guest's kernel lists it in /sys/class/virtio-ports.
const ReportsPortName = "smct.reports"

// VerdictFile is where the suite writes its specs' verdict as an exit
// status (0, 1, or 2 without one) when the init asks (-smct.verdict-file):
// the init's verdict case line reads it.
const VerdictFile = "/tmp/smct-verdict"

// ReadRunConfig reads the run configuration the host appended to the initramfs.
func ReadRunConfig(path string) (RunConfig, error) {
	var c RunConfig
	b, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("no run configuration: %v", err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("run configuration %s: %v", path, err)
	}
	if c.TimeoutSeconds <= 0 {
		return c, fmt.Errorf("run configuration %s: timeout_seconds must be positive", path)
	}
	return c, nil
}

// The init and the suite mark the stages of a boot in the kernel's log, on
// the guest's own clock: the host reads where a boot's time went from the
// kernel-log frame (Stages), with no clock of its own in the way.
const (
	markPrefix = "smct-mark: "
	// MarksEnv set to 1 in its environment asks the suite for its marks;
	// the init sets it, so that live mode never writes to a host's log.
	MarksEnv = "SMCT_MARKS"
)

// Mark writes a stage mark to the kernel's log; a guest without
// /dev/kmsg goes unmarked.
func Mark(stage string) { writeKmsg(markPrefix + stage) }

// MarkIfAsked is Mark in a process the init started with MarksEnv set.
func MarkIfAsked(stage string) {
	if os.Getenv(MarksEnv) == "1" {
		Mark(stage)
	}
}

// The stages the init and the suite mark, in the order a boot reaches them.
const (
	StageMounted   = "mounted"    // the init has mounted what the suite needs
	StageSuiteExec = "suite-exec" // the init starts the suite
	StageSuiteMain = "suite-main" // the suite's main runs: Go is up
	StageSetUp     = "setup"      // Ginkgo has built its tree; the suite sets up
	StageSpecs     = "specs"      // the specs start
	StageReport    = "report"     // the specs are done; the suite writes its report
	StageSuiteExit = "suite-exit" // the init sees the suite exit
	StageFramed    = "framed"     // the reports are sent; the kernel's checkers are next
	StageChecked   = "checked"    // kmemleak has scanned, where it runs; the kernel log is next
)

// The kernel's own lines that mark a stage.
const (
	StageUnpack   = "unpack"   // "Unpacking initramfs..."
	StageUnpacked = "unpacked" // "Freeing initrd memory"
	StageInit     = "init"     // "Run /init as init process"
)

// Stage is a mark's time on the guest's clock.
type Stage struct {
	Name    string
	Seconds float64
}

// The kernel's lines that mark a stage, by how they begin.
var kernelStages = map[string]string{
	"Unpacking initramfs":       StageUnpack,
	"Freeing initrd memory":     StageUnpacked,
	"Run /init as init process": StageInit,
}

// Stages reads the marks in a kernel log, in the order they were logged.
// The log is read as the init sends it: "<6>[    0.715308] text".
func Stages(kmsg []byte) []Stage {
	var out []Stage
	for _, line := range strings.Split(string(kmsg), "\n") {
		_, rest, ok := strings.Cut(line, "[")
		if !ok {
			continue
		}
		stamp, text, ok := strings.Cut(rest, "] ")
		if !ok {
			continue
		}
		// With CONFIG_PRINTK_CALLER the caller follows: "[ 0.7][  T1] text".
		stamp, _, _ = strings.Cut(stamp, "]")
		t, err := strconv.ParseFloat(strings.TrimSpace(stamp), 64)
		if err != nil {
			continue
		}
		if name, ok := strings.CutPrefix(text, markPrefix); ok {
			out = append(out, Stage{name, t})
			continue
		}
		for prefix, name := range kernelStages {
			if strings.HasPrefix(text, prefix) {
				out = append(out, Stage{name, t})
			}
		}
	}
	return out
}
