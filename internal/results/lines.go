// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"regexp"
	"strings"
	"unicode"
)

// ansiEscape is a terminal control sequence, such as a colour.
var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// OneLine is a verdict as verdict.txt keeps it, for scripts: its first line,
// without colour escapes or other control characters.
func OneLine(verdict string) string {
	first, _, _ := strings.Cut(verdict, "\n")
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, ansiEscape.ReplaceAllString(first, ""))
}

// clean keeps one line printable: control characters become spaces, and
// the end is trimmed (indentation is kept, it shapes Gomega's values).
func clean(s string) string {
	return strings.TrimRightFunc(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, ansiEscape.ReplaceAllString(s, "")), unicode.IsSpace)
}

// Plain is text without terminal escapes (Ginkgo colours its errors) and
// without control characters other than newlines and tabs: what files and
// pipes get.
func Plain(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return -1
		}
		return r
	}, ansiEscape.ReplaceAllString(s, ""))
}

// Width is the widest line evidence.txt makes, unless a word is wider.
const Width = 76

// wrap breaks text at spaces into lines of at most Width columns, the first
// after head, the others after indent. A word wider than a line stays whole.
func wrap(head, indent, text string) string {
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
