// SPDX-License-Identifier: GPL-2.0-only

package clauses

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/test/dryrun"
)

// operations are what a user can do to the stackmap files and the trace
// files they touch: AUDIT.md's table must have a row for each, made by a
// spec the suite has.
var operations = []string{
	"read", "per-CPU read", "consuming read", "raw consuming read", "snapshot",
	"clear", "per-CPU clear", "CPU hotplug",
	"read of the map", "seek and partial read", "read under load", "reader across a reset",
	"reset", "refused reset", "option switch", "tracer switch", "instance",
	"stack source: event stacktrace", "stack source: trigger", "stack source: function tracer",
	"boot-time option", "bits parameter",
	"boundary: 64 frames", "boundary: 65 frames", "boundary: the last free slot", "boundary: the first drop",
}

// operationRowRE is a row of the table: operation, on, can break, made by.
var operationRowRE = regexp.MustCompile("^\\| ([^|`]+) \\| (.+) \\| ((?:(?:SM|BASE)-[A-Z]+-\\d+(?:, )?)+) \\| (.+) \\|$")

// TestEveryOperationHasItsSpec holds AUDIT.md's table of operations to
// the suite: every operation has a row, every row names requirements that
// exist and specs that a boot of the plan runs.
func TestEveryOperationHasItsSpec(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "AUDIT.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## The operations a user can make\n")
	if !ok {
		t.Fatal("AUDIT.md has no section \"The operations a user can make\"")
	}
	suite := dryrun.Suite(t)
	names := map[string]bool{}
	for _, p := range contract.Plans() {
		for _, s := range dryrun.List(t, suite, p.Name, p.Labels.String(), 1) {
			names[s.Name] = true
		}
	}
	rows := map[string]int{}
	for _, line := range strings.Split(section, "\n") {
		m := operationRowRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		op := m[1]
		rows[op]++
		for _, id := range strings.Split(m[3], ", ") {
			if _, ok := contract.Requirements[id]; !ok {
				t.Errorf("AUDIT.md: operation %q can break %s, which the contract does not have", op, id)
			}
		}
		for _, spec := range strings.Split(m[4], ", ") {
			if !names[spec] {
				t.Errorf("AUDIT.md: operation %q is made by %s, which no boot of the plan runs", op, spec)
			}
		}
	}
	for _, op := range operations {
		if rows[op] == 0 {
			t.Errorf("AUDIT.md: the operation %q has no row", op)
		}
	}
	for op := range rows {
		if !slices.Contains(operations, op) {
			t.Errorf("AUDIT.md: the row of %q is no operation this test knows: add it to operations", op)
		}
	}
	t.Logf("%d operations, %d rows, %d specs in the plan", len(operations), len(rows), len(names))
}
