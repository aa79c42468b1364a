// SPDX-License-Identifier: GPL-2.0-only

package contract

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// invariants are the clauses that hold in every state the kernel can be
// in, not only in the one their requirement's spec makes: the suite judges
// them at every checkpoint (after each stackmap spec, and after the fills
// and resets no spec ends in), in every boot. test/clauses holds this list
// to the checkpoints' own marks, and AUDIT.md says where each is judged.
var invariants = []string{
	"SM-NODE-02.1",
	"SM-OPT-03.3",
	"SM-TRACE-01.1", "SM-TRACE-01.2", "SM-TRACE-01.3", "SM-TRACE-01.4",
	"SM-TEXT-01.1", "SM-TEXT-01.2", "SM-TEXT-02.1",
	"SM-STAT-01.1", "SM-STAT-01.2", "SM-STAT-01.3",
	"SM-STAT-02.1", "SM-STAT-02.2", "SM-STAT-02.3",
	"SM-STAT-03.2", "SM-STAT-03.3",
	"SM-BIN-01.1", "SM-BIN-02.1", "SM-BIN-03.1",
	"SM-BOOT-02.1", "SM-BOOT-03.1",
}

// Invariants are the always-true clauses, in CONTRACT.md's order: a copy.
func Invariants() []string { return slices.Clone(invariants) }

// IsInvariant says whether clause id holds in every state.
func IsInvariant(id string) bool { return slices.Contains(invariants, id) }

// CheckpointsLine is the line the suite prints when it ends, saying what
// judging the invariants at its checkpoints cost it, on the guest's clock.
func CheckpointsLine(n int, spent time.Duration, held int) string {
	return fmt.Sprintf("checkpoints: %d judged the always-true clauses in %.2fs; %d ids held to the stack their twin recorded", n, spent.Seconds(), held)
}

var checkpointsLine = regexp.MustCompile(`(?m)^checkpoints: \d+ judged the always-true clauses in ([0-9.]+)s;`)

// CheckpointsSeconds is what a boot's checkpoints cost, read from its
// console (CheckpointsLine); 0 when it judged none.
func CheckpointsSeconds(console []byte) float64 {
	m := checkpointsLine.FindSubmatch(console)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}
