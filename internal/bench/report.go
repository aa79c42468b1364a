// SPDX-License-Identifier: GPL-2.0-only

package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Report is one bench run; it is what the JSON files hold.
type Report struct {
	Time  time.Time `json:"time"`
	Image string    `json:"image"`
	Reps  int       `json:"reps"`
	Host  string    `json:"host"`
	// Lane is the kernels' lane, "" for the plain one: the targets are
	// the plain lane's, and figures are compared within a lane.
	Lane    string   `json:"lane,omitempty"`
	Figures []Figure `json:"figures"`
	Targets []Target `json:"targets"`
}

// Figure is the median of Reps measurements.
type Figure struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"` // "s" or "cells/min"
}

// Target is a limit on a figure.
type Target struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"` // seconds
	Limit float64 `json:"limit"` // seconds
	Ratio float64 `json:"ratio"` // Value over the figure the limit is a multiple of
	Met   bool    `json:"met"`
	// EveryLane: the target holds in the sanitized lane too (its limit
	// set for the lane); the others are the plain lane's alone.
	EveryLane bool `json:"every_lane,omitempty"`
}

// everyLane is t, held in every lane.
func everyLane(t Target) Target {
	t.EveryLane = true
	return t
}

// target holds value to ratio times base.
func target(name string, value, base, ratio float64) Target {
	return Target{Name: name, Value: value, Limit: ratio * base, Ratio: value / base, Met: value <= ratio*base}
}

// limit holds value to max seconds.
func limit(name string, value, max float64) Target {
	return Target{Name: name, Value: value, Limit: max, Ratio: value / max, Met: value <= max}
}

// median is the middle of xs, 0 when there are none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Load reads a report written by Save; a missing file is no report.
func Load(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &r, nil
}

// Save writes r to each path.
func (r *Report) Save(paths ...string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	for _, p := range paths {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// WriteTable prints the figures, with their change since prev when prev
// measured the same image, and the targets. It returns how many targets
// were met and missed.
func (r *Report) WriteTable(w io.Writer, prev *Report) (met, missed int) {
	lane := ""
	if r.Lane != "" {
		lane = ", " + r.Lane
	}
	fmt.Fprintf(w, "bench: IMAGE=%s%s, profile v4, median of %d; %s\n", r.Image, lane, r.Reps, r.Host)
	old := map[string]float64{}
	switch {
	case prev == nil:
		fmt.Fprintln(w, "no previous figures to compare with")
	case prev.Image != r.Image:
		fmt.Fprintf(w, "previous figures (%s) are for IMAGE=%s: not compared\n", prev.Time.Format(time.DateTime), prev.Image)
	case prev.Lane != r.Lane:
		fmt.Fprintf(w, "previous figures (%s) are of another lane: not compared\n", prev.Time.Format(time.DateTime))
	default:
		fmt.Fprintf(w, "compared with %s\n", prev.Time.Format(time.DateTime+" MST"))
		for _, f := range prev.Figures {
			old[f.Name] = f.Value
		}
	}
	width := len("target")
	for _, f := range r.Figures {
		width = max(width, len(f.Name))
	}
	for _, t := range r.Targets {
		width = max(width, len(t.Name))
	}
	fmt.Fprintf(w, "\n%-*s  %14s  %14s  %8s\n", width, "figure", "median", "previous", "change")
	for _, f := range r.Figures {
		line := fmt.Sprintf("%-*s  %14s", width, f.Name, format(f.Value, f.Unit))
		if p, ok := old[f.Name]; ok && p > 0 {
			line += fmt.Sprintf("  %14s  %+7.1f%%", format(p, f.Unit), 100*(f.Value-p)/p)
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "\n%-*s  %14s  %14s  %6s\n", width, "target", "value", "limit", "ratio")
	for _, t := range r.Targets {
		verdict := r.verdict(t)
		switch verdict {
		case "met":
			met++
		case "NOT MET":
			missed++
		}
		fmt.Fprintf(w, "%-*s  %14s  %14s  %5.2fx  %s\n", width, t.Name, format(t.Value, "s"), format(t.Limit, "s"), t.Ratio, verdict)
	}
	return met, missed
}

// verdict is how a target stands: "met", "NOT MET", or not judged in a
// lane whose targets are not its own.
func (r *Report) verdict(t Target) string {
	switch {
	case !r.Judges(t):
		return "not judged: the plain lane's target"
	case t.Met:
		return "met"
	}
	return "NOT MET"
}

// Judges says whether a target holds the report to account: most are
// set for the plain lane, which a sanitized kernel's checkers slow down
// many times over; a few hold in every lane (EveryLane).
func (r *Report) Judges(t Target) bool { return r.Lane == "" || t.EveryLane }

// Unjudged counts the targets that do not hold the report to account.
func (r *Report) Unjudged() int {
	n := 0
	for _, t := range r.Targets {
		if !r.Judges(t) {
			n++
		}
	}
	return n
}

func format(v float64, unit string) string {
	if unit == "s" {
		if v < 1 {
			return fmt.Sprintf("%.3fs", v)
		}
		return fmt.Sprintf("%.2fs", v)
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}
