// SPDX-License-Identifier: GPL-2.0-only

// Package labels is a Ginkgo label filter (LABELS=, -labels, a boot's
// own), parsed once where it is read and carried whole: every question
// about it is asked of the parsed filter, never of its text.
package labels

import (
	"fmt"

	"github.com/onsi/ginkgo/v2/types"
)

// Filter is a label filter. The zero Filter is none given: it selects
// every spec and asks for no opt-in label.
type Filter struct {
	text  string
	match types.LabelFilter
	both  [2]*Filter // set by And: the filter is both of these
}

// Parse reads a filter as Ginkgo does; "" is the zero Filter.
func Parse(text string) (Filter, error) {
	if text == "" {
		return Filter{}, nil
	}
	match, err := types.ParseLabelFilter(text)
	if err != nil {
		return Filter{}, fmt.Errorf("label filter %q: %w", text, err)
	}
	return Filter{text: text, match: match}, nil
}

// MustParse is Parse of a filter written in the code.
func MustParse(text string) Filter {
	f, err := Parse(text)
	if err != nil {
		panic(err)
	}
	return f
}

// String is the filter as Ginkgo reads it: what the guest's suite is given.
func (f Filter) String() string { return f.text }

// IsZero says no filter was given.
func (f Filter) IsZero() bool { return f.text == "" }

// Selects says whether a spec with these labels is selected.
func (f Filter) Selects(labels []string) bool {
	switch {
	case f.both[0] != nil:
		return f.both[0].Selects(labels) && f.both[1].Selects(labels)
	case f.match == nil:
		return true
	}
	return f.match(labels)
}

// AsksFor says whether the filter asks for specs labelled label: it
// selects that label and would not select a spec without labels ("stress"
// and "stress || SM-BIN-01" do; "!stress", "!(stress)" and none do not).
func (f Filter) AsksFor(label string) bool {
	return !f.IsZero() && f.Selects([]string{label}) && !f.Selects(nil)
}

// And is the filter selecting what both f and g select: a boot's filter
// narrowed by the user's. Its text joins both for the guest's Ginkgo.
func (f Filter) And(g Filter) Filter {
	switch {
	case f.IsZero():
		return g
	case g.IsZero():
		return f
	}
	return Filter{text: "(" + f.text + ") && (" + g.text + ")", both: [2]*Filter{&f, &g}}
}

// MarshalText keeps the filter as its text in JSON (a LAVA job's
// description, a run's request).
func (f Filter) MarshalText() ([]byte, error) { return []byte(f.text), nil }

// UnmarshalText parses the text back.
func (f *Filter) UnmarshalText(b []byte) error {
	g, err := Parse(string(b))
	*f = g
	return err
}

// Set makes *Filter a flag.Value: a command's flag parses the filter as
// it is read: a filter Ginkgo cannot read is refused at the door.
func (f *Filter) Set(text string) error { return f.UnmarshalText([]byte(text)) }
