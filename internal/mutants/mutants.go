// SPDX-License-Identifier: GPL-2.0-only

// Package mutants proves the suite can fail: it boots the reference kernel
// once per fault switch (kernel/README.md) and checks that a spec of the
// requirement the fault breaks fails, and that the kernel without faults
// fails nothing.
package mutants

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/kernellog"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kchoice"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
	"github.com/ftrace-stackmap/conformance/internal/results"
)

// Fault is one fault switch of the reference kernel and the requirement
// whose spec must catch it.
type Fault struct {
	Name   string
	Clause string   // the clause of CONTRACT.md it breaks; its requirement must fail
	Boots  []string // the boot plans that can see it
	// Echoes are other requirements the fault breaks too, by what the
	// kernel then shows and not by how the suite is built; kernel/README.md
	// says why for each. Any other failure is an echo to fix.
	Echoes []string
	// Variant marks a switch that makes the kernel behave as the contract
	// permits (ftrace_stackmap.variants=): every spec must pass, Clause is
	// the permission it exercises.
	Variant bool
	// Checker is the kind of report (kernellog) by which the kernel's own
	// checkers show a fault the ABI does not: every spec passes, and in
	// the sanitized lane the kernel-log check fails by such a report,
	// placed in a spec. Clause is empty.
	Checker string
}

// cleanRow names the row of the kernel without a switch: its directory,
// and the word FAULTS= cannot take.
const cleanRow = "none"

var (
	defaultBoot = []string{contract.DefaultBoot}
	fullMapBoot = []string{"full-map"}
)

// fault is a fault switch: its name, the clause it breaks, the boots
// that see it and its documented echoes.
func fault(name, clause string, boots, echoes []string) Fault {
	return Fault{Name: name, Clause: clause, Boots: boots, Echoes: echoes}
}

// faults lists every fault switch; kernel/README.md describes them.
var faults = []Fault{
	fault("mode_map", "SM-MODE-01.1", defaultBoot, nil),
	fault("mode_stat", "SM-MODE-01.2", defaultBoot, nil),
	fault("mode_bin", "SM-MODE-01.1", defaultBoot, nil),
	fault("init_fail", "SM-INIT-01.1", defaultBoot, nil),
	fault("no_stack_ids", "SM-OPT-03.1", defaultBoot, nil),
	fault("stacks_without_source", "SM-OPT-03.2", defaultBoot, nil),
	fault("dangling_ids", "SM-TRACE-01.1", defaultBoot, nil),
	fault("text_order", "SM-TEXT-01.2", defaultBoot, nil),
	fault("text_depth", "SM-TEXT-01.1", defaultBoot, nil),
	fault("text_dup", "SM-TEXT-02.1", defaultBoot, nil),
	fault("stat_key", "SM-STAT-01.1", defaultBoot, nil),
	fault("stat_format", "SM-STAT-01.1", defaultBoot, nil),
	fault("success_rate_always", "SM-STAT-01.2", defaultBoot, nil),
	fault("table_size", "SM-STAT-02.2", defaultBoot, nil),
	fault("bad_counts", "SM-STAT-03.3", defaultBoot, nil),
	fault("no_ebusy", "SM-RESET-01.1", defaultBoot, nil),
	fault("no_einval", "SM-RESET-03.1", defaultBoot, nil),
	fault("reset_keeps_counters", "SM-RESET-04.1", defaultBoot, []string{"SM-STAT-03"}),
	fault("reset_keeps_buffer", "SM-RESET-05.1", defaultBoot, []string{"SM-TRACE-01"}),
	fault("reset_skips_snapshot", "SM-RESET-05.2", defaultBoot, nil),
	fault("reset_needs_option", "SM-RESET-02.1", defaultBoot, nil),
	fault("bad_magic", "SM-BIN-01.1", defaultBoot, nil),
	fault("bad_version", "SM-BIN-01.1", defaultBoot, nil),
	fault("byte_swap", "SM-BIN-01.2", defaultBoot, nil),
	fault("bin_truncated", "SM-BIN-02.1", defaultBoot, nil),
	fault("bin_size", "SM-BIN-02.2", defaultBoot, nil),
	fault("bin_ids", "SM-BIN-03.1", defaultBoot, nil),
	fault("bin_depth", "SM-BIN-03.1", defaultBoot, nil),
	fault("bin_ref", "SM-BIN-03.1", defaultBoot, nil),
	fault("bin_live", "SM-BIN-04.1", defaultBoot, []string{"SM-ROBUST-01"}),
	fault("inst_option", "SM-INST-01.1", defaultBoot, nil),
	fault("inst_nodes", "SM-INST-01.1", defaultBoot, nil),
	fault("inst_inherit", "SM-INST-01.2", defaultBoot, nil),
	fault("inst_trace_options", "SM-INST-02.1", defaultBoot, nil),
	fault("boot_option_ignored", "SM-BOOT-01.1", []string{"trace-options"}, nil),
	fault("bits_ignored", "SM-BOOT-02.1", []string{"bits-12", "bits-hex", "bits-30", "bits-3"}, nil),
	fault("bits_bare", "SM-BOOT-03.1", []string{"bits-bare"}, nil),
	fault("bits_null", "SM-BOOT-03.1", []string{"bits-bare"}, nil),
	fault("option_listing", "SM-OPT-01.2", defaultBoot, nil),
	fault("option_order", "SM-OPT-02.1", defaultBoot, nil),
	fault("option_off_clears", "SM-OPT-04.1", defaultBoot, []string{"SM-TRACE-01"}),
	fault("inst_rmdir", "SM-INST-03.1", defaultBoot, nil),
	fault("busy_reads", "SM-ROBUST-01.1", defaultBoot, nil),
	fault("depth_truncate", "SM-DEPTH-01.1", defaultBoot, nil),
	fault("drops_early", "SM-STAT-03.4", fullMapBoot, nil),
	fault("drop_no_fallback", "SM-STAT-03.5", fullMapBoot, nil),
	fault("rate_ignores_drops", "SM-STAT-01.3", fullMapBoot, nil),
	fault("bin_full_short", "SM-BIN-03.1", fullMapBoot, nil),
	fault("reset_keeps_drops", "SM-RESET-04.1", fullMapBoot, nil),
	fault("reset_keeps_pool", "SM-RESET-04.4", fullMapBoot, nil),
	fault("reset_queue", "SM-RESET-01.2", defaultBoot, nil),
	fault("ebusy_first", "SM-RESET-03.2", defaultBoot, nil),
	fault("bin_addrs", "SM-BIN-03.2", defaultBoot, nil),
	fault("entries_overflow", "SM-STAT-02.3", fullMapBoot, nil),
	fault("no_bin_node", "SM-NODE-02.1", defaultBoot, nil),
	fault("text_rewind", "SM-ROBUST-01.2", defaultBoot, nil),
	fault("id_hex", "SM-TRACE-01.3", defaultBoot, nil),
	fault("id_and_stack", "SM-OPT-03.3", defaultBoot, nil),
	fault("rate_rounds", "SM-STAT-01.3", fullMapBoot, nil),
	fault("default_bits", "SM-STAT-02.1", defaultBoot, nil),
	fault("tracer_switch_clears", "SM-OPT-04.1", defaultBoot, nil),
	fault("reset_first_drop", "SM-RESET-04.4", fullMapBoot, nil),
	fault("bits_lenient", "SM-BOOT-02.1", []string{"bits-minus", "bits-trailing"}, nil),
	// Faults that break an always-true clause in one state only, which the
	// requirement's own spec never reaches: the checkpoints must see them.
	fault("drop_error_id", "SM-TRACE-01.3", fullMapBoot, nil),
	fault("full_text_order", "SM-TEXT-01.2", fullMapBoot, nil),
	fault("switch_zeroes_successes", "SM-STAT-03.3", defaultBoot, nil),
	fault("bits_table_size", "SM-STAT-02.2", []string{"bits-12"}, nil),
	// A fault that keeps the full map a fill waits for from ever showing.
	fault("full_uncounted", "SM-STAT-03.5", fullMapBoot, nil),
	// Which stack an id names: a hit that hands back the next stack's id
	// (a sparse map), or the home slot's after a collision (a full map).
	fault("id_neighbour", "SM-TRACE-01.4", defaultBoot, nil),
	fault("id_probe_home", "SM-TRACE-01.4", fullMapBoot, nil),
	// States users make that no spec made before (AUDIT.md's operations):
	// the readers of ids, what only a reset may undo, a stack source, a
	// boundary, a reader across a reset.
	fault("percpu_ids", "SM-TRACE-01.4", defaultBoot, nil),
	fault("snapshot_ids", "SM-TRACE-01.1", defaultBoot, nil),
	fault("pipe_unrefs", "SM-OPT-04.2", defaultBoot, nil),
	fault("clear_resets_map", "SM-OPT-04.2", defaultBoot, nil),
	fault("cpu_clear_resets_map", "SM-OPT-04.2", defaultBoot, nil),
	fault("hotplug_resets_map", "SM-OPT-04.2", []string{"two-cpus"}, nil),
	fault("trigger_full_stacks", "SM-OPT-03.1", defaultBoot, nil),
	fault("depth_limit_63", "SM-DEPTH-01.2", defaultBoot, nil),
	fault("pool_short_one", "SM-STAT-03.4", fullMapBoot, nil),
	fault("bin_resnap_midway", "SM-BIN-04.1", defaultBoot, nil),
}

// checkers lists the faults only the kernel's own checkers see: memory
// safety and locking defects that keep every output right.
var checkers = []Fault{
	{Name: "bin_freed_early", Checker: "KASAN", Boots: defaultBoot},
	// lockdep_assert_held() warns: a WARNING at the wiping function.
	{Name: "reset_skips_lock", Checker: "warning", Boots: defaultBoot},
	{Name: "leak_empty_snapshot", Checker: "kmemleak", Boots: defaultBoot},
	{Name: "bin_read_past", Checker: "KASAN", Boots: defaultBoot},
	{Name: "lock_order", Checker: "lockdep", Boots: defaultBoot},
}

// Checkers are the faults only the kernel's checkers see: a copy.
func Checkers() []Fault { return slices.Clone(checkers) }

// variants lists every variant switch: behaviours the contract permits
// and the reference kernel does not choose.
var variants = []Fault{
	{Name: "deep_not_dropped", Clause: "SM-STAT-03.1", Variant: true},
	{Name: "stat_order", Clause: "SM-STAT-01.1", Variant: true},
	{Name: "stat_tabs", Clause: "SM-STAT-01.1", Variant: true},
	{Name: "bare_symbols", Clause: "SM-BIN-03.2", Variant: true},
	{Name: "reset_new_seed", Clause: "SM-TRACE-01.4", Variant: true},
}

// Variants are every variant switch: a copy.
func Variants() []Fault { return slices.Clone(variants) }

// Want is the requirement ID that must fail: the clause's, or the
// kernel-log check for a fault only the checkers see.
func (f Fault) Want() string {
	if f.Checker != "" {
		return kernelLog
	}
	id, _, _ := strings.Cut(f.Clause, ".")
	return id
}

// Faults are every fault switch of the reference kernel, in the order the
// table shows them: a copy.
func Faults() []Fault { return slices.Clone(faults) }

// Row is one line of the matrix.
type Row struct {
	Fault   string // "" for the kernel without faults
	Variant bool   // Fault is a variant: nothing may fail
	Want    string
	Echoes  []string // the fault's documented echoes
	// Failed are the requirements with a FAIL, Unresolved those that could
	// not be decided (a prerequisite broke) and no FAIL.
	Failed, Unresolved []string
	// Warned are informational requirements whose spec warned: for them a
	// warning, not a failure, is how the suite reports a miss.
	Warned []string
	Err    error // no verdict
	// Checker is the fault's report kind, for a fault only the checkers
	// see; Lane says whether the kernel has them; Reported is where the
	// report of that kind that showed it was placed, in a spec.
	Checker  string
	Lane     kchoice.Lane
	Reported string
}

// Also are the requirements that failed besides the one the fault targets.
func (r Row) Also() []string {
	var also []string
	for _, id := range r.Failed {
		if id != r.Want {
			also = append(also, id)
		}
	}
	return also
}

// Undocumented are the echoes the fault table does not explain: each one is
// a spec failing for another requirement's cause.
func (r Row) Undocumented() []string {
	var out []string
	for _, id := range r.Also() {
		if !slices.Contains(r.Echoes, id) {
			out = append(out, id)
		}
	}
	return out
}

// Caught says whether the row is as it must be: the target fails (or warns,
// for an informational one) and nothing else fails unexplained.
func (r Row) Caught() bool {
	if r.Err != nil {
		return false
	}
	if r.mustPass() {
		return len(r.Failed) == 0 && len(r.Unresolved) == 0 && len(r.Warned) == 0
	}
	hit := slices.Contains(r.Failed, r.Want) || slices.Contains(r.Warned, r.Want)
	if r.Checker != "" {
		hit = r.Reported != ""
	}
	return hit && len(r.Undocumented()) == 0
}

// kernelLog names the kernel-log check in a row, beside requirements.
const kernelLog = "kernel-log"

// mustPass says whether the row's kernel must fail nothing: the kernel
// without faults, a variant the contract permits, and a fault only the
// checkers see, in a lane without them.
func (r Row) mustPass() bool {
	return r.Fault == "" || r.Variant || r.Checker != "" && !r.Lane.IsSanitized()
}

// Run boots the kernel of base once without faults and once per fault.
// The kernel without faults is booted first, alone (it prepares what every
// row shares); then the rows run side by side, one per CPU, each one boot
// at a time, so that a row of one boot does not leave a CPU idle (base's
// LANES=, when given, is each row's instead). Rows come back in order.
func Run(ctx context.Context, base qemutest.Options, faults []Fault, progress io.Writer) []Row {
	var rn qemutest.Runner // one kernel for every run: probed for KVM once
	rows := make([]Row, len(faults)+1)
	rows[0] = boot(ctx, &rn, base, Fault{}, progress)
	side := base
	if side.Lanes == 0 {
		side.Lanes = 1
	}
	var g errgroup.Group
	g.SetLimit(max(1, runtime.NumCPU()/side.Lanes))
	var said sync.Mutex
	for i, f := range faults {
		g.Go(func() error {
			rows[i+1] = boot(ctx, &rn, side, f, lockedWriter{&said, progress})
			return nil
		})
	}
	g.Wait()
	return rows
}

// lockedWriter is one writer rows running side by side share.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func boot(ctx context.Context, rn *qemutest.Runner, o qemutest.Options, f Fault, progress io.Writer) Row {
	name := f.Name
	switch {
	case name == "":
		name = cleanRow
	case f.Variant:
		// Every boot: a permitted behaviour must pass wherever it shows.
		o.BootArgs = append(append([]string{}, o.BootArgs...), "ftrace_stackmap.variants="+f.Name)
	default:
		o.BootArgs = append(append([]string{}, o.BootArgs...), "ftrace_stackmap.faults="+f.Name)
		o.Boots = f.Boots
	}
	o.ResultsDir = filepath.Join(o.ResultsDir, name)
	fmt.Fprintf(progress, "--- fault %s\n", name)
	res, err := rn.Run(ctx, o)
	row := Row{Fault: f.Name, Variant: f.Variant, Want: f.Want(), Echoes: f.Echoes, Err: err, Checker: f.Checker, Lane: o.Lane}
	if err != nil {
		return row
	}
	// What the fault made fail, in the reports a reviewer reads.
	if _, err := results.Write(res); err != nil {
		row.Err = err // the run has no verdict without its reports
		return row
	}
	if row.Checker != "" && row.Lane.IsSanitized() {
		row.Reported = reportedIn(res.KernelReports(), row.Checker)
		if len(res.KernelProblems()) > 0 {
			row.Failed = append(row.Failed, kernelLog)
		}
	}
	if row.mustPass() {
		// A kernel that must pass must also log nothing wrong, and its log
		// must have arrived to say so.
		if len(res.KernelProblems()) > 0 {
			row.Failed = append(row.Failed, kernelLog)
		}
		if len(res.MissingKernelLogs()) > 0 {
			row.Unresolved = append(row.Unresolved, kernelLog)
		}
	}
	for id, c := range res.Summary.Coverage() {
		switch c {
		case contract.Fail:
			row.Failed = append(row.Failed, id)
		case contract.Unresolved:
			row.Unresolved = append(row.Unresolved, id)
		}
	}
	for _, sp := range res.Summary.Specs {
		if len(sp.Warnings) > 0 {
			row.Warned = append(row.Warned, sp.IDs...)
		}
	}
	sort.Strings(row.Failed)
	sort.Strings(row.Unresolved)
	sort.Strings(row.Warned)
	// A boot that could not be judged leaves the row without a verdict
	// unless what was judged decides it: the fault's failure, or a kernel
	// that must pass failing.
	decided := slices.Contains(row.Failed, row.Want) || row.mustPass() && len(row.Failed) > 0
	if len(res.Unjudged) > 0 && !decided {
		row.Err = errors.New(res.Verdict())
	}
	return row
}

// reportedIn is where the first report of kind inside a spec was placed,
// or "": a report before or between the specs names no requirement.
func reportedIn(reports []kernellog.Report, kind string) string {
	for _, r := range reports {
		if r.Kind == kind && r.Spec != "" {
			return r.Where
		}
	}
	return ""
}

// Select is the faults and variants named in a comma-separated list, in
// its order; "" is all of them, the faults first, then those only the
// checkers see, then the variants the contract permits.
func Select(names string) ([]Fault, error) {
	all := append(append(Faults(), Checkers()...), Variants()...)
	if names == "" {
		return all, nil
	}
	var chosen []Fault
	for _, name := range strings.Split(names, ",") {
		i := slices.IndexFunc(all, func(f Fault) bool { return f.Name == name })
		switch {
		case name == cleanRow:
			return nil, fmt.Errorf("no fault or variant %q: the clean kernel's row (%s) is made in every table, name only faults and variants", name, cleanRow)
		case i < 0:
			return nil, fmt.Errorf("no fault or variant %q (kernel/README.md lists them)", name)
		}
		chosen = append(chosen, all[i])
	}
	return chosen, nil
}
