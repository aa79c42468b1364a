// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrNotSupported is what a probe's error Is when the kernel lacks what a
// spec needs. Any other error of a probe means it could not tell.
var ErrNotSupported = errors.New("not supported")

// UnsupportedFeatureError says what the kernel lacks; it Is ErrNotSupported.
type UnsupportedFeatureError struct{ Err error }

func (e *UnsupportedFeatureError) Error() string        { return e.Err.Error() }
func (e *UnsupportedFeatureError) Unwrap() error        { return e.Err }
func (e *UnsupportedFeatureError) Is(target error) bool { return target == ErrNotSupported }

// Lacks returns an *UnsupportedFeatureError saying, as fmt.Errorf would,
// what the kernel lacks.
func Lacks(format string, args ...any) error {
	return &UnsupportedFeatureError{fmt.Errorf(format, args...)}
}

// A Need is one thing a spec requires of the kernel, in the spirit of
// ftracetest's "# requires:" line. Probe returns nil when the need is met,
// an error that Is ErrNotSupported when it is not, and any other error
// when tracefs could not be read to tell.
type Need interface {
	Probe(t *TraceFS) error
}

type needFunc func(t *TraceFS) error

func (f needFunc) Probe(t *TraceFS) error { return f(t) }

// Node needs a tracefs file or directory.
func Node(node string) Need {
	return needFunc(func(t *TraceFS) error {
		return lacksIfAbsent(t, node, "no %s in tracefs", node)
	})
}

// Tracer needs a tracer listed in available_tracers.
func Tracer(name string) Need {
	return needFunc(func(t *TraceFS) error {
		list, err := t.Read("available_tracers")
		if err != nil {
			return fmt.Errorf("cannot read available_tracers: %w", err)
		}
		if !slices.Contains(strings.Fields(list), name) {
			return Lacks("tracer %q not in available_tracers", name)
		}
		return nil
	})
}

// Event needs an event, given as "system/name".
func Event(name string) Need {
	return needFunc(func(t *TraceFS) error {
		return lacksIfAbsent(t, "events/"+name+"/enable", "no event %s", name)
	})
}

// Readme needs a phrase in tracefs's README, which lists the features the
// kernel's tracing interface knows.
func Readme(phrase string) Need {
	return needFunc(func(t *TraceFS) error {
		text, err := t.Read("README")
		if err != nil {
			return fmt.Errorf("cannot read README: %w", err)
		}
		if !strings.Contains(text, phrase) {
			return Lacks("README does not mention %q", phrase)
		}
		return nil
	})
}

// lacksIfAbsent is nil when node is there, Lacks(format, args...) when it
// is not, and the lookup's error when it could not tell.
func lacksIfAbsent(t *TraceFS, node, format string, args ...any) error {
	ok, err := t.Has(node)
	switch {
	case err != nil:
		return err
	case !ok:
		return Lacks(format, args...)
	}
	return nil
}

// Probe checks every need. It returns nil when all are met, an error that
// Is ErrNotSupported naming each unmet one, or the first error of a probe
// that could not tell: that one wins, since it showed nothing missing.
func Probe(t *TraceFS, needs ...Need) error {
	var missing []string
	for _, n := range needs {
		err := n.Probe(t)
		switch {
		case err == nil:
		case errors.Is(err, ErrNotSupported):
			missing = append(missing, err.Error())
		default:
			return err
		}
	}
	if len(missing) > 0 {
		return Lacks("%s", strings.Join(missing, "; "))
	}
	return nil
}

// Require ends the spec unless every need is met, as Supported does.
func Require(t *TraceFS, needs ...Need) {
	supported(Probe(t, needs...), 1)
}
