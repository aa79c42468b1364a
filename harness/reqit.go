// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"

	"github.com/ftrace-stackmap/conformance/internal/contract"
)

// ReqIt declares a spec covering the requirements named in ids (separated
// by spaces). The IDs lead the spec's text in brackets and become labels, so
// text filters and label filters agree: ReqIt("SM-RESET-01", "fails ...", body)
// is It("[SM-RESET-01] fails ...", Label("SM-RESET-01"), body).
//
// Specs that cover the same IDs each carry a Case: their case names
// (<boot>.<IDs>.<key>) must differ, or a lab that keeps one result per
// name would keep one of their verdicts and drop the others.
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
	key := ""
	for _, a := range args {
		if c, ok := a.(caseKey); ok {
			key = string(c)
		}
	}
	if err := cases.add(strings.Join(list, "+"), key); err != nil {
		panic(fmt.Sprintf("ReqIt(%q): %v", text, err))
	}
	if key != "" {
		labels = append(labels, contract.CaseLabel+key)
	}
	args = append(args, labels, Offset(1))
	return It(prefix.String()+" "+text, withoutCase(args)...)
}

// caseKey is a Case decorator: ReqIt turns it into a label.
type caseKey string

// Case names a spec among the specs of its requirements: a short word or
// two, lower case with hyphens ("sleeper", "full-map"), which stays when
// the spec's prose is edited.
func Case(key string) any {
	if !caseWord.MatchString(key) {
		panic(fmt.Sprintf("harness.Case(%q): want lower-case words joined by hyphens", key))
	}
	if key == InvariantCase {
		panic(fmt.Sprintf("harness.Case(%q): the results of broken invariants have that key", key))
	}
	return caseKey(key)
}

var caseWord = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// withoutCase is args without the Case decorator, which Ginkgo would not
// know.
func withoutCase(args []any) []any {
	out := args[:0:0]
	for _, a := range args {
		if _, ok := a.(caseKey); !ok {
			out = append(out, a)
		}
	}
	return out
}

// caseKeys are the case keys given so far, by the IDs they go with:
// tree construction refuses two specs one name.
type caseKeys struct {
	mu   sync.Mutex
	seen map[string][]string
}

var cases caseKeys

// add records a spec's IDs and key, and refuses a name given twice, or a
// spec without a key among specs of the same IDs.
func (c *caseKeys) add(ids, key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string][]string{}
	}
	keys := append(c.seen[ids], key)
	c.seen[ids] = keys
	if len(keys) == 1 {
		return nil
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if k == "" {
			return fmt.Errorf("%d specs cover %s: give each a harness.Case, so that their case names differ", len(keys), ids)
		}
		if seen[k] {
			return fmt.Errorf("two specs of %s have the case %q", ids, k)
		}
		seen[k] = true
	}
	return nil
}
