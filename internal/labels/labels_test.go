// SPDX-License-Identifier: GPL-2.0-only

package labels

import (
	"encoding/json"
	"testing"
)

func TestAsksFor(t *testing.T) {
	for _, c := range []struct {
		filter string
		want   bool
	}{
		{"", false},
		{"torture", true},
		{"torture || SM-BIN-01", true},
		{"!torture", false},
		{"!(torture)", false},
		{"!(torture) && SM-BIN-01", false},
		{"SM-BIN-01", false},
		{"torture && SM-BIN-01", false}, // a spec labelled torture alone is not selected
	} {
		if got := MustParse(c.filter).AsksFor("torture"); got != c.want {
			t.Errorf("%q asks for torture: %v, want %v", c.filter, got, c.want)
		}
	}
}

func TestAndNarrowsWithoutParsingAgain(t *testing.T) {
	user, boot := MustParse("SM-BOOT-02 || baseline"), MustParse("SM-BOOT-02")
	both := boot.And(user)
	if got, want := both.String(), "(SM-BOOT-02) && (SM-BOOT-02 || baseline)"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	if !both.Selects([]string{"SM-BOOT-02"}) || both.Selects([]string{"baseline"}) {
		t.Error("the narrowed filter must select what both select, and only that")
	}
	if boot.And(Filter{}).String() != "SM-BOOT-02" || (Filter{}).And(user).String() != user.String() {
		t.Error("no filter narrows nothing")
	}
}

func TestParseRefusesWhatGinkgoRefuses(t *testing.T) {
	if _, err := Parse("SM-BOOT-02 &&"); err == nil {
		t.Error("a filter Ginkgo cannot read was taken")
	}
	var f Filter
	if err := json.Unmarshal([]byte(`"(a"`), &f); err == nil {
		t.Error("JSON with a broken filter was taken")
	}
	b, _ := json.Marshal(MustParse("a || b"))
	if err := json.Unmarshal(b, &f); err != nil || !f.Selects([]string{"b"}) || string(b) != `"a || b"` {
		t.Errorf("round trip: %s, %v", b, err)
	}
}
