// SPDX-License-Identifier: GPL-2.0-only

package contract

import (
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

func TestClassOf(t *testing.T) {
	for _, tc := range []struct {
		state types.SpecState
		msg   string
		mark  Class
		want  Class
	}{
		{types.SpecStatePassed, "", "", Pass},
		{types.SpecStateFailed, "mode 0444, want 0440", "", Fail},
		{types.SpecStateFailed, "cannot write tracing_on", Unresolved, Unresolved},
		{types.SpecStateFailed, "UNRESOLVED: a class in the prose is not one", "", Fail},
		{types.SpecStateSkipped, "no stack_map", Unsupported, Unsupported},
		{types.SpecStateSkipped, "", "", NotRun},
		{types.SpecStateSkipped, "skipped for no reason given", "", Unresolved},
		{types.SpecStatePanicked, "runtime error", "", Unresolved},
		{types.SpecStateTimedout, "", "", Unresolved},
		{types.SpecStateInterrupted, "", "", Unresolved},
		{types.SpecStatePending, "", "", NotRun},
	} {
		r := types.SpecReport{State: tc.state, Failure: types.Failure{Message: tc.msg}}
		if tc.mark != "" {
			r.ReportEntries = types.ReportEntries{Mark(tc.mark)}
		}
		got := ClassOf(r)
		if got != tc.want {
			t.Errorf("ClassOf(%v, %q) = %s, want %s", tc.state, tc.msg, got, tc.want)
		}
	}
}
