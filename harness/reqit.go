// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"

	"github.com/ftrace-stackmap/conformance/internal/contract"
)

// ReqIt declares a spec covering the requirements named in ids (separated
// by spaces). The IDs lead the spec's text in brackets and become labels, so
// text filters and label filters agree: ReqIt("SM-RESET-01", "fails ...", body)
// is It("[SM-RESET-01] fails ...", Label("SM-RESET-01"), body).
func ReqIt(ids string, text string, args ...any) bool {
	list := strings.Fields(ids)
	if len(list) == 0 {
		panic(fmt.Sprintf("ReqIt(%q): no requirement ID", text))
	}
	var prefix strings.Builder
	labels := Labels{}
	for _, id := range list {
		if _, ok := contract.Requirements[id]; !ok {
			panic(fmt.Sprintf("ReqIt(%q): unknown requirement ID %q", text, id))
		}
		fmt.Fprintf(&prefix, "[%s]", id)
		labels = append(labels, id)
	}
	args = append(args, labels, Offset(1))
	return It(prefix.String()+" "+text, args...)
}
