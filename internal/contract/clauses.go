// SPDX-License-Identifier: GPL-2.0-only

package contract

import (
	"regexp"
	"strings"
)

// A clause is one numbered sentence of a requirement in CONTRACT.md,
// "SM-STAT-03.4". A failure that breaks one starts its message with the
// clause in brackets: the suite writes it (harness.Clause), the reports
// read it back here, and nowhere else.

var clauseMarkRE = regexp.MustCompile(`^\[([A-Z]+(?:-[A-Z]+)*-\d\d\.\d+)\]`)

// ClauseMark is a message about clause id: "[SM-STAT-03.4] text", or
// "[SM-STAT-03.4]" when text is empty.
func ClauseMark(id, text string) string {
	if text == "" {
		return "[" + id + "]"
	}
	return "[" + id + "] " + text
}

// ClauseOf is the clause a message names at its start and the words after
// it; "" and the message when it names none.
func ClauseOf(msg string) (id, rest string) {
	m := clauseMarkRE.FindStringSubmatch(msg)
	if m == nil || RequirementOf(m[1]) == "" {
		return "", msg
	}
	return m[1], strings.TrimLeft(msg[len(m[0]):], " ")
}

// RequirementOf is the requirement of clause id ("SM-STAT-03" of
// "SM-STAT-03.4"), or "" when id is no clause of a known requirement.
func RequirementOf(id string) string {
	req, n, ok := strings.Cut(id, ".")
	if _, known := Requirements[req]; !ok || !known || n == "" || strings.Trim(n, "0123456789") != "" {
		return ""
	}
	return req
}
