package stackmap

import "strings"

func splitLines(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") }

func cutPrefix(line, prefix string) (string, bool) {
	return strings.CutPrefix(strings.TrimSpace(line), prefix)
}

func startsWith(s, prefix string) bool { return strings.HasPrefix(strings.TrimSpace(s), prefix) }

// hasLine reports whether text has a line equal to want: whole lines, so
// "nostackmap" does not count as "stackmap".
func hasLine(text, want string) bool {
	for _, l := range splitLines(text) {
		if strings.TrimSpace(l) == want {
			return true
		}
	}
	return false
}
