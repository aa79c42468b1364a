// SPDX-License-Identifier: GPL-2.0-only

package contract

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// contractFile is the project's contract, relative to this package.
const contractFile = "../../CONTRACT.md"

// contractHeading matches a requirement's section in the contract: a
// level-3 heading that starts with the ID and a colon.
var contractHeading = regexp.MustCompile(`^### ([A-Z]+(-[A-Z]+)*-\d\d):`)

// contractSections returns the line of each requirement heading in text,
// keyed by ID, and a message for every ID whose heading appears again.
func contractSections(text string) (lines map[string]int, dups []string) {
	lines = map[string]int{}
	for i, line := range strings.Split(text, "\n") {
		m := contractHeading.FindStringSubmatch(strings.TrimSuffix(line, "\r"))
		if m == nil {
			continue
		}
		id := m[1]
		if first, seen := lines[id]; seen {
			dups = append(dups, fmt.Sprintf("%s at lines %d and %d", id, first, i+1))
			continue
		}
		lines[id] = i + 1
	}
	return lines, dups
}

// TestContractCoversRequirements keeps CONTRACT.md and Requirements naming
// the same IDs: one section per requirement, none for an unknown ID.
func TestContractCoversRequirements(t *testing.T) {
	data, err := os.ReadFile(contractFile)
	if err != nil {
		t.Fatalf("reading the contract: %v", err)
	}
	sections, dups := contractSections(string(data))
	for _, d := range dups {
		t.Errorf("%s: %s has two sections", contractFile, d)
	}

	var missing, unknown []string
	for _, id := range RequirementIDs() {
		if _, ok := sections[id]; !ok {
			missing = append(missing, id)
		}
	}
	for id := range sections {
		if _, ok := Requirements[id]; !ok {
			unknown = append(unknown, id)
		}
	}
	sort.Strings(unknown)
	if len(missing) > 0 {
		t.Errorf("in internal/contract/requirements.go but without a `### ID:` section in %s: %s",
			contractFile, strings.Join(missing, ", "))
	}
	if len(unknown) > 0 {
		t.Errorf("sections in %s for IDs not in internal/contract/requirements.go: %s",
			contractFile, strings.Join(unknown, ", "))
	}
}

// TestContractMarksInformational checks that a requirement's heading says
// "(informational)" exactly when the table marks it Informational.
func TestContractMarksInformational(t *testing.T) {
	data, err := os.ReadFile(contractFile)
	if err != nil {
		t.Fatalf("reading the contract: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		m := contractHeading.FindStringSubmatch(strings.TrimSuffix(line, "\r"))
		if m == nil {
			continue
		}
		r, ok := Requirements[m[1]]
		if !ok {
			continue // TestContractCoversRequirements reports it
		}
		if marked := strings.Contains(line, "(informational)"); marked != r.Informational {
			t.Errorf("%s: heading %q: marked informational %v, requirements.go says %v",
				contractFile, line, marked, r.Informational)
		}
	}
}

func TestContractSections(t *testing.T) {
	text := "# x\n### SM-A-01: a\n## SM-B-01: not level 3\n###  SM-C-01: extra space\n" +
		"### SM-RESET-01: b\r\n### SM-A-01 no colon\n### BASE-X-Y-02: c\n### SM-A-01: again\n"
	lines, dups := contractSections(text)
	want := map[string]int{"SM-A-01": 2, "SM-RESET-01": 5, "BASE-X-Y-02": 7}
	if len(lines) != len(want) {
		t.Fatalf("sections = %v, want %v", lines, want)
	}
	for id, n := range want {
		if lines[id] != n {
			t.Errorf("section %s at line %d, want %d", id, lines[id], n)
		}
	}
	if len(dups) != 1 || dups[0] != "SM-A-01 at lines 2 and 8" {
		t.Errorf("duplicates = %q, want [SM-A-01 at lines 2 and 8]", dups)
	}
}

// A spec's name shows the boot that ran it; the default boot's keep theirs.
func TestPrefixedNamesTheBoot(t *testing.T) {
	for _, plan := range Plans() {
		got := plan.Prefixed([]string{"stackmap at boot"})
		want := []string{"boot " + plan.Name, "stackmap at boot"}
		if plan.IsDefault() {
			want = want[1:]
		}
		if !slices.Equal(got, want) {
			t.Errorf("boot %s: Prefixed = %q, want %q", plan.Name, got, want)
		}
	}
}

// What the suite prints of its checkpoints, the bench reads back.
func TestCheckpointsLine(t *testing.T) {
	console := []byte("x\n" + CheckpointsLine(45, 1234*time.Millisecond, 249) + "\ny\n")
	if got := CheckpointsSeconds(console); got != 1.23 {
		t.Errorf("CheckpointsSeconds = %v, want 1.23", got)
	}
	if got := CheckpointsSeconds([]byte("no checkpoints\n")); got != 0 {
		t.Errorf("a console without the line: %v", got)
	}
}
