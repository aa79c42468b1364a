// SPDX-License-Identifier: GPL-2.0-only

package harness

import "strings"

// Lines splits a tracefs file's text into its lines, without the last
// newline's empty one.
func Lines(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") }

// HasLine reports whether text has a line equal to want, spaces around it
// aside: whole lines, so "nostackmap" does not count as "stackmap".
func HasLine(text, want string) bool {
	for _, l := range Lines(text) {
		if strings.TrimSpace(l) == want {
			return true
		}
	}
	return false
}

// FieldDeclared reports whether an event's format file lists a field
// declared as decl (e.g. "int stack_id").
func FieldDeclared(format, decl string) bool {
	for _, line := range Lines(format) {
		if field, ok := strings.CutPrefix(strings.TrimSpace(line), "field:"); ok && strings.HasPrefix(strings.TrimSpace(field), decl+";") {
			return true
		}
	}
	return false
}
