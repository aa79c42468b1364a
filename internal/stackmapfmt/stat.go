// SPDX-License-Identifier: GPL-2.0-only

package stackmapfmt

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// Stat is stack_map_stat.
type Stat struct {
	Entries, Capacity int64 // "entries: A / B"
	TableSize         int64
	Successes, Drops  int64
	SuccessRate       int64 // percent; meaningful when HasSuccessRate
	HasSuccessRate    bool
}

// ParseStat parses stack_map_stat strictly: exactly the contract's keys,
// each once, values separated by whitespace.
func ParseStat(s string) (Stat, error) {
	var st Stat
	seen := map[string]bool{}
	if !strings.HasSuffix(s, "\n") {
		return st, fmt.Errorf("stack_map_stat: does not end with a newline")
	}
	for n, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			return st, fmt.Errorf("stack_map_stat line %d: blank line", n+1)
		}
		key := f[0]
		if seen[key] {
			return st, fmt.Errorf("stack_map_stat line %d: key %s repeated", n+1, key)
		}
		seen[key] = true
		var err error
		switch {
		case key == "entries:" && len(f) == 4 && f[2] == "/":
			st.Entries, err = num(f[1])
			if err == nil {
				st.Capacity, err = num(f[3])
			}
		case key == "table_size:" && len(f) == 2:
			st.TableSize, err = num(f[1])
		case key == "successes:" && len(f) == 2:
			st.Successes, err = num(f[1])
		case key == "drops:" && len(f) == 2:
			st.Drops, err = num(f[1])
		case key == "success_rate:" && len(f) == 2 && strings.HasSuffix(f[1], "%"):
			st.SuccessRate, err = num(strings.TrimSuffix(f[1], "%"))
			st.HasSuccessRate = true
		default:
			return st, fmt.Errorf("stack_map_stat line %d: %q is not one of `entries: A / B`, `table_size: T`, `successes: S`, `drops: D`, `success_rate: P%%`", n+1, line)
		}
		if err != nil {
			return st, fmt.Errorf("stack_map_stat line %d: %q: %v", n+1, line, err)
		}
	}
	for _, k := range []string{"entries:", "table_size:", "successes:", "drops:"} {
		if !seen[k] {
			return st, fmt.Errorf("stack_map_stat: no %s line", strings.TrimSuffix(k, ":"))
		}
	}
	return st, nil
}

// RateError is a success_rate line that disagrees with the counters
// (SM-STAT-01).
type RateError struct {
	Stat Stat
	why  string
}

func (e *RateError) Error() string { return e.why }

// CheckRateShown checks that the success_rate line is there only when
// S+D > 0 (SM-STAT-01.2). It returns a *RateError, or nil.
func (st Stat) CheckRateShown() error {
	switch total := st.Successes + st.Drops; {
	case total == 0 && st.HasSuccessRate:
		return &RateError{st, fmt.Sprintf("success_rate: %d%% present with successes 0 and drops 0", st.SuccessRate)}
	case total > 0 && !st.HasSuccessRate:
		return &RateError{st, fmt.Sprintf("no success_rate line with successes %d and drops %d", st.Successes, st.Drops)}
	}
	return nil
}

// CheckRateValue checks a success_rate line against the counters:
// floor(100*S/(S+D)) (SM-STAT-01.3). It returns a *RateError, or nil.
func (st Stat) CheckRateValue() error {
	total := st.Successes + st.Drops
	if want := 100 * st.Successes / max(total, 1); st.HasSuccessRate && total > 0 && st.SuccessRate != want {
		return &RateError{st, fmt.Sprintf("success_rate: %d%%, want %d%% for successes %d and drops %d", st.SuccessRate, want, st.Successes, st.Drops)}
	}
	return nil
}

// CheckRate is CheckRateShown, then CheckRateValue.
func (st Stat) CheckRate() error { return cmp.Or(st.CheckRateShown(), st.CheckRateValue()) }

// RateSeparates says whether the counters give a success rate whose
// fraction of a percent is at least one half: there floor(100*S/(S+D))
// differs from the nearest integer, so a kernel that rounds shows it.
func (st Stat) RateSeparates() bool {
	total := st.Successes + st.Drops
	return total > 0 && (100*st.Successes)%total*2 >= total
}

// CapacityError is a stack_map_stat whose sizes are out of the contract
// (SM-STAT-02).
type CapacityError struct {
	Stat Stat
	why  string
}

func (e *CapacityError) Error() string { return e.why }

// CheckBounds checks that B is a power of two in [2^10, 2^18]
// (SM-STAT-02.1). It returns a *CapacityError, or nil.
func (st Stat) CheckBounds() error {
	if b := st.Capacity; b < 1<<10 || b > 1<<18 || b&(b-1) != 0 {
		return &CapacityError{st, fmt.Sprintf("capacity %d is not a power of two between 1024 and 262144", b)}
	}
	return nil
}

// CheckTableSize checks T = 2B (SM-STAT-02.2). It returns a
// *CapacityError, or nil.
func (st Stat) CheckTableSize() error {
	if st.TableSize != 2*st.Capacity {
		return &CapacityError{st, fmt.Sprintf("table_size %d, want 2 x %d = %d", st.TableSize, st.Capacity, 2*st.Capacity)}
	}
	return nil
}

// CheckEntries checks A <= B (SM-STAT-02.3). It returns a
// *CapacityError, or nil.
func (st Stat) CheckEntries() error {
	if st.Entries > st.Capacity {
		return &CapacityError{st, fmt.Sprintf("entries %d exceed the capacity %d", st.Entries, st.Capacity)}
	}
	return nil
}

// CheckCapacity is CheckBounds, CheckTableSize and CheckEntries, the
// first that fails.
func (st Stat) CheckCapacity() error {
	return cmp.Or(st.CheckBounds(), st.CheckTableSize(), st.CheckEntries())
}

func num(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || (len(s) > 1 && s[0] == '0') || s[0] == '+' {
		return 0, fmt.Errorf("%q is not a non-negative decimal", s)
	}
	return n, nil
}
