// SPDX-License-Identifier: GPL-2.0-only

package bench

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ftrace-stackmap/conformance/initramfs/guest"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/results"
)

// A part of a boot is the time from one of the guest's marks to the
// next, on the guest's own clock.
type part struct{ from, to, name string }

// specsPart is the boot's own work: what its specs do, never overhead.
const specsPart = "the specs"

// transportPart is what sending the reports costs a boot; checkersPart
// what the kernel's own checkers cost after the suite (kmemleak waits out
// its minimum age of objects, then scans), a check, not the harness's.
const (
	transportPart = "the init sends the reports"
	checkersPart  = "kmemleak's wait and scan after the suite"
)

// parts are the parts of a boot the guest's marks time, in boot order.
var parts = []part{
	{guest.StageUnpack, guest.StageUnpacked, "the kernel unpacks the initramfs"},
	{guest.StageInit, guest.StageMounted, "the init starts and mounts"},
	{guest.StageMounted, guest.StageSuiteExec, "the init reads the run configuration"},
	{guest.StageSuiteExec, guest.StageSuiteMain, "the suite binary starts"},
	{guest.StageSuiteMain, guest.StageSetUp, "Ginkgo builds the spec tree"},
	{guest.StageSetUp, guest.StageSpecs, "the suite opens and saves tracefs"},
	{guest.StageSpecs, guest.StageReport, specsPart},
	{guest.StageReport, guest.StageSuiteExit, "the suite writes its report and exits"},
	{guest.StageSuiteExit, guest.StageFramed, transportPart},
	{guest.StageFramed, guest.StageChecked, checkersPart},
}

// guestParts reads each part of a made boot from its kernel log, kept in
// the run's directory.
func guestParts(res *results.Result, b results.BootResult) (map[string]float64, error) {
	log, err := os.ReadFile(filepath.Join(res.Dir, "boots", b.Plan.Name, guest.KernelLogFile))
	if err != nil {
		return nil, fmt.Errorf("boot %s: the guest's marks: %v", b.Plan.Name, err)
	}
	at := map[string]float64{}
	for _, s := range guest.Stages(log) {
		at[s.Name] = s.Seconds
	}
	out := map[string]float64{}
	for _, p := range parts {
		from, okFrom := at[p.from]
		to, okTo := at[p.to]
		if !okFrom || !okTo {
			return nil, fmt.Errorf("boot %s: its kernel log lacks the guest's marks %s and %s", b.Plan.Name, p.from, p.to)
		}
		out[p.name] = to - from
	}
	return out, nil
}

// checkpointSeconds is what a made boot's checkpoints cost on the guest's
// clock, from the line its suite printed on the console.
func checkpointSeconds(res *results.Result, b results.BootResult) (float64, error) {
	console, err := os.ReadFile(filepath.Join(res.Dir, "boots", b.Plan.Name, "console.log"))
	if err != nil {
		return 0, fmt.Errorf("boot %s: its console: %v", b.Plan.Name, err)
	}
	return contract.CheckpointsSeconds(console), nil
}
