// SPDX-License-Identifier: GPL-2.0-only

// Package claims holds what the series claims for the stackmap (its cover
// letter's retention table, the pool's cost, best-effort deduplication)
// and the measurements that test those claims: the samples a claims boot
// takes in the guest (or on a device, in live mode), the numbers drawn
// from the kernel's own counters and trace, and the rules that call each
// claim reproduced or not. It imports neither Ginkgo nor the host's
// runner: the guest writes samples with it, the host judges them.
package claims

// The parts of a claims boot, as -smct.claims names them.
const (
	PartPool      = "pool"
	PartRetention = "retention"
	PartHotPath   = "hot-path"
	PartDedup     = "dedup"
)

// Parts are every part, in the order a boot measures them: the pool
// first, before anything has touched the map.
var Parts = []string{PartPool, PartRetention, PartHotPath, PartDedup}

// Recording modes of a measurement.
const (
	ModeOff       = "off"        // the event disabled: the workload alone
	ModeEvent     = "event"      // the event without a stack
	ModeFullStack = "full-stack" // the event and its full stack (stackmap off)
	ModeStackmap  = "stackmap"   // the event and a stack id (stackmap on)
)

// Workloads of the retention measurement.
const (
	WorkloadSlab = "slab" // kmem_cache_alloc on fork, exec and exit: a shallow stack
	WorkloadDeep = "deep" // net_dev_start_xmit through stacked VLANs: deep and repetitive
	// WorkloadTooDeep is the deep chain's last synthetic event, deeper than
	// the map stores: its stacks fall back to full stacks.
	WorkloadTooDeep = "deeper-than-64"
)

// SampleFile is the frame a claims boot sends its Sample in.
const SampleFile = "claims.json"

// Sample is what one claims boot measured.
type Sample struct {
	Kernel string `json:"kernel"` // uname -r
	CPUs   int    `json:"cpus"`   // online CPUs
	// Pool is the map's memory at boot, before the option was touched.
	Pool      *Pool       `json:"pool,omitempty"`
	Retention []Retention `json:"retention,omitempty"`
	HotPath   *HotPath    `json:"hot_path,omitempty"`
	Dedup     *Dedup      `json:"dedup,omitempty"`
	// Missing says, by part or "part/workload", why it was not measured.
	Missing map[string]string `json:"missing,omitempty"`
}

// Pool is the map's memory as the kernel accounts it.
type Pool struct {
	Capacity int64 `json:"capacity"` // B of stack_map_stat
	// Bytes are /proc/vmallocinfo's allocations whose caller names the
	// stackmap, and Callers those callers; none for an implementation
	// whose functions are named otherwise.
	Bytes   int64    `json:"bytes"`
	Callers []string `json:"callers,omitempty"`
	// VmallocUsedKB is /proc/meminfo's VmallocUsed: boots of other sizes
	// tell the map's share by difference, whatever its callers' names.
	VmallocUsedKB int64 `json:"vmalloc_used_kb"`
	OptionOn      bool  `json:"option_on"` // options/stackmap when measured
}

// Retention is one workload recorded into the same per-CPU buffer in each
// mode until the buffer had wrapped.
type Retention struct {
	Workload string  `json:"workload"`
	Event    string  `json:"event"`
	BufferKB int     `json:"buffer_kb"`
	Rounds   []Round `json:"rounds"`
}

// Round is one mode's recording of a retention workload, on CPU 0.
type Round struct {
	Mode  string   `json:"mode"`
	Runs  int      `json:"runs"`  // workload runs until the buffer had wrapped
	Stats CPUStats `json:"stats"` // per_cpu/cpu0/stats afterwards
	Trace Count    `json:"trace"` // what trace holds afterwards
}

// HotPath is the slab workload timed in each mode, the modes taken in
// turn within each repetition.
type HotPath struct {
	Workload   string   `json:"workload"`
	RunsPerRep int      `json:"runs_per_rep"`
	Timings    []Timing `json:"timings"`
}

// Timing is one mode's repetitions: wall time of RunsPerRep workload
// runs, and the events recorded meanwhile.
type Timing struct {
	Mode   string  `json:"mode"`
	Nanos  []int64 `json:"nanos"`
	Events []int64 `json:"events"`
}

// Dedup is what the map held after rounds in which every CPU ran the same
// workload at the same moment into an empty map.
type Dedup struct {
	CPUs   int `json:"cpus"`
	Rounds int `json:"rounds"`
	// Summed over the rounds: map entries, distinct stacks among them,
	// stacks that appear under more than one id, and the ids beyond each
	// such stack's first.
	Entries      int `json:"entries"`
	Stacks       int `json:"stacks"`
	SplitStacks  int `json:"split_stacks"`
	DuplicateIDs int `json:"duplicate_ids"`
	// What each round's entries, duplicates among them, showed against
	// the <stack_id N> of trace (SelfConsistent): the entries checked,
	// the rounds whose ring buffer lost events (a ref count may then
	// exceed what trace shows), and the first inconsistencies found with
	// how many there were.
	Checked int `json:"checked"`
	// IDsHeld are the ids of trace held to the stack a twin instance
	// recorded for the same event (the conformance suite's SM-TRACE-01.4).
	IDsHeld      int      `json:"ids_held"`
	LostRounds   int      `json:"lost_rounds"`
	Inconsistent []string `json:"inconsistent,omitempty"`
	Faults       int      `json:"faults"`
}
