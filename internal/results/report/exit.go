// SPDX-License-Identifier: GPL-2.0-only

package report

// Exit status conventions (-exit-codes=).
const (
	ExitCodesSmct      = "smct"      // 0 no spec failed, 1 a spec failed, 2 no verdict
	ExitCodesKselftest = "kselftest" // kselftest.h's, for kselftest-style runners
)

// KselftestNoVerdict is the status of a run without a verdict under
// -exit-codes=kselftest. kselftest.h has no code for it and gives 2 to
// XFAIL, 3 to XPASS and 4 to SKIP; its runner reports any status other
// than 0 and 4 as "not ok", so 5 reads as a failure, not as one of those.
const KselftestNoVerdict = 5

// Kselftest turns an smct status (0, 1, 2) into kselftest's: 0 passed
// (KSFT_PASS), 1 failed (KSFT_FAIL), 4 when every spec was skipped
// (KSFT_SKIP), KselftestNoVerdict without a verdict.
func Kselftest(code int, s Summary) int {
	switch code {
	case 0:
		if p, f, k := s.Totals(); p == 0 && f == 0 && k > 0 {
			return 4
		}
		return 0
	case 1:
		return 1
	}
	return KselftestNoVerdict
}
