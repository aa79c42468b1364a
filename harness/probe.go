// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"fmt"
	"slices"
	"strings"
)

// A Need is one thing a spec requires of the kernel, in the spirit of
// ftracetest's "# requires:" line. Missing returns "" when the need is met,
// otherwise the reason.
type Need interface {
	Missing(t *TraceFS) string
}

type needFunc func(t *TraceFS) string

func (f needFunc) Missing(t *TraceFS) string { return f(t) }

// Node needs a tracefs file or directory.
func Node(node string) Need {
	return needFunc(func(t *TraceFS) string {
		if t.Exists(node) {
			return ""
		}
		return fmt.Sprintf("no %s in tracefs", node)
	})
}

// Tracer needs a tracer listed in available_tracers.
func Tracer(name string) Need {
	return needFunc(func(t *TraceFS) string {
		list, err := t.Read("available_tracers")
		if err != nil {
			return fmt.Sprintf("cannot read available_tracers: %v", err)
		}
		if slices.Contains(strings.Fields(list), name) {
			return ""
		}
		return fmt.Sprintf("tracer %q not in available_tracers", name)
	})
}

// Event needs an event, given as "system/name".
func Event(name string) Need {
	return needFunc(func(t *TraceFS) string {
		if t.Exists("events/" + name + "/enable") {
			return ""
		}
		return fmt.Sprintf("no event %s", name)
	})
}

// Readme needs a phrase in tracefs's README, which lists the features the
// kernel's tracing interface knows.
func Readme(phrase string) Need {
	return needFunc(func(t *TraceFS) string {
		text, err := t.Read("README")
		if err != nil {
			return fmt.Sprintf("cannot read README: %v", err)
		}
		if strings.Contains(text, phrase) {
			return ""
		}
		return fmt.Sprintf("README does not mention %q", phrase)
	})
}

// MissingOf returns the reasons of every unmet need, joined, or "".
func MissingOf(t *TraceFS, needs ...Need) string {
	var why []string
	for _, n := range needs {
		if m := n.Missing(t); m != "" {
			why = append(why, m)
		}
	}
	return strings.Join(why, "; ")
}

// Require ends the spec as UNSUPPORTED when any need is unmet.
func Require(t *TraceFS, needs ...Need) {
	if why := MissingOf(t, needs...); why != "" {
		Unsupported("%s", why)
	}
}
