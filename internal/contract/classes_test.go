package contract

import (
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		state types.SpecState
		msg   string
		want  Class
	}{
		{types.SpecStatePassed, "", Pass},
		{types.SpecStateFailed, "mode 0444, want 0440", Fail},
		{types.SpecStateFailed, UnresolvedPrefix + "cannot write tracing_on", Unresolved},
		{types.SpecStateSkipped, UnsupportedPrefix + "no stack_map", Unsupported},
		{types.SpecStateSkipped, "", NotRun},
		{types.SpecStateSkipped, "skipped for no reason given", Unresolved},
		{types.SpecStatePanicked, "runtime error", Unresolved},
		{types.SpecStateTimedout, "", Unresolved},
		{types.SpecStateInterrupted, "", Unresolved},
		{types.SpecStatePending, "", NotRun},
	} {
		got := ClassOf(types.SpecReport{State: tc.state, Failure: types.Failure{Message: tc.msg}})
		if got != tc.want {
			t.Errorf("ClassOf(%v, %q) = %s, want %s", tc.state, tc.msg, got, tc.want)
		}
	}
}
