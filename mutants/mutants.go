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

	"github.com/ftrace-stackmap/conformance/outcome"
	"github.com/ftrace-stackmap/conformance/review"
	"github.com/ftrace-stackmap/conformance/run"
)

// Fault is one fault switch of the reference kernel and the requirement
// whose spec must catch it.
type Fault struct {
	Name  string
	Want  string   // the requirement ID that must fail
	Boots []string // the boot plans that can see it
}

var defaultBoot = []string{"default"}

// Faults lists every fault switch; kernel/README.md describes them.
var Faults = []Fault{
	{"mode_map", "SM-MODE-01", defaultBoot},
	{"mode_stat", "SM-MODE-01", defaultBoot},
	{"mode_bin", "SM-MODE-01", defaultBoot},
	{"init_fail", "SM-INIT-01", defaultBoot},
	{"no_stack_ids", "SM-OPT-03", defaultBoot},
	{"stacks_without_source", "SM-OPT-03", defaultBoot},
	{"dangling_ids", "SM-TRACE-01", defaultBoot},
	{"text_order", "SM-TEXT-01", defaultBoot},
	{"text_depth", "SM-TEXT-01", defaultBoot},
	{"text_dup", "SM-TEXT-02", defaultBoot},
	{"stat_key", "SM-STAT-01", defaultBoot},
	{"stat_format", "SM-STAT-01", defaultBoot},
	{"success_rate_always", "SM-STAT-01", defaultBoot},
	{"table_size", "SM-STAT-02", defaultBoot},
	{"bad_counts", "SM-STAT-03", defaultBoot},
	{"no_ebusy", "SM-RESET-01", defaultBoot},
	{"no_einval", "SM-RESET-03", defaultBoot},
	{"reset_keeps_counters", "SM-RESET-04", defaultBoot},
	{"reset_keeps_buffer", "SM-RESET-05", defaultBoot},
	{"bad_magic", "SM-BIN-01", defaultBoot},
	{"bad_version", "SM-BIN-01", defaultBoot},
	{"byte_swap", "SM-BIN-01", defaultBoot},
	{"bin_truncated", "SM-BIN-02", defaultBoot},
	{"bin_size", "SM-BIN-02", defaultBoot},
	{"bin_ids", "SM-BIN-03", defaultBoot},
	{"bin_depth", "SM-BIN-03", defaultBoot},
	{"bin_ref", "SM-BIN-03", defaultBoot},
	{"bin_live", "SM-BIN-04", defaultBoot},
	{"inst_option", "SM-INST-01", defaultBoot},
	{"inst_nodes", "SM-INST-01", defaultBoot},
	{"inst_trace_options", "SM-INST-02", defaultBoot},
	{"boot_option_ignored", "SM-BOOT-01", []string{"trace-options"}},
	{"bits_ignored", "SM-BOOT-02", []string{"bits-12", "bits-hex", "bits-30", "bits-3"}},
	{"bits_bare", "SM-BOOT-03", []string{"bits-bare"}},
	{"option_listing", "SM-OPT-01", defaultBoot},
	{"option_order", "SM-OPT-02", defaultBoot},
	{"inst_rmdir", "SM-INST-03", defaultBoot},
	{"busy_reads", "SM-ROBUST-01", defaultBoot},
}

// Row is one line of the matrix.
type Row struct {
	Fault  string // "" for the kernel without faults
	Want   string
	Failed []string // requirement IDs that did not pass
	// Warned are informational requirements whose spec warned: for them a
	// warning, not a failure, is how the suite reports a miss.
	Warned []string
	Err    error // no verdict
}

// Caught says whether the row is as it must be.
func (r Row) Caught() bool {
	if r.Err != nil {
		return false
	}
	if r.Fault == "" {
		return len(r.Failed) == 0 && len(r.Warned) == 0
	}
	return slices.Contains(r.Failed, r.Want) || slices.Contains(r.Warned, r.Want)
}

// Run boots the kernel of base once without faults and once per fault.
func Run(ctx context.Context, base run.Options, faults []Fault, progress io.Writer) []Row {
	rows := []Row{boot(ctx, base, Fault{}, progress)}
	for _, f := range faults {
		rows = append(rows, boot(ctx, base, f, progress))
	}
	return rows
}

func boot(ctx context.Context, o run.Options, f Fault, progress io.Writer) Row {
	name := f.Name
	if name == "" {
		name = "none"
	} else {
		o.BootArgs = append(append([]string{}, o.BootArgs...), "ftrace_stackmap.faults="+f.Name)
		o.Boots = f.Boots
	}
	o.ResultsDir = filepath.Join(o.ResultsDir, name)
	fmt.Fprintf(progress, "--- fault %s\n", name)
	res, err := run.QemuTest(ctx, o)
	row := Row{Fault: f.Name, Want: f.Want, Err: err}
	if err != nil {
		return row
	}
	// What the fault made fail, in the reports a reviewer reads.
	if _, err := review.Write(res, o); err != nil {
		fmt.Fprintf(progress, "note: writing the reports of fault %s: %v\n", name, err)
	}
	for id, c := range res.Summary.Coverage() {
		if c == outcome.Fail || c == outcome.Unresolved {
			row.Failed = append(row.Failed, id)
		}
	}
	for _, sp := range res.Summary.Specs {
		if len(sp.Warnings) > 0 {
			row.Warned = append(row.Warned, sp.IDs...)
		}
	}
	sort.Strings(row.Failed)
	sort.Strings(row.Warned)
	return row
}

// WriteTable prints the matrix: fault, the requirement that must fail, the
// requirements that did, and whether that is right.
func WriteTable(w io.Writer, rows []Row) (ok bool) {
	ok = true
	fmt.Fprintf(w, "%-22s %-12s %-7s %s\n", "fault", "must fail", "verdict", "requirements that failed")
	for _, r := range rows {
		name, want := r.Fault, r.Want
		if name == "" {
			name, want = "(none)", "nothing"
		}
		verdict := "caught"
		if r.Fault == "" {
			verdict = "clean"
		}
		failed := strings.Join(r.Failed, " ")
		for _, id := range r.Warned {
			failed = strings.TrimSpace(failed + " " + id + "(warning)")
		}
		switch {
		case r.Err != nil:
			verdict, failed = "NO VERDICT", r.Err.Error()
		case !r.Caught() && r.Fault == "":
			verdict = "DIRTY"
		case !r.Caught():
			verdict = "MISSED"
		}
		if verdict != "caught" && verdict != "clean" {
			ok = false
		}
		if failed == "" {
			failed = "-"
		}
		fmt.Fprintf(w, "%-22s %-12s %-7s %s\n", name, want, verdict, failed)
	}
	return ok
}
