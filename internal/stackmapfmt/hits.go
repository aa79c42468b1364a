// SPDX-License-Identifier: GPL-2.0-only

package stackmapfmt

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// A Hit is one event of trace with the stack entry recorded for it: an
// id, a full stack, or neither.
type Hit struct {
	CPU   int
	Stamp uint64 // the timestamp: a counter clock's value, or microseconds
	// Key is the event as any buffer that recorded this hit prints it: its
	// pid and its own text, without timestamp, flags or symbol addresses.
	Key   string
	ID    int     // its <stack_id N>, or -1
	Stack []Frame // its full stack; nil when it has none
	Line  int     // 1-based line of the event in trace
}

// A Frame is one " => " line of a full stack: the text, and the address
// when the sym-addr option printed it.
type Frame struct {
	Text    string
	Addr    uint64
	HasAddr bool
}

// withoutAddrs is an event's text as printed without sym-addr and
// sym-offset, which the twin prints its symbols with: it drops what they
// add to a symbol, " <ffff...>" (8 to 16 hex digits) after it and
// "+0x4/0x140" to it. By hand, not by a regular expression: a full map's
// trace has tens of thousands of events, read at every checkpoint.
func withoutAddrs(body string) string {
	if !strings.Contains(body, " <") && !strings.Contains(body, "+0x") {
		return body
	}
	var b strings.Builder
	for i := 0; i < len(body); {
		if n := symDetail(body[i:]); n > 0 {
			i += n
			continue
		}
		b.WriteByte(body[i])
		i++
	}
	return b.String()
}

// symDetail is the length of the sym-addr or sym-offset text s begins
// with, or 0.
func symDetail(s string) int {
	if rest, ok := strings.CutPrefix(s, " <"); ok {
		n := hexRun(rest)
		if n >= 8 && n <= 16 && strings.HasPrefix(rest[n:], ">") {
			return 2 + n + 1
		}
		return 0
	}
	if rest, ok := strings.CutPrefix(s, "+0x"); ok {
		n := hexRun(rest)
		if n == 0 {
			return 0
		}
		if after, ok := strings.CutPrefix(rest[n:], "/0x"); ok {
			if m := hexRun(after); m > 0 {
				return 3 + n + 3 + m
			}
		}
	}
	return 0
}

// hexRun is how many lowercase hex digits s begins with.
func hexRun(s string) int {
	n := 0
	for n < len(s) && (s[n] >= '0' && s[n] <= '9' || s[n] >= 'a' && s[n] <= 'f') {
		n++
	}
	return n
}

// ParseHits reads trace's text into its events, each with the stack entry
// that follows it on its CPU. Stack entries whose event the buffer lost
// are left out.
func ParseHits(text string) []Hit {
	hits := make([]Hit, 0, strings.Count(text, ": ")/2)
	last := map[int]int{} // CPU -> index in hits of its last event
	var stack *Hit        // the hit whose <stack trace> frames follow
	i := -1
	for line := range strings.Lines(text) {
		i++
		line = strings.TrimRight(line, " \r\n")
		if f, ok := strings.CutPrefix(line, " => "); ok {
			if stack != nil {
				stack.Stack = append(stack.Stack, parseFrame(f))
			}
			continue
		}
		stack = nil
		e, ok := cutEntry(line)
		if !ok {
			if strings.HasPrefix(strings.TrimSpace(line), "CPU:") {
				clear(last) // events were lost: a stack may have lost its event
			}
			continue
		}
		cpu, body := atoi(e.cpu), e.body
		at, isEvent := last[cpu]
		switch {
		case strings.HasPrefix(body, "<stack_id "):
			id, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(body, "<stack_id "), ">"))
			if isEvent && err == nil {
				hits[at].ID = id
			}
			delete(last, cpu)
		case body == "<stack trace>":
			if isEvent {
				hits[at].Stack = []Frame{}
				stack = &hits[at]
			}
			delete(last, cpu)
		default:
			hits = append(hits, Hit{CPU: cpu, Stamp: stamp(e.whole, e.frac), Key: e.pid + " " + withoutAddrs(body), ID: -1, Line: i + 1})
			last[cpu] = len(hits) - 1
			// hits may move as it grows: stack points into it only until
			// the next line, which is no event.
		}
	}
	return hits
}

// stamp is a timestamp as one number: microseconds, or a counter's value.
func stamp(whole, frac string) uint64 {
	w, _ := strconv.ParseUint(whole, 10, 64)
	if frac == "" {
		return w
	}
	f, _ := strconv.ParseUint((frac + "000000")[:6], 10, 64)
	return w*1_000_000 + f
}

// parseFrame reads a frame's text and the address sym-addr printed after
// it, " <ffff...>".
func parseFrame(text string) Frame {
	f := Frame{Text: text}
	i := strings.LastIndex(text, " <")
	if i < 0 || !strings.HasSuffix(text, ">") {
		return f
	}
	hex := text[i+2 : len(text)-1]
	addr, err := strconv.ParseUint(hex, 16, 64)
	if err != nil || len(hex) < 8 || strings.ToLower(hex) != hex {
		return f
	}
	return Frame{Text: text[:i], Addr: addr, HasAddr: true}
}

// A HitPair is one hit as two buffers recorded it: the one under test and
// its twin, which recorded the same events with the full stack.
type HitPair struct{ Top, Twin Hit }

// PairHits pairs the hits of two buffers that recorded the same events
// with a clock they share (the counter clock, whose values are one global
// sequence). Each hit of a tracepoint or function reaches both buffers
// one right after the other on its CPU, in an order that is the same for
// the whole recording: which one first is found from the data, as the
// order that puts more pairs side by side. Within that order, a hit pairs
// with the nearest unpaired hit of the same key before it (a hit nested
// between the two, an interrupt's, pairs first). Hits that only one
// buffer recorded (it was on a little longer, or lost events) are left
// out.
func PairHits(top, twin []Hit) []HitPair {
	best, bestNext := []HitPair(nil), -1
	for _, topFirst := range []bool{true, false} {
		pairs, next := pairInOrder(top, twin, topFirst)
		if next > bestNext || (next == bestNext && len(pairs) > len(best)) {
			best, bestNext = pairs, next
		}
	}
	return best
}

// side is a hit of the merged sequence: which buffer, and its index there.
type side struct {
	top bool
	i   int
}

// pairInOrder pairs assuming one buffer's record of a hit comes first, and
// says how many pairs were next to each other in the merged sequence.
func pairInOrder(top, twin []Hit, topFirst bool) (pairs []HitPair, adjacent int) {
	byCPU := map[int][]side{}
	for i, h := range top {
		byCPU[h.CPU] = append(byCPU[h.CPU], side{true, i})
	}
	for i, h := range twin {
		byCPU[h.CPU] = append(byCPU[h.CPU], side{false, i})
	}
	hit := func(s side) Hit {
		if s.top {
			return top[s.i]
		}
		return twin[s.i]
	}
	for _, cpu := range slices.Sorted(maps.Keys(byCPU)) {
		seq := byCPU[cpu]
		slices.SortStableFunc(seq, func(a, b side) int { return cmp.Compare(hit(a).Stamp, hit(b).Stamp) })
		pending := map[string][]int{} // key -> positions in seq of first records not yet paired
		for pos, s := range seq {
			h := hit(s)
			if s.top == topFirst {
				pending[h.Key] = append(pending[h.Key], pos)
				continue
			}
			waiting := pending[h.Key]
			if len(waiting) == 0 {
				continue
			}
			first := waiting[len(waiting)-1]
			pending[h.Key] = waiting[:len(waiting)-1]
			if first == pos-1 {
				adjacent++
			}
			p := HitPair{Top: hit(seq[first]), Twin: h}
			if !topFirst {
				p = HitPair{Top: h, Twin: hit(seq[first])}
			}
			pairs = append(pairs, p)
		}
	}
	return pairs, adjacent
}

// StackOf says how the record of a stack_map_bin differs from the full
// stack the twin recorded for the same hit, or nil when it is that stack:
// the same addresses, innermost first, an ftrace trampoline frame
// standing for the trampoline marker.
func StackOf(r Record, stack []Frame) error {
	if len(r.Addrs) != len(stack) {
		return fmt.Errorf("block %d has %d frames, the event's stack %d", r.ID, len(r.Addrs), len(stack))
	}
	for i, f := range stack {
		switch {
		case f.Text == "[FTRACE TRAMPOLINE]":
			if r.Addrs[i] != TrampolineMarker {
				return fmt.Errorf("frame [%d]: block %d has %#x, the event's stack an ftrace trampoline", i, r.ID, r.Addrs[i])
			}
		case !f.HasAddr:
			return fmt.Errorf("frame [%d] of the event's stack, %q, shows no address to compare", i, f.Text)
		case f.Addr != r.Addrs[i]:
			return fmt.Errorf("frame [%d]: block %d has %#x, the event's stack %#x (%s)", i, r.ID, r.Addrs[i], f.Addr, f.Text)
		}
	}
	return nil
}

// BinError is an id whose block's text is its event's stack while
// stack_map_bin's record says otherwise: the binary export disagrees with
// the text (SM-BIN-03's), the id names the right stack.
type BinError struct{ Err error }

func (e *BinError) Error() string { return e.Err.Error() }

// CheckIdentity holds every id of the buffer under test that has a twin
// to the stack the twin recorded for the same hit: the record of
// stack_map_bin with that id must be that stack, address for address. A
// record that differs while the block's text in stack_map is the twin's
// stack (sameText) is the binary export's fault: a *BinError, and the id
// counts as judged. A stack deeper than the map's limit is held by its
// first MaxDepth frames, what a map that cuts it would store (whether it
// may is SM-DEPTH-01's question); an id naming no record is SM-TRACE-01.1's.
// It returns how many ids were judged and the first that names another
// stack, with where that stack is instead, else the first *BinError.
func CheckIdentity(pairs []HitPair, bin Bin, blocks []Block) (judged int, err error) {
	records, texts := map[int]Record{}, IDs(blocks)
	for _, r := range bin.Records {
		records[int(r.ID)] = r
	}
	var binErr error
	for _, p := range pairs {
		r, ok := records[p.Top.ID]
		if p.Top.ID < 0 || p.Twin.Stack == nil || !ok {
			continue
		}
		stack := p.Twin.Stack[:min(len(p.Twin.Stack), MaxDepth)]
		judged++
		e := StackOf(r, stack)
		switch {
		case e == nil:
		case sameText(texts[p.Top.ID], stack):
			if binErr == nil {
				binErr = &BinError{fmt.Errorf("trace line %d has <stack_id %d>, whose block in stack_map is its event's stack, but stack_map_bin's record: %v", p.Top.Line, p.Top.ID, e)}
			}
		case err == nil:
			err = fmt.Errorf("trace line %d, %q on CPU %d, has <stack_id %d>, but %v%s", p.Top.Line, p.Top.Key, p.Top.CPU, p.Top.ID, e, holder(bin, stack))
		}
	}
	if err == nil {
		err = binErr
	}
	return judged, err
}

// sameText says whether a block of stack_map prints stack: frame for
// frame the same symbol, and the same offset where the block prints one.
func sameText(b Block, stack []Frame) bool {
	if len(b.Frames) != len(stack) {
		return false
	}
	for i, f := range stack {
		text, _, _ := strings.Cut(b.Frames[i], " [") // a module name
		if text != f.Text && (strings.Contains(text, "+") || text != FrameName(f.Text)) {
			return false
		}
	}
	return true
}

// FrameName is the symbol a frame's text names: "vfs_read" of
// "vfs_read+0x4/0x140 [mod]".
func FrameName(text string) string {
	name, _, _ := strings.Cut(text, "+")
	name, _, _ = strings.Cut(name, " ")
	return name
}

// callReach is how far into a stack, from its innermost end, the frame
// of a traced function lies: after the tracer's own (the trampoline, the
// list function and ftrace_call, as arches print them).
const callReach = 4

// callOf reads a function tracer's event, "func <-caller", from a hit's
// key; ok is false for any other event.
func callOf(key string) (fn, caller string, ok bool) {
	_, body, _ := strings.Cut(key, " ")
	fn, caller, ok = strings.Cut(body, " <-")
	if !ok || fn == "" || caller == "" || strings.ContainsAny(fn+caller, " :=") {
		return "", "", false
	}
	return FrameName(fn), FrameName(caller), true
}

// callIn says whether names hold fn right before caller, fn among the
// first callReach.
func callIn(names []string, fn, caller string) bool {
	for i := 0; i < min(callReach, len(names)-1); i++ {
		if names[i] == fn && names[i+1] == caller {
			return true
		}
	}
	return false
}

// CheckCalls holds each id of a function tracer's event to what the
// event itself says: "func <-caller" names the traced function and its
// caller, so the block of its id has, near its innermost end, a frame of
// func right before one of caller. This judges the ids of every traced
// function, where the twin records only a few; it is applied only when
// every full stack of such an event the kernel recorded, in either buffer
// (the twin's, and the top level's drops), shows the same, so that it
// holds on this kernel as its own stacks have it.
func CheckCalls(top, twin []Hit, blocks []Block) (judged int, err error) {
	seen := 0
	for _, h := range slices.Concat(twin, top) {
		if fn, caller, ok := callOf(h.Key); ok && h.Stack != nil {
			names := make([]string, len(h.Stack))
			for i, f := range h.Stack {
				names[i] = FrameName(f.Text)
			}
			if !callIn(names, fn, caller) {
				return 0, nil // not how this kernel's stacks look: no rule to judge by
			}
			seen++
		}
	}
	if seen == 0 {
		return 0, nil
	}
	byID := IDs(blocks)
	for _, h := range top {
		fn, caller, ok := callOf(h.Key)
		b, known := byID[h.ID]
		if !ok || h.ID < 0 || !known {
			continue
		}
		names := make([]string, len(b.Frames))
		for i, f := range b.Frames {
			names[i] = FrameName(f)
		}
		judged++
		if !callIn(names, fn, caller) && err == nil {
			err = fmt.Errorf("trace line %d, %q on CPU %d, has <stack_id %d>, whose block does not have %s called from %s among its first %d frames: %v",
				h.Line, h.Key, h.CPU, h.ID, fn, caller, callReach+1, names[:min(len(names), callReach+1)])
		}
	}
	return judged, err
}

// holder says which record holds a stack, if one does.
func holder(bin Bin, stack []Frame) string {
	for _, r := range bin.Records {
		if StackOf(r, stack) == nil {
			return fmt.Sprintf("; the event's stack is block %d", r.ID)
		}
	}
	return "; no block holds the event's stack"
}
