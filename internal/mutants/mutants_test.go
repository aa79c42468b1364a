// SPDX-License-Identifier: GPL-2.0-only

package mutants

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/kernellog"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kchoice"
	"github.com/ftrace-stackmap/conformance/internal/page"
	"github.com/ftrace-stackmap/conformance/internal/results/golden"
)

func TestCaught(t *testing.T) {
	for _, tc := range []struct {
		name string
		row  Row
		want bool
	}{
		{"clean", Row{}, true},
		{"dirty", Row{Failed: []string{"SM-STAT-01"}}, false},
		{"clean kernel unresolved", Row{Unresolved: []string{"SM-STAT-01"}}, false},
		{"clean kernel warns", Row{Warned: []string{"SM-OPT-02"}}, false},
		{"caught", Row{Fault: "f", Want: "SM-STAT-01", Failed: []string{"SM-STAT-01"}, Unresolved: []string{"SM-BIN-01"}}, true},
		{"caught with a documented echo", Row{Fault: "f", Want: "SM-STAT-01", Echoes: []string{"SM-BIN-01"}, Failed: []string{"SM-BIN-01", "SM-STAT-01"}}, true},
		{"undocumented echo", Row{Fault: "f", Want: "SM-STAT-01", Failed: []string{"SM-BIN-01", "SM-STAT-01"}}, false},
		{"missed", Row{Fault: "f", Want: "SM-STAT-01", Failed: []string{"SM-BIN-01"}}, false},
		{"informational warned", Row{Fault: "f", Want: "SM-OPT-02", Warned: []string{"SM-OPT-02"}}, true},
		{"no verdict", Row{Fault: "f", Want: "SM-STAT-01", Failed: []string{"SM-STAT-01"}, Err: errors.New("hung")}, false},
		// A fault only the checkers see: passes without them, and with
		// them fails the kernel-log check by its report, in a spec.
		{"checker's fault, plain lane", Row{Fault: "f", Want: kernelLog, Checker: "KASAN"}, true},
		{"checker's fault, plain lane, a spec fails", Row{Fault: "f", Want: kernelLog, Checker: "KASAN", Failed: []string{"SM-BIN-04"}}, false},
		{"checker's fault, reported", Row{Fault: "f", Want: kernelLog, Checker: "KASAN", Lane: kchoice.Sanitized, Failed: []string{kernelLog}, Reported: "while default.SM-BIN-04 ran"}, true},
		{"checker's fault, not reported", Row{Fault: "f", Want: kernelLog, Checker: "KASAN", Lane: kchoice.Sanitized}, false},
		{"checker's fault, reported, a spec fails", Row{Fault: "f", Want: kernelLog, Checker: "KASAN", Lane: kchoice.Sanitized, Failed: []string{"SM-BIN-04", kernelLog}, Reported: "x"}, false},
	} {
		if got := tc.row.Caught(); got != tc.want {
			t.Errorf("%s: Caught() = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The table here, the kernel's fault names and kernel/README.md must agree:
// a fault the kernel has but the matrix never boots proves nothing.
func TestFaultsMatchTheKernel(t *testing.T) {
	patches, _ := filepath.Glob("../../kernel/patches/*.patch")
	var kernel strings.Builder
	for _, p := range patches {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		kernel.Write(data)
	}
	readme, err := os.ReadFile("../../kernel/README.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range append(append(Faults(), Checkers()...), Variants()...) {
		if seen[f.Name] {
			t.Errorf("fault %s listed twice", f.Name)
		}
		seen[f.Name] = true
		if f.Checker != "" {
			if !strings.Contains(kernel.String(), `= "`+f.Name+`",`) {
				t.Errorf("fault %s: not a fault name of kernel/patches", f.Name)
			}
			if !strings.Contains(string(readme), "| `"+f.Name+"` | kernel-log: "+f.Checker+" |") {
				t.Errorf("switch %s: kernel/README.md has no row naming kernel-log: %s", f.Name, f.Checker)
			}
			continue
		}
		if _, ok := contract.Requirements[f.Want()]; !ok {
			t.Errorf("fault %s: unknown requirement %s", f.Name, f.Want())
		}
		if !strings.Contains(kernel.String(), `= "`+f.Name+`",`) {
			t.Errorf("fault %s: not a fault name of kernel/patches", f.Name)
		}
		row := f.Want() // a fault's row names the requirement it breaks
		if f.Variant {
			row = f.Clause // a variant's, the clause that permits it
		}
		if !strings.Contains(string(readme), "| `"+f.Name+"` | "+row+" |") {
			t.Errorf("switch %s: kernel/README.md has no row naming %s", f.Name, row)
		}
		for _, id := range f.Echoes {
			if !strings.Contains(string(readme), "- `"+f.Name+"` may also fail "+id+":") {
				t.Errorf("fault %s: kernel/README.md does not say why it may also fail %s", f.Name, id)
			}
		}
	}
	names := regexp.MustCompile(`(?m)^\+\t\[(?:FAULT|VARIANT)_[A-Z_0-9]+\]\s*= "([a-z_0-9]+)",`).FindAllStringSubmatch(kernel.String(), -1)
	if len(names) == 0 {
		t.Fatal("no fault names found in kernel/patches")
	}
	for _, m := range names {
		if !seen[m[1]] {
			t.Errorf("kernel switch %s is not in mutants.Faults() or Variants()", m[1])
		}
	}
}

// planIDs are the requirements a plan's label filter names: a boot of
// those requirements' specs alone.
func planIDs(p contract.BootPlan) []string {
	return contract.IDsOf(strings.FieldsFunc(p.Labels.String(), func(r rune) bool { return strings.ContainsRune(" !&|(),", r) }))
}

// A fault boots only the plans it names (Run sets Options.Boots): a name
// no plan has, an opt-in plan, or a plan whose specs are another
// requirement's boots nothing that can catch it. A fault of an always-true
// clause is caught at the checkpoints of any boot that runs specs.
func TestFaultBootsArePlans(t *testing.T) {
	plans := map[string]contract.BootPlan{}
	only := map[string][]string{} // requirement -> the plans that alone run its specs
	for _, p := range contract.Plans() {
		plans[p.Name] = p
		for _, id := range planIDs(p) {
			only[id] = append(only[id], p.Name)
		}
	}
	for _, f := range Faults() {
		if len(f.Boots) == 0 {
			t.Errorf("fault %s names no boot", f.Name)
		}
		for _, b := range f.Boots {
			p, ok := plans[b]
			switch {
			case !ok:
				t.Errorf("fault %s: no boot plan %q in contract.Plans()", f.Name, b)
			case p.OptIn != "":
				t.Errorf("fault %s: boot %s is opt-in: a run makes it only when LABELS= asks", f.Name, b)
			case contract.IsInvariant(f.Clause):
			case len(planIDs(p)) > 0 && !slices.Contains(planIDs(p), f.Want()):
				t.Errorf("fault %s: boot %s runs the specs of %v only, not %s's", f.Name, b, planIDs(p), f.Want())
			case len(only[f.Want()]) > 0 && !slices.Contains(only[f.Want()], b):
				t.Errorf("fault %s: %s's specs run in boots %v only, not in %s", f.Name, f.Want(), only[f.Want()], b)
			}
		}
	}
	for _, v := range Variants() {
		if len(v.Boots) > 0 {
			t.Errorf("variant %s names boots %v: a variant boots every plan", v.Name, v.Boots)
		}
	}
}

// What the table names is in the contract: every clause in CONTRACT.md,
// every echo a requirement other than the fault's own.
func TestFaultsNameTheContract(t *testing.T) {
	doc, err := os.ReadFile("../../CONTRACT.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(Faults(), Variants()...) {
		if !strings.Contains(string(doc), "\n- ["+f.Clause+"] ") {
			t.Errorf("%s: clause %q is not in CONTRACT.md", f.Name, f.Clause)
		}
		for _, id := range f.Echoes {
			if _, ok := contract.Requirements[id]; !ok || id == f.Want() {
				t.Errorf("fault %s: echo %s is not another requirement of the contract", f.Name, id)
			}
		}
	}
}

// A report counts for a checker's fault only by its kind and inside a spec.
func TestReportedIn(t *testing.T) {
	reports := []kernellog.Report{
		{Kind: "KASAN", Where: "before the specs"},
		{Kind: "warning", Where: "while default.SM-RESET-04.workload ran", Spec: "default.SM-RESET-04.workload"},
		{Kind: "lockdep", Where: "after default.SM-RESET-04.workload, between specs"},
		{Kind: "kmemleak", Where: "allocated at a checkpoint of default.SM-RESET-04.workload", Spec: "default.SM-RESET-04.workload"},
	}
	for kind, want := range map[string]string{
		"KASAN":    "",
		"warning":  reports[1].Where,
		"kmemleak": reports[3].Where,
		"lockdep":  "",
		"UBSAN":    "",
	} {
		if got := reportedIn(reports, kind); got != want {
			t.Errorf("reportedIn(%s) = %q, want %q", kind, got, want)
		}
	}
}

// The mutants' page: a row per fault, its verdict a cell, held to a golden
// file that the browser test opens.
func TestPageGolden(t *testing.T) {
	rows := []Row{
		{},
		{Fault: "id_neighbour", Want: "SM-TRACE-01", Failed: []string{"SM-TRACE-01"}},
		{Fault: "bin_addrs", Want: "SM-BIN-03", Failed: []string{"SM-BIN-03"}, Unresolved: []string{"SM-TRACE-01"}},
		{Fault: "text_order", Want: "SM-TEXT-01", Failed: []string{"SM-TEXT-01", "SM-STAT-03"}},
		{Fault: "pool_short_one", Want: "SM-STAT-03"},
		{Fault: "bare_symbols", Variant: true},
		{Fault: "lock_order", Checker: "lockdep", Err: errors.New("boot default: the kernel panicked")},
	}
	html, err := page.Render(Page(t.TempDir(), rows))
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "mutants/"+page.File, string(html))
}

// A list names faults and variants; the clean row is in every table, and
// naming it says so instead of calling it unknown.
func TestSelectRefuses(t *testing.T) {
	for name, want := range map[string]string{
		"none":          "is made in every table",
		"no-such-fault": "kernel/README.md lists them",
	} {
		if _, err := Select("reset_queue," + name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Select(%q): %v, want an error saying %q", name, err, want)
		}
	}
	if got, err := Select("reset_queue,bare_symbols"); err != nil || len(got) != 2 || got[1].Name != "bare_symbols" {
		t.Errorf("Select of a fault and a variant: %v, %v", got, err)
	}
}
