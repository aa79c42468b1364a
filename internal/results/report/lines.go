// SPDX-License-Identifier: GPL-2.0-only

package report

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/ftrace-stackmap/conformance/internal/textlines"
)

// Width is the widest line the reports meant for mail make (textlines.Width).
const Width = textlines.Width

// maxOneLine caps a reason squeezed onto one line.
const maxOneLine = 240

// ansiEscape is a terminal control sequence, such as a colour.
var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

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

// squeeze puts a failure message (Gomega's span several lines) on one line
// short enough for a terminal or a mail.
func squeeze(s string) string {
	return Clip(strings.Join(strings.Fields(s), " "), maxOneLine)
}

// Clip cuts s to n columns, marking the cut with "...".
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
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

// Wrap breaks text at spaces into lines of at most Width columns
// (textlines.Wrap).
func Wrap(head, indent, text string) string { return textlines.Wrap(head, indent, text) }
