// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/kernels/kchoice"
	"github.com/ftrace-stackmap/conformance/internal/kernels/korigin"
	"github.com/ftrace-stackmap/conformance/internal/results/kcidbschema"
)

// A run of a sanitized kernel says so wherever the kernel is named: the
// image line of the reports' header and of the evidence, the command that
// makes it again, and KCIDB's build (its config's name, and its misc).
func TestSanitizedRunSaysSo(t *testing.T) {
	const lane = "sanitized (debug.config)"
	res := result(pass)
	res.Request.Lane, res.Sanitized = kchoice.Sanitized, lane
	res.Source += ", " + lane
	res.Origin.Config = "tinyconfig+common+x86_64+debug+sanitize"

	var image string
	for _, kv := range res.run().Header() {
		if kv[0] == "image" {
			image = kv[1]
		}
	}
	if !strings.Contains(image, "inputs 0123456789abcdef), "+lane+", sha256 ") {
		t.Errorf("the header's image line: %q", image)
	}
	if ev := Evidence(res); !strings.Contains(strings.Join(strings.Fields(ev), " "), "image: IMAGE=reference (built from kernel/, inputs 0123456789abcdef), "+lane) {
		t.Errorf("evidence:\n%s", ev)
	}
	if cmd := Reproduce(res); !strings.Contains(cmd, " SANITIZE=1 ") {
		t.Errorf("reproduce: %s", cmd)
	}

	given := result(pass)
	given.Request.Kernel, given.Request.Lane, given.Entry, given.Origin = "/tmp/bzImage", kchoice.Sanitized, "", korigin.Origin{}
	given.Dir, given.KernelSHA = "results/20261122-170000-x86_64", strings.Repeat("c", 64)
	given.Sanitized = "sanitized (KASAN on in its embedded config)"
	given.Source = "KERNEL=/tmp/bzImage, " + given.Sanitized
	doc := kcidbDoc(t, res, given)
	if err := kcidbschema.Validate(doc); err != nil {
		t.Fatal(err)
	}
	checkLinks(t, "sanitized", doc)
	var d kcidbData
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Builds) != 2 {
		t.Fatalf("%d builds, want 2", len(d.Builds))
	}
	built, user := d.Builds[0], d.Builds[1]
	if built.ConfigName != "tinyconfig+common+x86_64+debug+sanitize" || built.Misc["sanitized"] != lane || !strings.HasSuffix(built.Comment, lane) {
		t.Errorf("the sanitized reference kernel's build: %+v", built)
	}
	if user.ConfigName != "" || user.Misc["sanitized"] != given.Sanitized {
		t.Errorf("a sanitized KERNEL='s build: %+v", user)
	}
	// A plain run's build says nothing of it.
	var plain kcidbData
	if err := json.Unmarshal(kcidbDoc(t, result(pass)), &plain); err != nil || plain.Builds[0].Misc["sanitized"] != nil {
		t.Errorf("a plain build's misc: %v (%v)", plain.Builds[0].Misc, err)
	}
}
