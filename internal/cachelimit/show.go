// SPDX-License-Identifier: GPL-2.0-only

package cachelimit

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Show writes a line per area of the cache at cacheDir: its size, cap,
// entries and what it holds, then the total.
func Show(w io.Writer, cacheDir string, areas []Area) error {
	fmt.Fprintf(w, "cache %s (%s=AREA=SIZE,... sets a cap, 0 for no limit)\n", cacheDir, Env)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "area\tsize\tcap\tentries\tholds")
	var total int64
	for _, a := range areas {
		size, n, err := a.Usage()
		if err != nil {
			return fmt.Errorf("%s: %w", a.Dir, err)
		}
		total += size
		entries := "-"
		if n >= 0 {
			entries = fmt.Sprint(n)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.Name, FormatSize(size), a.Policy(), entries, a.About)
	}
	fmt.Fprintf(tw, "total\t%s\n", FormatSize(total))
	return tw.Flush()
}

// CleanAll removes every area's entries that nobody holds, and says what
// it removed and what it kept; failed names the areas it could not clean
// (each said on notes).
func CleanAll(areas []Area, notes io.Writer) (text string, failed []string) {
	var b strings.Builder
	for _, a := range areas {
		p, err := a.Clean()
		switch {
		case err != nil:
			fmt.Fprintf(notes, "cache: %s: %v\n", a.Name, err)
			failed = append(failed, a.Name)
		case p.Before == 0:
			continue
		case len(p.Removed) > 0:
			fmt.Fprintf(&b, "%s: removed %s (%s)\n", a.Name, strings.Join(p.Removed, " "), p.Freed())
		case Name(a.Name) == Ccache && p.After < p.Before:
			fmt.Fprintf(&b, "%s: cleared (%s)\n", a.Name, p.Freed())
		}
		if len(p.Held) > 0 {
			fmt.Fprintf(&b, "%s: kept %s: in use\n", a.Name, strings.Join(p.Held, " "))
		}
	}
	if b.Len() == 0 {
		b.WriteString("nothing to remove\n")
	}
	return b.String(), failed
}

// Freed says how many bytes went: "1.9G freed, 0B left".
func (p Pruned) Freed() string {
	return fmt.Sprintf("%s freed, %s left", FormatSize(p.Before-p.After), FormatSize(p.After))
}

// Bound brings each area this process used within its cap, once a command
// that fills them has ended, and says through note what it removed and
// what it could not.
func Bound(areas []Area, note func(format string, args ...any)) {
	for _, a := range areas {
		if !a.UsedHere() {
			continue
		}
		p, err := a.Prune()
		if err != nil {
			note("note: pruning the cache's %s: %v\n", a.Name, err)
		}
		if len(p.Removed) > 0 {
			note("note: the cache's %s held %s, over its cap of %s: removed %d least recently used (%s)\n",
				a.Name, FormatSize(p.Before), a.Policy(), len(p.Removed), p.Freed())
		}
		if p.After > a.Cap && len(p.Held) > 0 {
			note("note: the cache's %s holds %s, over its cap of %s: %s in use\n", a.Name, FormatSize(p.After), a.Policy(), strings.Join(p.Held, " "))
		}
	}
}
