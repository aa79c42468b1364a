// SPDX-License-Identifier: GPL-2.0-only

package report

import "fmt"

// ExitCodes is an exit status convention (-exit-codes=, -smct.exit-codes=).
// The zero value is smct's.
type ExitCodes string

// The conventions.
const (
	ExitCodesSmct      ExitCodes = "smct"      // 0 no spec failed, 1 a spec failed, 2 no verdict
	ExitCodesKselftest ExitCodes = "kselftest" // kselftest.h's, for kselftest-style runners
)

// ExitCodesUsage describes the conventions for a flag's help.
const ExitCodesUsage = "exit status convention: smct (0 ok, 1 failed, 2 no verdict) or kselftest (0 pass, 1 fail, 4 all skipped, 5 no verdict)"

func (e ExitCodes) String() string {
	if e == "" {
		return string(ExitCodesSmct)
	}
	return string(e)
}

// Set makes ExitCodes a flag: a convention it does not know is refused
// as the flag is parsed. "" (EXIT_CODES= left empty by make) is smct's.
func (e *ExitCodes) Set(v string) error {
	switch ExitCodes(v) {
	case "", ExitCodesSmct:
		*e = ExitCodesSmct
	case ExitCodesKselftest:
		*e = ExitCodesKselftest
	default:
		return fmt.Errorf("want smct or kselftest")
	}
	return nil
}

// NoVerdictStatus is the convention's status for a run without a verdict.
const NoVerdictStatus = 2

// KselftestNoVerdict is the status of a run without a verdict under
// -exit-codes=kselftest. kselftest.h has no code for it and gives 2 to
// XFAIL, 3 to XPASS and 4 to SKIP; its runner reports any status other
// than 0 and 4 as "not ok", so 5 reads as a failure, not as one of those.
const KselftestNoVerdict = 5

// Status turns an smct status (0, 1, 2) of a run whose specs s summarizes
// into the convention's.
func (e ExitCodes) Status(smct int, s Summary) int {
	if e == ExitCodesKselftest {
		return Kselftest(smct, s)
	}
	return smct
}

// NoVerdict is the convention's status for a run without a verdict.
func (e ExitCodes) NoVerdict() int {
	if e == ExitCodesKselftest {
		return KselftestNoVerdict
	}
	return NoVerdictStatus
}

// Kselftest turns an smct status (0, 1, 2) into kselftest's: 0 passed
// (KSFT_PASS), 1 failed (KSFT_FAIL), 4 when every spec was skipped
// (KSFT_SKIP), KselftestNoVerdict without a verdict.
func Kselftest(code int, s Summary) int {
	p, f, k := s.Totals()
	return KselftestCounted(code, p, f, k)
}

// KselftestCounted is Kselftest for what a closing line counts: a
// command's tests rather than a run's specs.
func KselftestCounted(code, passed, failed, skipped int) int {
	switch code {
	case 0:
		if passed == 0 && failed == 0 && skipped > 0 {
			return 4
		}
		return 0
	case 1:
		return 1
	}
	return KselftestNoVerdict
}

// Require says whether a run fails the specs that find the feature absent
// (-require-feature=, -smct.require=).
type Require string

// The choices: the kernel decides (images.lock's has_stackmap), always,
// never.
const (
	RequireAuto     Require = ""
	RequireStackmap Require = "stackmap"
	RequireNone     Require = "none"
)

// RequireUsage describes the choices for a flag's help.
const RequireUsage = "stackmap: stackmap specs that find the feature absent fail the run; none: they are UNSUPPORTED (default: stackmap unless images.lock marks the entry has_stackmap: false)"

func (r Require) String() string { return string(r) }

// Set makes Require a flag: anything but the three choices is refused.
func (r *Require) Set(v string) error {
	if err := Require(v).Valid(); err != nil {
		return err
	}
	*r = Require(v)
	return nil
}

// Valid refuses anything but the three choices: a Require set by code,
// not by Set.
func (r Require) Valid() error {
	switch r {
	case RequireAuto, RequireStackmap, RequireNone:
		return nil
	}
	return fmt.Errorf("REQUIRE=%q: want stackmap, none, or nothing for the kernel's default", string(r))
}
