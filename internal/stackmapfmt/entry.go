// SPDX-License-Identifier: GPL-2.0-only

package stackmapfmt

import "strings"

// An entry is a ring-buffer entry's line of trace, "comm-pid [cpu] flags
// ts: body", cut into its fields; ts is seconds.microseconds, or a plain
// count under the counter clock. It is cut by hand, not by a regular
// expression: a full map's trace is megabytes, and the guest reads it
// under emulation at every checkpoint.
type entry struct {
	pid, cpu, flags string
	whole, frac     string // the timestamp's parts; frac "" for a count
	body            string
}

// cutEntry cuts line into an entry, or says it is none.
func cutEntry(line string) (e entry, ok bool) {
	for from := 0; ; {
		open := strings.Index(line[from:], "[")
		if open < 0 {
			return entry{}, false
		}
		open += from
		from = open + 1
		if e, ok := cutAt(line, open); ok {
			return e, true
		}
	}
}

// cutAt tries line as an entry whose CPU field opens at line[open].
func cutAt(line string, open int) (entry, bool) {
	var e entry
	// Before "[": blanks, then "-pid" ending "comm-pid", with a comm.
	head := strings.TrimRight(line[:open], " \t")
	if len(head) == len(line[:open]) {
		return e, false
	}
	dash := strings.LastIndexByte(head, '-')
	if dash < 1 || strings.TrimSpace(head[:dash]) == "" || !digits(head[dash+1:]) {
		return e, false
	}
	e.pid = head[dash+1:]
	rest := line[open+1:]
	end := strings.IndexByte(rest, ']')
	if end < 0 || !digits(rest[:end]) {
		return e, false
	}
	e.cpu, rest = rest[:end], rest[end+1:]
	// Blanks, flags, blanks, the timestamp, ": ".
	if e.flags, rest = field(rest); e.flags == "" {
		return e, false
	}
	ts, rest := field(rest)
	ts, colon := strings.CutSuffix(ts, ":")
	if !colon {
		return e, false
	}
	e.whole, e.frac, _ = strings.Cut(ts, ".")
	if !digits(e.whole) || (strings.Contains(ts, ".") && !digits(e.frac)) {
		return e, false
	}
	if rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
		return e, false
	}
	e.body = rest[1:]
	return e, true
}

// field skips blanks and returns the word after them and what follows it;
// "" when there are no blanks first or no word.
func field(s string) (word, rest string) {
	t := strings.TrimLeft(s, " \t")
	if len(t) == len(s) {
		return "", s
	}
	end := strings.IndexAny(t, " \t")
	if end < 0 {
		return t, ""
	}
	return t[:end], t[end:]
}

// digits says whether s is one or more decimal digits.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
