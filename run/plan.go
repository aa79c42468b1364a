package run

import (
	"bytes"
	"context"
	"fmt"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"os"
	"os/exec"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/report"
)

// A BootPlan is one boot of a run: extra kernel command line words and the
// specs that need them. Requirements about boot parameters need boots of
// their own; everything else runs in the default boot.
type BootPlan struct {
	Name   string
	Append []string
	Labels string // Ginkgo label filter selecting this boot's specs
	CPUs   int    // 0 means one
	OptIn  bool   // made only when LABELS= names its label
}

// Plans are the boots a full run makes, default first. The bits values
// cover in range, in range as hex, both clamps, and values that are not a
// number (SM-BOOT-02), and the bare parameter (SM-BOOT-03).
var Plans = []BootPlan{
	{Name: "default", Labels: "!" + contract.LabelNeedsBoot + " && !" + contract.LabelStress},
	{Name: "trace-options", Append: []string{"trace_options=stackmap,stacktrace"}, Labels: "SM-BOOT-01"},
	{Name: "bits-12", Append: []string{"ftrace_stackmap.bits=12"}, Labels: "SM-BOOT-02"},
	{Name: "bits-hex", Append: []string{"ftrace_stackmap.bits=0x10"}, Labels: "SM-BOOT-02"},
	{Name: "bits-30", Append: []string{"ftrace_stackmap.bits=30"}, Labels: "SM-BOOT-02"},
	{Name: "bits-3", Append: []string{"ftrace_stackmap.bits=3"}, Labels: "SM-BOOT-02"},
	{Name: "bits-word", Append: []string{"ftrace_stackmap.bits=many"}, Labels: "SM-BOOT-02"},
	{Name: "bits-bare", Append: []string{"ftrace_stackmap.bits"}, Labels: "SM-BOOT-03"},
	// The hot path under load, on two CPUs, with the smallest map so that
	// it fills and the full-stack fallback runs too: `make stress`.
	{Name: "stress", Append: []string{"ftrace_stackmap.bits=10"}, Labels: contract.LabelStress, CPUs: 2, OptIn: true},
}

// filter is the boot's label filter narrowed by the user's.
func (p BootPlan) filter(user string) string {
	if user == "" {
		return p.Labels
	}
	return "(" + user + ") && (" + p.Labels + ")"
}

// listSpecs asks a host build of the suite for every spec, without running
// any (Ginkgo's dry run), so boots that would select nothing are not made.
func listSpecs(ctx context.Context, suiteBinary string) (types.SpecReports, error) {
	// A file of its own: runs side by side share the process.
	f, err := os.CreateTemp("", "smct-specs-*.json")
	if err != nil {
		return nil, err
	}
	f.Close()
	out := f.Name()
	defer os.Remove(out)
	cmd := exec.CommandContext(ctx, suiteBinary, "-ginkgo.dry-run", "-ginkgo.json-report="+out, "-ginkgo.no-color")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("listing specs (%s -ginkgo.dry-run): %v\n%s", suiteBinary, err, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	reports, err := report.Parse(data)
	if err != nil {
		return nil, err
	}
	return reports[0].SpecReports.WithLeafNodeType(types.NodeTypeIt), nil
}

// selected returns the specs a filter selects.
func selected(specs types.SpecReports, filter string) (types.SpecReports, error) {
	match, err := types.ParseLabelFilter(filter)
	if err != nil {
		return nil, fmt.Errorf("label filter %q: %v", filter, err)
	}
	var out types.SpecReports
	for _, s := range specs {
		if match(s.Labels()) {
			out = append(out, s)
		}
	}
	return out, nil
}

// skippedAs turns specs that plan's boot would have run into UNSUPPORTED
// results with the reason, as a report of their own, named after the boot
// as a made boot's specs are, so every result keeps a name of its own.
func skippedAs(plan BootPlan, specs types.SpecReports, reason string) types.Report {
	r := types.Report{SuiteDescription: "not booted", SuiteSucceeded: true}
	for _, s := range specs {
		s.State = types.SpecStateSkipped
		s.Failure = types.Failure{Message: reason}
		s.ContainerHierarchyTexts = plan.prefixed(s.ContainerHierarchyTexts)
		r.SpecReports = append(r.SpecReports, s)
	}
	return r
}

// prefixed names a spec's containers after the boot that runs it; the
// default boot's specs keep their own names.
func (p BootPlan) prefixed(texts []string) []string {
	if p.Name == "default" {
		return texts
	}
	return append([]string{"boot " + p.Name}, texts...)
}
