// SPDX-License-Identifier: GPL-2.0-only

package clauses

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/mutants"
)

// auditRowRE is a row of AUDIT.md: clause, wrong rules, state, separates,
// shown by.
var auditRowRE = regexp.MustCompile(`^\| ((?:SM|BASE)-[A-Z]+-\d+\.\d+) \| (.+) \| (.+) \| (.+) \| (.+) \|$`)

// TestAudit holds AUDIT.md to the contract: one row per clause, each with
// its wrong rules, the state it is judged in, whether that state separates
// them (yes, or partly with why), and faults that are real and break that
// clause.
func TestAudit(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "AUDIT.md"))
	if err != nil {
		t.Fatal(err)
	}
	faultClause := map[string]string{}
	for _, f := range mutants.Faults() {
		faultClause[f.Name] = f.Clause
	}
	rows := map[string]bool{}
	wrong, partly := 0, 0
	for _, line := range strings.Split(string(data), "\n") {
		m := auditRowRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		id, rules, state, separates, shown := m[1], m[2], m[3], m[4], m[5]
		if rows[id] {
			t.Errorf("AUDIT.md: clause %s has two rows", id)
		}
		rows[id] = true
		wrong += len(strings.Split(rules, ";"))
		if strings.TrimSpace(state) == "" {
			t.Errorf("AUDIT.md: clause %s names no state", id)
		}
		switch {
		case separates == "yes":
		case strings.HasPrefix(separates, "partly: ") && len(separates) > len("partly: "):
			partly++
		default:
			t.Errorf("AUDIT.md: clause %s: %q is neither yes nor partly: why", id, separates)
		}
		if shown == "-" {
			continue
		}
		for _, name := range strings.Split(shown, ", ") {
			switch c, ok := faultClause[name]; {
			case !ok:
				t.Errorf("AUDIT.md: clause %s is shown by %s, which is no fault switch", id, name)
			case c != id:
				t.Errorf("AUDIT.md: clause %s is shown by %s, which breaks %s", id, name, c)
			}
		}
	}
	for _, c := range readContract(t) {
		if !rows[c.ID] {
			t.Errorf("AUDIT.md has no row for clause %s: %s", c.ID, c.Text)
		}
		delete(rows, c.ID)
	}
	for id := range rows {
		t.Errorf("AUDIT.md has a row for clause %s, which CONTRACT.md does not have", id)
	}
	t.Logf("%d clauses audited, %d wrong rules considered, %d judged only partly", len(readContract(t)), wrong, partly)
}
