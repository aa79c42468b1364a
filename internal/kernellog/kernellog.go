// SPDX-License-Identifier: GPL-2.0-only

// Package kernellog finds what a kernel's log says went wrong: a warning,
// an oops, a stall, a report of one of the kernel's checkers (KASAN,
// UBSAN, lockdep, debug-objects, kmemleak...), each named by its kind,
// its first lines and the spec that was running when it appeared. The
// host judges each boot's log with it, and the guest's init, for a runner
// that reads only the console (a LAVA job), with the same rule.
package kernellog

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The lines the guest adds to the kernel's log for this reader.
const (
	// SpecMark begins a line the suite logs as a spec starts and ends:
	// "smct-spec: start default.SM-BIN-02 jiffies=4294892480". The
	// jiffies, when there, place a kmemleak object's allocation.
	SpecMark = "smct-spec: "
	// LeakLine begins each line of a kmemleak object the guest read from
	// /sys/kernel/debug/kmemleak after a scan: that file is not in the log.
	LeakLine = "smct-kmemleak: "
)

// trouble matches the first line of what a kernel prints when it warns,
// oopses, stalls or one of its checkers reports.
var trouble = regexp.MustCompile(`WARNING: |BUG: |kernel BUG at |Oops|general protection fault|soft lockup|hard LOCKUP|rcu: INFO: |self-detected stall|Unable to handle kernel|UBSAN: |KASAN: |KFENCE: |ODEBUG: |list_(add|del) corruption|INFO: task .* blocked for more than|suspected memory leaks|` + LeakLine + `unreferenced object`)

// Trouble says whether one line of a kernel's log reports trouble.
func Trouble(line string) bool { return trouble.MatchString(line) }

// splatOf begins the splat that follows a checker's one-line message
// (debug-objects', a list's corruption): part of that report, not one of
// its own.
var splatOf = regexp.MustCompile(`^(WARNING: CPU: |kernel BUG at )`)

// kinds name a report by its first lines, the first match winning: a
// lockdep splat begins "WARNING:" too.
var kinds = []struct {
	kind string
	re   *regexp.Regexp
}{
	{"KASAN", regexp.MustCompile(`KASAN: `)},
	{"KFENCE", regexp.MustCompile(`KFENCE: `)},
	{"UBSAN", regexp.MustCompile(`UBSAN: `)},
	{"kmemleak", regexp.MustCompile(`suspected memory leaks|` + LeakLine)},
	{"debug-objects", regexp.MustCompile(`ODEBUG: `)},
	{"list corruption", regexp.MustCompile(`list_(add|del) corruption|lib/list_debug`)},
	{"lockdep", regexp.MustCompile(`locking dependency|recursive locking|inconsistent lock state|bad unlock balance|held lock freed|lock held when returning|lock inversion|lockdep`)},
	{"RCU", regexp.MustCompile(`RCU usage|rcu: INFO: |self-detected stall`)},
	{"hung task", regexp.MustCompile(`blocked for more than`)},
	{"lockup", regexp.MustCompile(`soft lockup|hard LOCKUP`)},
	{"warning", regexp.MustCompile(`WARNING: `)},
	{"oops", regexp.MustCompile(``)},
}

// Report is one report in a kernel's log.
type Report struct {
	Kind  string   // "KASAN", "lockdep", "kmemleak", "warning"...
	Lines []string // its first lines, the matching one first; a leak's allocation stack
	Where string   // "while default.SM-BIN-02 ran", "before the specs"...
	// Spec is the spec that was running when the report appeared (for a
	// leak, when its object was allocated), "" outside every spec.
	Spec string
}

func (r Report) String() string {
	return r.Kind + " report " + r.Where + ": " + strings.Join(r.Lines, " | ")
}

// Problems returns the reports of a kernel log, each as one line. A
// report that repeats (a warning on every reset) is listed once, with
// how often it came again and where last.
func Problems(dmesg []byte) []string {
	type group struct {
		first      Report
		more       int
		lastPlaced string
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, r := range Reports(dmesg) {
		key := r.Kind + "\x00" + digits.ReplaceAllString(r.Lines[0], "N")
		if g := byKey[key]; g != nil {
			g.more++
			g.lastPlaced = r.Where
			continue
		}
		g := &group{first: r}
		byKey[key] = g
		groups = append(groups, g)
	}
	var out []string
	for _, g := range groups {
		line := g.first.String()
		if g.more > 0 {
			line += fmt.Sprintf(" (and %d more like it, the last %s)", g.more, g.lastPlaced)
		}
		out = append(out, line)
	}
	return out
}

// digits are what differs between two reports of one place: the CPU,
// the PID, the address.
var digits = regexp.MustCompile(`[0-9a-f]{6,}|\d+`)

// machineState are the lines of a report that name no code: the bytes at
// the faulting address and the register dump, on x86 ("Code: ...",
// "RAX: 0000...") and arm64 ("x29: ffff...", "sp : ffff...").
var machineState = regexp.MustCompile(`^(?:Code: |(?:[A-Z0-9]{2,3}|x\d{1,2}|sp|pstate) ?: ?(?:[0-9a-f]{4}:)?[0-9a-f]{8})`)

// firstLines is how many lines name a report: enough for the access
// and the task, or the lock and the function.
const firstLines = 4

// leakTracking are kmemleak's own frames at the top of an allocation
// stack (arm64 shows them): they name no allocation.
var leakTracking = regexp.MustCompile(`^(?:__)?(?:create_object|kmemleak_alloc)`)

// leakFrames is how much of a leaked object's allocation stack names it.
const leakFrames = 6

// Reports returns the reports of a kernel log, as the init sends it
// ("<6>[    0.715308] text") or a console shows it ("[    0.715308] text"),
// in the order they were logged.
func Reports(dmesg []byte) []Report {
	var (
		out    []Report
		cur    *Report
		since  int  // lines since cur's first
		frames bool // cur is a leak, in its backtrace
		place  placer
		listed bool // the guest listed kmemleak's objects
		kernel []int
	)
	for i, raw := range strings.Split(string(dmesg), "\n") {
		if i == 0 {
			place.headLost = headLost(raw)
		}
		text := message(raw)
		if rest, ok := strings.CutPrefix(text, SpecMark); ok {
			place.mark(rest)
			cur = nil
			continue
		}
		if trouble.MatchString(text) && !(cur != nil && since <= 2 && splatOf.MatchString(text)) {
			out = append(out, Report{Kind: kindOf(text), Lines: []string{strings.TrimPrefix(text, LeakLine)}, Where: place.where(), Spec: place.running})
			cur, since, frames = &out[len(out)-1], 0, false
			if strings.HasPrefix(text, LeakLine) {
				listed = true
			} else if cur.Kind == "kmemleak" {
				kernel = append(kernel, len(out)-1)
			}
			continue
		}
		if cur == nil {
			continue
		}
		since++
		if cur.Kind == "kmemleak" && strings.HasPrefix(text, LeakLine) {
			line := strings.TrimSpace(strings.TrimPrefix(text, LeakLine))
			if j, ok := leakJiffies(line); ok {
				cur.Where, cur.Spec = place.allocated(j)
			}
			switch {
			case strings.HasPrefix(line, "backtrace"):
				frames = true
			case frames && len(cur.Lines) <= leakFrames && !leakTracking.MatchString(frame(line)):
				cur.Lines = append(cur.Lines, frame(line))
			}
			continue
		}
		if len(cur.Lines) >= firstLines || since > 40 {
			cur = nil
			continue
		}
		if t := strings.TrimSpace(text); t != "" && !separator(t) && !machineState.MatchString(t) {
			cur.Lines = append(cur.Lines, t)
		}
	}
	// The kernel's own "N new suspected memory leaks" line says only that
	// the guest's list follows; with the list there, each object is a
	// report of its own, placed by its allocation, and the line is not.
	if listed {
		for i := len(kernel) - 1; i >= 0; i-- {
			out = append(out[:kernel[i]], out[kernel[i]+1:]...)
		}
	}
	return out
}

func kindOf(head string) string {
	for _, k := range kinds {
		if k.re.MatchString(head) {
			return k.kind
		}
	}
	return "oops"
}

// message is a log line without its level and time stamp.
func message(line string) string {
	line = strings.TrimRight(line, "\r")
	if strings.HasPrefix(line, "<") {
		if _, rest, ok := strings.Cut(line, ">"); ok {
			line = rest
		}
	}
	if strings.HasPrefix(strings.TrimSpace(line), "[") {
		if _, rest, ok := strings.Cut(line, "] "); ok {
			line = rest
		}
	}
	return line
}

// separator is a line that frames a report: "=====", "-----", "[ cut here ]".
func separator(t string) bool {
	return strings.Trim(t, "=-") == "" || strings.Contains(t, "[ cut here ]")
}

var (
	jiffiesField = regexp.MustCompile(`\bjiffies[ =](\d+)`)
	frameAddr    = regexp.MustCompile(`^\[<[0-9a-f]+>\]\s*`)
)

func leakJiffies(line string) (uint64, bool) {
	m := jiffiesField.FindStringSubmatch(line)
	if m == nil {
		return 0, false
	}
	j, err := strconv.ParseUint(m[1], 10, 64)
	return j, err == nil
}

// frame is a backtrace line without its address, which differs per boot.
func frame(line string) string { return frameAddr.ReplaceAllString(line, "") }

// placer follows the suite's spec marks through a log.
type placer struct {
	running, last string
	checkpoint    bool // the running spec is at a checkpoint
	marks         []jiffyMark
	// headLost says the log does not begin at the boot: the kernel's ring
	// buffer overwrote its start, and the marks in it with it.
	headLost bool
}

// unplaced is where a report is when the marks that would place it are
// gone.
const unplaced = "at a point the log no longer places (its start was overwritten)"

// headLost says whether a log's first line is not the boot's first, which
// the kernel stamps 0.
func headLost(first string) bool {
	_, rest, ok := strings.Cut(first, "[")
	if !ok {
		return false
	}
	stamp, _, ok := strings.Cut(rest, "]")
	t, err := strconv.ParseFloat(strings.TrimSpace(stamp), 64)
	return ok && err == nil && t > 0
}

// jiffyMark is where the run was from a mark on, and the jiffies then.
type jiffyMark struct {
	jiffies     uint64
	where, spec string
}

// mark reads a spec mark: "start NAME", "end NAME", or "checkpoint" and
// "resume" around a checkpoint of the running spec; each may end in
// " jiffies=N".
func (p *placer) mark(rest string) {
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return
	}
	name := ""
	if len(fields) > 1 && !strings.HasPrefix(fields[1], "jiffies=") {
		name = fields[1]
	}
	switch fields[0] {
	case "start":
		p.running, p.checkpoint = name, false
	case "end":
		p.running, p.last, p.checkpoint = "", name, false
	case "checkpoint", "resume":
		p.checkpoint = fields[0] == "checkpoint"
	default:
		return
	}
	if j, ok := leakJiffies(rest); ok {
		p.marks = append(p.marks, jiffyMark{j, p.where(), p.running})
	}
}

// where places what is logged now.
func (p *placer) where() string {
	switch {
	case p.running != "" && p.checkpoint:
		return "at a checkpoint of " + p.running
	case p.running != "":
		return "while " + p.running + " ran"
	case p.last != "":
		return "after " + p.last + ", between specs"
	case p.headLost:
		return unplaced
	}
	return "before the specs"
}

// allocated places an allocation made at jiffies j, and names the spec
// that was running then.
func (p *placer) allocated(j uint64) (where, spec string) {
	for i := len(p.marks) - 1; i >= 0; i-- {
		if p.marks[i].jiffies <= j {
			return "allocated " + p.marks[i].where, p.marks[i].spec
		}
	}
	if p.headLost {
		return "allocated " + unplaced, ""
	}
	return "allocated before the specs", ""
}
