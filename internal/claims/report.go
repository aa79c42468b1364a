// SPDX-License-Identifier: GPL-2.0-only

package claims

// Status is what a measurement says of a claim.
type Status string

// The statuses, by the rules README.md states (see Judge).
const (
	Reproduced      Status = "reproduced"
	Smaller         Status = "smaller than claimed"
	NotReproduced   Status = "not reproduced"
	CouldNotMeasure Status = "could not measure"
	// NoFigure is a measurement of something the series claims no figure for.
	NoFigure Status = "measured, no figure claimed"
)

// Claim is one claim of the series beside what was measured.
type Claim struct {
	ID       string  `json:"id"`
	What     string  `json:"what"`
	Claimed  string  `json:"claimed"`
	Measured string  `json:"measured"`
	Value    float64 `json:"value"` // the measured figure, in Unit; 0 when none
	// ClaimedValue is the cover letter's figure in Unit, where it gives
	// one to compare with; 0 when it does not.
	ClaimedValue float64 `json:"claimed_value,omitempty"`
	Unit         string  `json:"unit,omitempty"`
	Status       Status  `json:"status"`
	Why          string  `json:"why"` // the rule that decided, or why nothing was measured
}

// Boot is one claims boot as the host saw it.
type Boot struct {
	Name   string  `json:"name"`
	Bits   int     `json:"bits"` // the bits= it was booted with; 0 for none (the default)
	Sample *Sample `json:"sample,omitempty"`
	Error  string  `json:"error,omitempty"` // why it brought back no sample
}

// Report is the claims plan's outcome.
type Report struct {
	Machine     string         `json:"machine"`  // QEMU's version and machine settings, or the device
	Emulated    bool           `json:"emulated"` // TCG: times are not hardware times
	Kernel      string         `json:"kernel"`
	Claims      []Claim        `json:"claims"`
	Rows        []RetentionRow `json:"retention"`
	Pool        []PoolRow      `json:"pool"`
	HotPath     []HotRow       `json:"hot_path"`
	HotWorkload string         `json:"hot_path_workload,omitempty"`
	Dedup       *Dedup         `json:"dedup,omitempty"`
	Boots       []Boot         `json:"boots"`
}

// RetentionRow is one workload in one mode.
type RetentionRow struct {
	Workload      string  `json:"workload"`
	Event         string  `json:"event"`
	Mode          string  `json:"mode"`
	BufferKB      int     `json:"buffer_kb"`
	Events        int     `json:"events"`
	BytesPerEvent float64 `json:"bytes_per_event"`
	SpanSeconds   float64 `json:"span_seconds"`
	Overrun       int64   `json:"overrun"`
	IDs           int     `json:"ids"`
	FullStacks    int     `json:"full_stacks"`
	// Stacks deeper than the map stores: in full, and under an id.
	DeepFullStacks int `json:"deep_full_stacks"`
	DeepIDs        int `json:"deep_ids"`
}

// PoolRow is the map's memory in one boot.
type PoolRow struct {
	Boot     string `json:"boot"`
	Bits     int    `json:"bits"`
	Capacity int64  `json:"capacity"`
	Bytes    int64  `json:"bytes"` // by caller name
	// VmallocDeltaKB is VmallocUsed less the smallest map's boot's: the
	// map's growth seen without its callers' names.
	VmallocDeltaKB int64 `json:"vmalloc_delta_kb"`
	BytesDelta     int64 `json:"bytes_delta"` // Bytes less the smallest map's
}

// HotRow is one mode of the hot-path timing: medians over repetitions and
// the spread of the cost per event.
type HotRow struct {
	Mode         string  `json:"mode"`
	NanosPerRun  float64 `json:"nanos_per_run"`
	EventsPerRun float64 `json:"events_per_run"`
	NanosPerEvt  float64 `json:"nanos_per_event"` // beyond the workload alone; 0 for off
	MinPerEvt    float64 `json:"min_nanos_per_event"`
	MaxPerEvt    float64 `json:"max_nanos_per_event"`
	Reps         int     `json:"reps"`
}

// The cover letter's figures.
const (
	claimedEvents = 2.17 // 645,068 -> 1,397,741 retained events
	claimedBytes  = 2.17 // ~104 -> ~48 bytes per event
	claimedSpan   = 1.85 // 15.0 -> 27.7 s
	claimedPool14 = 8 << 20
	claimedPool18 = 135 << 20
)

// The rules, as README.md states them.
const (
	ruleRatio  = "reproduced at 90% of the claimed ratio or more; smaller than claimed from 1.1x; not reproduced below 1.1x"
	rulePool   = "reproduced within 25% of the claimed size; smaller than claimed below; not reproduced above"
	ruleDepth  = "reproduced when the deep workload's events ratio is a win (1.1x or more) and exceeds the slab workload's"
	ruleFall   = "reproduced when, with the option on, every stack deeper than 64 frames is recorded in full and none under an id"
	ruleEager  = "reproduced when the pool is there at boot with the option never set"
	ruleDedup  = "measured, not judged: the series gives no figure for a small number"
	ruleLookup = "reproduced when every <stack_id N> of trace names a block of stack_map, every block's ref count is the number of events under its id (at least, when the ring buffer lost events), the ids of a split stack add up to its events, and each id names the stack a twin instance captured for the same event"
)
