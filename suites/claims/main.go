// SPDX-License-Identifier: GPL-2.0-only

package claims

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/claims"
)

var (
	parts string
	out   string
)

// RegisterFlags adds the claims mode's flags to the suite binary's.
func RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&parts, "smct.claims", "", "measure the series' claims instead of running the specs: parts, comma-separated ("+strings.Join(claims.Parts, ",")+"), or all")
	fs.StringVar(&out, "smct.claims-out", claims.SampleFile, "where the claims mode writes its sample")
}

// Asked says whether the flags ask for the claims mode.
func Asked() bool { return parts != "" }

// Main takes the sample the flags ask for and writes it, and returns the
// exit status: 0 when the sample was written (parts that could not be
// measured say why in it), 2 when it could not be taken.
func Main() int {
	want := strings.Split(parts, ",")
	if parts == "all" {
		want = claims.Parts
	}
	s, err := Measure(want)
	if err != nil {
		fmt.Fprintf(os.Stderr, "claims: %v\n", err)
		return 2
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err == nil {
		if err = os.MkdirAll(filepath.Dir(out), 0o755); err == nil {
			err = os.WriteFile(out, b, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "claims: writing %s: %v\n", out, err)
		return 2
	}
	fmt.Fprintf(os.Stderr, "claims: sample written to %s\n", out)
	for p, why := range s.Missing {
		fmt.Fprintf(os.Stderr, "claims: %s not measured: %s\n", p, why)
	}
	return 0
}
