// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"bufio"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Kallsyms maps kernel addresses to the names defined there, sorted by address.
type Kallsyms struct {
	addrs []uint64
	names map[uint64][]string
}

// LoadKallsyms reads /proc/kallsyms; nil when it hides the addresses.
func LoadKallsyms() *Kallsyms {
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		return nil
	}
	defer f.Close()
	k := &Kallsyms{names: map[uint64][]string{}}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 {
			continue
		}
		a, err := strconv.ParseUint(fields[0], 16, 64)
		if err != nil || a == 0 {
			continue
		}
		if _, ok := k.names[a]; !ok {
			k.addrs = append(k.addrs, a)
		}
		k.names[a] = append(k.names[a], fields[2])
	}
	if len(k.addrs) == 0 {
		return nil
	}
	sort.Slice(k.addrs, func(i, j int) bool { return k.addrs[i] < k.addrs[j] })
	return k
}

// Lookup returns the start of the symbol containing addr and its names.
func (k *Kallsyms) Lookup(addr uint64) (uint64, []string) {
	i := sort.Search(len(k.addrs), func(i int) bool { return k.addrs[i] > addr })
	if i == 0 {
		return 0, nil
	}
	base := k.addrs[i-1]
	return base, k.names[base]
}
