// SPDX-License-Identifier: GPL-2.0-only

package contract

import (
	"sort"
)

// Requirement is one numbered statement of the contract a spec checks.
type Requirement struct {
	ID            string
	Summary       string
	Informational bool // a miss is a warning, not a failure
}

// Requirements lists every ID a spec may name: the baseline's own and those
// of the stackmap ABI contract. A spec naming an unknown ID is a bug caught
// when the spec tree is built, before anything runs.
var Requirements = indexRequirements([]Requirement{
	{ID: "BASE-TRACEFS-01", Summary: "tracefs is reachable and has a trace file"},
	{ID: "BASE-ONOFF-01", Summary: "tracing_on round-trips 0 and 1"},
	{ID: "BASE-OPTS-01", Summary: "a trace_options token round-trips and matches options/"},
	{ID: "BASE-INST-01", Summary: "an instance can be made and removed"},
	{ID: "BASE-EVENT-01", Summary: "an enabled event produces lines in trace"},
	{ID: "BASE-BOOTOPT-01", Summary: "trace_options= on the kernel command line is reflected at boot"},

	{ID: "SM-NODE-01", Summary: "options/stackmap exists at the top level"},
	{ID: "SM-NODE-02", Summary: "stack_map, stack_map_stat, stack_map_bin exist at the top level"},
	{ID: "SM-MODE-01", Summary: "stack_map 0640, stack_map_stat and stack_map_bin 0440, owned like trace"},
	{ID: "SM-INIT-01", Summary: "options/stackmap implies stack_map; a failed init refuses the option"},
	{ID: "SM-EVT-01", Summary: "events/ftrace/stack_id/format has an int stack_id field", Informational: true},
	{ID: "SM-OPT-01", Summary: "options/stackmap round-trips and trace_options agrees"},
	{ID: "SM-OPT-02", Summary: "stackmap follows stacktrace in trace_options", Informational: true},
	{ID: "SM-OPT-03", Summary: "with a stack source, trace carries <stack_id N>; without, no stacks"},
	{ID: "SM-OPT-04", Summary: "only a reset removes the map: option off, tracer switch, clears, consuming reads, snapshots and CPU hotplug keep it"},
	{ID: "SM-TRACE-01", Summary: "every <stack_id N> a reader of the buffer shows names the block of the stack captured for its event"},
	{ID: "SM-TEXT-01", Summary: "stack_map is well-formed blocks in ascending id order"},
	{ID: "SM-TEXT-02", Summary: "no two stack_map blocks share an id"},
	{ID: "SM-STAT-01", Summary: "stack_map_stat has the exact keys and format"},
	{ID: "SM-STAT-02", Summary: "capacity is a power of two in range, table_size twice it"},
	{ID: "SM-STAT-03", Summary: "counters agree with stack_map after a workload"},
	{ID: "SM-RESET-01", Summary: "reset while tracing fails with EBUSY and changes nothing"},
	{ID: "SM-RESET-02", Summary: "reset accepts 0 and reset, with or without newline, option on or off"},
	{ID: "SM-RESET-03", Summary: "any other reset input fails with EINVAL and changes nothing"},
	{ID: "SM-RESET-04", Summary: "after a reset the map and counters are empty"},
	{ID: "SM-RESET-05", Summary: "a reset clears the top-level ring buffer (v3: keeps it)"},
	{ID: "SM-BIN-01", Summary: "stack_map_bin header: magic, version, count, reserved"},
	{ID: "SM-BIN-02", Summary: "stack_map_bin records fill the file exactly, ids ascending"},
	{ID: "SM-BIN-03", Summary: "binary and text exports agree"},
	{ID: "SM-BIN-04", Summary: "stack_map_bin is a snapshot taken at open"},
	{ID: "SM-INST-01", Summary: "instances have no stackmap option or nodes"},
	{ID: "SM-INST-02", Summary: "an instance's trace_options rejects stackmap (v3: ignores it)"},
	{ID: "SM-INST-03", Summary: "the instance is removed cleanly"},
	{ID: "SM-BOOT-01", Summary: "trace_options=stackmap,stacktrace at boot gives a live map"},
	{ID: "SM-BOOT-02", Summary: "ftrace_stackmap.bits= sets the capacity, clamped"},
	{ID: "SM-BOOT-03", Summary: "a bare ftrace_stackmap.bits boots with the default"},
	{ID: "SM-DEPTH-01", Summary: "a stack deeper than 64 frames is recorded in full, never stored cut (v3: cut and stored); one of 64 is stored"},
	{ID: "SM-ROBUST-01", Summary: "nodes read during a workload stay well-formed"},
})

func indexRequirements(list []Requirement) map[string]Requirement {
	m := make(map[string]Requirement, len(list))
	for _, r := range list {
		if _, dup := m[r.ID]; dup {
			panic("duplicate requirement " + r.ID)
		}
		m[r.ID] = r
	}
	return m
}

// RequirementIDs returns every registered ID, sorted.
func RequirementIDs() []string {
	ids := make([]string, 0, len(Requirements))
	for id := range Requirements {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// IDsOf returns the requirement IDs among a spec's labels.
func IDsOf(labels []string) []string {
	var ids []string
	for _, l := range labels {
		if _, ok := Requirements[l]; ok {
			ids = append(ids, l)
		}
	}
	return ids
}
