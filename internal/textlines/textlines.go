// SPDX-License-Identifier: GPL-2.0-only

// Package textlines cuts out the lines of a program's output that a
// message quotes (its first line, or its last few), and wraps a report's
// text into lines a mail keeps.
package textlines

import "strings"

// First is the first line of s, blank lines and spaces around it left out.
func First(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(l)
}

// Last is the last n lines of s that are not blank, each without the
// spaces and carriage return at its end.
func Last(s string, n int) []string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimRight(l, " \t\r"); strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return lines[max(0, len(lines)-n):]
}

// Tail is Last as one text: the end of an output, to quote in an error.
func Tail(s string, n int) string { return strings.Join(Last(s, n), "\n") }

// Rest is the lines of s after its first, blank ones left out: what a
// message of several lines says below its headline.
func Rest(s string) []string {
	_, rest, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if rest == "" {
		return nil
	}
	return Last(rest, strings.Count(rest, "\n")+1)
}

// Width is the widest line the reports meant for mail make (the evidence,
// the walk's table and blocks, the reply to a series, claims.txt), unless
// a word is wider: a reply quotes them with "> ", and 75 columns quoted
// stay within the 78 that mail readers and the kernel's lists keep to
// (RFC 5322).
const Width = 75

// Wrap breaks text at spaces into lines of at most Width columns, the first
// after head, the others after indent. A word wider than a line stays whole.
func Wrap(head, indent, text string) string {
	var b strings.Builder
	line, empty := head, true
	for _, w := range strings.Fields(text) {
		if !empty && len(line)+1+len(w) > Width {
			b.WriteString(line + "\n")
			line, empty = indent, true
		}
		if !empty {
			line += " "
		}
		line, empty = line+w, false
	}
	b.WriteString(strings.TrimRight(line, " ") + "\n")
	return b.String()
}
