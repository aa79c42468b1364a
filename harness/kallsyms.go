// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Kallsyms maps kernel addresses to the names defined there.
type Kallsyms struct {
	syms []symbol // by address; names at one address in the file's order
}

type symbol struct {
	addr uint64
	name string
}

// LoadKallsyms reads /proc/kallsyms; nil when it hides the addresses.
func LoadKallsyms() *Kallsyms {
	data, err := os.ReadFile("/proc/kallsyms")
	if err != nil {
		return nil
	}
	return parseKallsyms(string(data))
}

// ParseKallsyms is LoadKallsyms for a listing already read.
func ParseKallsyms(text string) *Kallsyms { return parseKallsyms(text) }

// parseKallsyms reads "address type name[\t[module]]" lines. The names are
// cut out of the text, not split into fields: under emulation, splitting
// a kernel's 40,000 lines takes a fifth of a second.
func parseKallsyms(text string) *Kallsyms {
	k := &Kallsyms{}
	for line := range strings.Lines(text) {
		addr, rest, ok := strings.Cut(line, " ")
		_, rest, ok2 := strings.Cut(rest, " ") // the symbol's type
		name, _, _ := strings.Cut(strings.TrimSuffix(rest, "\n"), "\t")
		if !ok || !ok2 || name == "" {
			continue
		}
		a, err := strconv.ParseUint(addr, 16, 64)
		if err != nil || a == 0 {
			continue
		}
		k.syms = append(k.syms, symbol{a, name})
	}
	if len(k.syms) == 0 {
		return nil
	}
	slices.SortStableFunc(k.syms, func(a, b symbol) int {
		switch {
		case a.addr < b.addr:
			return -1
		case a.addr > b.addr:
			return 1
		}
		return 0
	})
	return k
}

// Lookup returns the start of the symbol containing addr and its names.
func (k *Kallsyms) Lookup(addr uint64) (uint64, []string) {
	i := sort.Search(len(k.syms), func(i int) bool { return k.syms[i].addr > addr })
	if i == 0 {
		return 0, nil
	}
	base := k.syms[i-1].addr
	first := i - 1
	for first > 0 && k.syms[first-1].addr == base {
		first--
	}
	var names []string
	for _, s := range k.syms[first:i] {
		names = append(names, s.name)
	}
	return base, names
}
