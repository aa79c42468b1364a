// SPDX-License-Identifier: GPL-2.0-only

// Package stackmapfmt parses the stackmap exports (stack_map, stack_map_stat,
// stack_map_bin) and the <stack_id N> lines of trace, strictly: every
// departure from the contract's format is an error that names the line or
// byte offset, so a spec can quote it. The guest's specs and the host's
// dumpcheck both read the exports with it, so it imports neither Ginkgo nor
// the harness.
package stackmapfmt

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// MaxDepth is the deepest stack the map stores.
const MaxDepth = 64

// Block is one stack of stack_map.
type Block struct {
	ID, Ref, Depth int
	Frames         []string // symbol text of frames 0..Depth-1
	Line           int      // 1-based line of the header, for messages
}

var (
	headerRE = regexp.MustCompile(`^stack_id (\d+) \[ref (\d+), depth (\d+)\]$`)
)

// frameLine reads a frame line, `  [<index>] <frame>`, by hand: a full
// map's text has tens of thousands of them, read at every checkpoint, and
// a regular expression made that most of a checkpoint's time under
// emulation.
func frameLine(line string) (index, frame string, ok bool) {
	rest, ok := strings.CutPrefix(line, "  [")
	if !ok {
		return "", "", false
	}
	index, frame, ok = strings.Cut(rest, "] ")
	if !ok || index == "" || frame == "" || strings.Trim(index, "0123456789") != "" {
		return "", "", false
	}
	return index, frame, true
}

// ParseText parses stack_map. An empty file is an empty map.
func ParseText(s string) ([]Block, error) {
	if s == "" {
		return nil, nil
	}
	if !strings.HasSuffix(s, "\n") {
		return nil, fmt.Errorf("stack_map: does not end with a newline")
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	var blocks []Block
	for i := 0; i < len(lines); {
		m := headerRE.FindStringSubmatch(lines[i])
		if m == nil {
			return nil, fmt.Errorf("stack_map line %d: %q is not a block header `stack_id <id> [ref <r>, depth <d>]`", i+1, lines[i])
		}
		b := Block{ID: atoi(m[1]), Ref: atoi(m[2]), Depth: atoi(m[3]), Line: i + 1}
		if b.ID < 0 || b.Ref < 1 || b.Depth < 1 || b.Depth > MaxDepth {
			return nil, fmt.Errorf("stack_map line %d: id %s ref %s depth %s out of range (ref >= 1, 1 <= depth <= %d)", i+1, m[1], m[2], m[3], MaxDepth)
		}
		i++
		for f := 0; f < b.Depth; f, i = f+1, i+1 {
			if i >= len(lines) {
				return nil, fmt.Errorf("stack_map block %d (line %d): file ends after %d of %d frames", b.ID, b.Line, f, b.Depth)
			}
			index, frame, ok := frameLine(lines[i])
			if !ok {
				return nil, fmt.Errorf("stack_map line %d: %q is not frame [%d] of block %d (depth %d)", i+1, lines[i], f, b.ID, b.Depth)
			}
			if atoi(index) != f {
				return nil, fmt.Errorf("stack_map line %d: frame index [%s], want [%d] in block %d", i+1, index, f, b.ID)
			}
			b.Frames = append(b.Frames, frame)
		}
		if i >= len(lines) || lines[i] != "" {
			got := "end of file"
			if i < len(lines) {
				got = strconv.Quote(lines[i])
			}
			return nil, fmt.Errorf("stack_map line %d: want a blank line after the %d frames of block %d, got %s", i+1, b.Depth, b.ID, got)
		}
		i++
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// OrderError is a block whose id is lower than the one before it: the
// blocks are not in ascending id order (SM-TEXT-01).
type OrderError struct {
	Line     int // the block's header line
	ID, Prev int // its id, and the id of the block before
}

func (e *OrderError) Error() string {
	return fmt.Sprintf("stack_map line %d: id %d after id %d: blocks not in ascending id order", e.Line, e.ID, e.Prev)
}

// CheckOrder returns an *OrderError for the first block out of order, or nil.
func CheckOrder(blocks []Block) error {
	for i := 1; i < len(blocks); i++ {
		if blocks[i].ID < blocks[i-1].ID {
			return &OrderError{Line: blocks[i].Line, ID: blocks[i].ID, Prev: blocks[i-1].ID}
		}
	}
	return nil
}

// DuplicateError is an id that heads two blocks (SM-TEXT-02).
type DuplicateError struct {
	ID          int
	First, Line int // the header lines of the two blocks
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("stack_map lines %d and %d: id %d heads two blocks", e.First, e.Line, e.ID)
}

// CheckUnique returns a *DuplicateError for the first id that heads two
// blocks, or nil.
func CheckUnique(blocks []Block) error {
	seen := map[int]int{}
	for _, b := range blocks {
		if first, ok := seen[b.ID]; ok {
			return &DuplicateError{ID: b.ID, First: first, Line: b.Line}
		}
		seen[b.ID] = b.Line
	}
	return nil
}

// RefSum adds up the blocks' ref counts: what successes must be
// (SM-STAT-03).
func RefSum(blocks []Block) int64 {
	var n int64
	for _, b := range blocks {
		n += int64(b.Ref)
	}
	return n
}

// IDs returns the set of block ids.
func IDs(blocks []Block) map[int]Block {
	m := make(map[int]Block, len(blocks))
	for _, b := range blocks {
		m[b.ID] = b
	}
	return m
}

// atoi parses digits the regexps already checked; an overflow becomes -1 so
// range checks reject it.
func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}
