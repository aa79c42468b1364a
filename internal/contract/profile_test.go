// SPDX-License-Identifier: GPL-2.0-only

package contract

import (
	"flag"
	"io"
	"strings"
	"testing"
)

func TestProfileFlag(t *testing.T) {
	for _, tc := range []struct {
		arg, want, err string
	}{
		{"", "v4", ""},
		{"-profile=v3", "v3", ""},
		{"-profile=v4", "v4", ""},
		{"-profile=v9", "", `PROFILE="v9": want v4 or v3`},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		p := ProfileV4
		fs.Var(&p, "profile", "")
		var args []string
		if tc.arg != "" {
			args = []string{tc.arg}
		}
		err := fs.Parse(args)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want %q", tc.arg, err, tc.err)
		case tc.err == "" && (err != nil || p.String() != tc.want):
			t.Errorf("%q: %v, %v; want %s", tc.arg, p, err, tc.want)
		}
	}
}
