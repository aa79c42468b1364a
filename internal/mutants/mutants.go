// SPDX-License-Identifier: GPL-2.0-only

// Package mutants proves the suite can fail: it boots the reference kernel
// once per fault switch (kernel/README.md) and checks that a spec of the
// requirement the fault breaks fails, and that the kernel without faults
// fails nothing.
package mutants

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/contract"
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
}

var (
	defaultBoot = []string{contract.DefaultBoot}
	fullMapBoot = []string{"full-map"}
)

// faults lists every fault switch; kernel/README.md describes them.
var faults = []Fault{
	{"mode_map", "SM-MODE-01.1", defaultBoot, nil},
	{"mode_stat", "SM-MODE-01.2", defaultBoot, nil},
	{"mode_bin", "SM-MODE-01.1", defaultBoot, nil},
	{"init_fail", "SM-INIT-01.2", defaultBoot, nil},
	{"no_stack_ids", "SM-OPT-03.1", defaultBoot, nil},
	{"stacks_without_source", "SM-OPT-03.2", defaultBoot, nil},
	{"dangling_ids", "SM-TRACE-01.1", defaultBoot, nil},
	{"text_order", "SM-TEXT-01.2", defaultBoot, nil},
	{"text_depth", "SM-TEXT-01.1", defaultBoot, nil},
	{"text_dup", "SM-TEXT-02.1", defaultBoot, nil},
	{"stat_key", "SM-STAT-01.1", defaultBoot, nil},
	{"stat_format", "SM-STAT-01.1", defaultBoot, nil},
	{"success_rate_always", "SM-STAT-01.2", defaultBoot, nil},
	{"table_size", "SM-STAT-02.2", defaultBoot, nil},
	{"bad_counts", "SM-STAT-03.3", defaultBoot, nil},
	{"no_ebusy", "SM-RESET-01.1", defaultBoot, nil},
	{"no_einval", "SM-RESET-03.1", defaultBoot, nil},
	{"reset_keeps_counters", "SM-RESET-04.1", defaultBoot, nil},
	{"reset_keeps_buffer", "SM-RESET-05.1", defaultBoot, nil},
	{"reset_skips_snapshot", "SM-RESET-05.2", defaultBoot, nil},
	{"reset_needs_option", "SM-RESET-02.1", defaultBoot, nil},
	{"bad_magic", "SM-BIN-01.1", defaultBoot, nil},
	{"bad_version", "SM-BIN-01.1", defaultBoot, nil},
	{"byte_swap", "SM-BIN-01.2", defaultBoot, nil},
	{"bin_truncated", "SM-BIN-02.1", defaultBoot, nil},
	{"bin_size", "SM-BIN-02.2", defaultBoot, nil},
	{"bin_ids", "SM-BIN-03.1", defaultBoot, nil},
	{"bin_depth", "SM-BIN-03.1", defaultBoot, nil},
	{"bin_ref", "SM-BIN-03.1", defaultBoot, nil},
	{"bin_live", "SM-BIN-04.1", defaultBoot, []string{"SM-ROBUST-01"}},
	{"inst_option", "SM-INST-01.1", defaultBoot, nil},
	{"inst_nodes", "SM-INST-01.1", defaultBoot, nil},
	{"inst_inherit", "SM-INST-01.2", defaultBoot, nil},
	{"inst_trace_options", "SM-INST-02.1", defaultBoot, nil},
	{"boot_option_ignored", "SM-BOOT-01.1", []string{"trace-options"}, nil},
	{"bits_ignored", "SM-BOOT-02.1", []string{"bits-12", "bits-hex", "bits-30", "bits-3"}, nil},
	{"bits_bare", "SM-BOOT-03.1", []string{"bits-bare"}, nil},
	{"bits_null", "SM-BOOT-03.1", []string{"bits-bare"}, nil},
	{"option_listing", "SM-OPT-01.2", defaultBoot, nil},
	{"option_order", "SM-OPT-02.1", defaultBoot, nil},
	{"option_off_clears", "SM-OPT-04.1", defaultBoot, nil},
	{"inst_rmdir", "SM-INST-03.1", defaultBoot, nil},
	{"busy_reads", "SM-ROBUST-01.1", defaultBoot, nil},
	{"depth_truncate", "SM-DEPTH-01.1", defaultBoot, nil},
	{"drops_early", "SM-STAT-03.4", fullMapBoot, nil},
	{"drop_no_fallback", "SM-STAT-03.5", fullMapBoot, nil},
	{"rate_ignores_drops", "SM-STAT-01.3", fullMapBoot, nil},
	{"bin_full_short", "SM-BIN-03.1", fullMapBoot, nil},
	{"reset_keeps_drops", "SM-RESET-04.1", fullMapBoot, nil},
	{"reset_keeps_pool", "SM-RESET-04.4", fullMapBoot, nil},
	{"reset_queue", "SM-RESET-01.2", defaultBoot, nil},
	{"ebusy_first", "SM-RESET-03.2", defaultBoot, nil},
	{"bin_addrs", "SM-BIN-03.2", defaultBoot, nil},
	{"entries_overflow", "SM-STAT-02.3", fullMapBoot, nil},
	{"no_bin_node", "SM-NODE-02.1", defaultBoot, nil},
	{"text_rewind", "SM-ROBUST-01.2", defaultBoot, nil},
}

// Want is the requirement ID that must fail: the clause's.
func (f Fault) Want() string {
	id, _, _ := strings.Cut(f.Clause, ".")
	return id
}

// Faults are every fault switch of the reference kernel, in the order the
// table shows them: a copy.
func Faults() []Fault { return slices.Clone(faults) }

// Row is one line of the matrix.
type Row struct {
	Fault  string // "" for the kernel without faults
	Want   string
	Echoes []string // the fault's documented echoes
	// Failed are the requirements with a FAIL, Unresolved those that could
	// not be decided (a prerequisite broke) and no FAIL.
	Failed, Unresolved []string
	// Warned are informational requirements whose spec warned: for them a
	// warning, not a failure, is how the suite reports a miss.
	Warned []string
	Err    error // no verdict
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
	if r.Fault == "" {
		return len(r.Failed) == 0 && len(r.Unresolved) == 0 && len(r.Warned) == 0
	}
	hit := slices.Contains(r.Failed, r.Want) || slices.Contains(r.Warned, r.Want)
	return hit && len(r.Undocumented()) == 0
}

// Run boots the kernel of base once without faults and once per fault.
func Run(ctx context.Context, base qemutest.Options, faults []Fault, progress io.Writer) []Row {
	var rn qemutest.Runner // one kernel for every run: probed for KVM once
	rows := []Row{boot(ctx, &rn, base, Fault{}, progress)}
	for _, f := range faults {
		rows = append(rows, boot(ctx, &rn, base, f, progress))
	}
	return rows
}

func boot(ctx context.Context, rn *qemutest.Runner, o qemutest.Options, f Fault, progress io.Writer) Row {
	name := f.Name
	if name == "" {
		name = "none"
	} else {
		o.BootArgs = append(append([]string{}, o.BootArgs...), "ftrace_stackmap.faults="+f.Name)
		o.Boots = f.Boots
	}
	o.ResultsDir = filepath.Join(o.ResultsDir, name)
	fmt.Fprintf(progress, "--- fault %s\n", name)
	res, err := rn.Run(ctx, o)
	row := Row{Fault: f.Name, Want: f.Want(), Echoes: f.Echoes, Err: err}
	if err != nil {
		return row
	}
	// What the fault made fail, in the reports a reviewer reads.
	if _, err := results.Write(res); err != nil {
		fmt.Fprintf(progress, "note: writing the reports of fault %s: %v\n", name, err)
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
	return row
}

// WriteTable prints the matrix: fault, the requirement that must fail,
// whether it did, what else failed (an undocumented echo is marked "!"),
// and what could not be decided because of it.
func WriteTable(w io.Writer, rows []Row) (ok bool) {
	ok = true
	fmt.Fprintf(w, "%-22s %-12s %-7s %-26s %s\n", "fault", "must fail", "verdict", "also failed", "unresolved")
	for _, r := range rows {
		name, want := r.Fault, r.Want
		if name == "" {
			name, want = "(none)", "nothing"
		}
		verdict := "caught"
		if r.Fault == "" {
			verdict = "clean"
		}
		var also []string
		for _, id := range r.Also() {
			if !slices.Contains(r.Echoes, id) {
				id += "!"
			}
			also = append(also, id)
		}
		for _, id := range r.Warned {
			if id != r.Want {
				also = append(also, id+"(warning)")
			}
		}
		alsoText, unresolved := dash(also), dash(r.Unresolved)
		switch {
		case r.Err != nil:
			verdict, alsoText, unresolved = "NO VERDICT", r.Err.Error(), ""
		case !r.Caught() && r.Fault == "":
			verdict = "DIRTY"
		case r.Fault != "" && !slices.Contains(r.Failed, r.Want) && !slices.Contains(r.Warned, r.Want):
			verdict = "MISSED"
		case !r.Caught():
			verdict = "ECHO"
		}
		if verdict != "caught" && verdict != "clean" {
			ok = false
		}
		if slices.Contains(r.Warned, r.Want) {
			want += "(w)"
		}
		fmt.Fprintf(w, "%-22s %-12s %-7s %-26s %s\n", name, want, verdict, alsoText, unresolved)
	}
	return ok
}

func dash(ids []string) string {
	if len(ids) == 0 {
		return "-"
	}
	return strings.Join(ids, " ")
}
