// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/claims"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/kernels/korigin"
	"github.com/ftrace-stackmap/conformance/internal/results/kcidbschema"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// matrixRuns are the runs of a matrix: the reference kernel on both
// arches, a posted series, a Debian kernel, KERNEL=, and a run refused
// before it had a kernel.
func matrixRuns() []*Result {
	arm := failingRun()
	arm.Request.Arch, arm.Dir = arch.MustLookup("arm64"), "results/matrix-20261122-164552/reference-arm64/20261122-164552-arm64"
	arm.KernelSHA = strings.Repeat("a", 64)
	arm.Origin.Config, arm.Origin.Compiler = "tinyconfig+common+arm64", "aarch64-linux-gnu-gcc (Debian 12.2.0-14+deb12u1) 12.2.0"
	x86 := passingRun()
	x86.Request.Arch, x86.Dir, x86.Entry, x86.Origin = arch.MustLookup("x86_64"), "results/matrix-20261122-164552/reference-x86_64/20261122-164552-x86_64", "reference", reference
	series := passingRun()
	series.Request.Arch, series.Dir, series.Entry = arch.MustLookup("x86_64"), "results/matrix-20261122-164552/stackmap-v4-x86_64/20261122-164552-x86_64", "stackmap-v4"
	series.KernelSHA = strings.Repeat("b", 64)
	series.Origin = korigin.Origin{Tree: "https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git", Commit: strings.Repeat("d", 40),
		Describe: "v7.1-rc5", Series: "20260616064119.438063-1-lipengfei28@xiaomi.com", Config: "tinyconfig+common+x86_64",
		Patches: []korigin.Patch{{Name: "0001.patch", SHA256: strings.Repeat("e", 64)}}}
	debian := result(pass, unsupported)
	debian.Dir, debian.Entry = "results/matrix-20261122-164552/debian-6.12-x86_64/20261122-164552-x86_64", "debian-6.12"
	debian.Origin = korigin.Origin{Package: "linux-image-6.12.117+deb12-cloud-amd64-unsigned 6.12.117-1~deb12u1"}
	given := result(pass)
	given.Request.Kernel, given.Source, given.Entry, given.Origin = "/tmp/bzImage", "KERNEL=/tmp/bzImage", "", korigin.Origin{}
	refused := &Result{Request: Request{}, Dir: "results/matrix-20261122-164552/reference-riscv/20261122-164552-unknown-arch",
		Started: started, NoVerdict: "ARCH=riscv: want arm64 or x86_64"}
	return []*Result{arm, x86, series, debian, given, refused}
}

// kcidbDoc is the document of runs, for KCIDB_ORIGIN=lab_1.
func kcidbDoc(t *testing.T, runs ...*Result) []byte {
	t.Helper()
	js, err := KCIDB("lab_1", runs...)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// TestKCIDBSchema holds kcidb.json to KCIDB's own schema: a passing, a
// failing and a no-verdict run, as their golden files have it, and a
// matrix.
func TestKCIDBSchema(t *testing.T) {
	docs := map[string][]byte{"matrix": kcidbDoc(t, matrixRuns()...)}
	for _, run := range []string{"pass", "fail", "noverdict"} {
		b, err := os.ReadFile(filepath.Join("testdata", run, KCIDBFile))
		if err != nil {
			t.Fatal(err)
		}
		docs[run] = b
	}
	for name, doc := range docs {
		if err := kcidbschema.Validate(doc); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		checkLinks(t, name, doc)
	}
}

// checkLinks checks what the schema cannot: ids unique, each test's build
// and each build's checkout in the document, every id the origin's.
func checkLinks(t *testing.T, name string, doc []byte) {
	t.Helper()
	var d kcidbData
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	unique := func(id, origin string) {
		if ids[id] {
			t.Errorf("%s: id %s repeated", name, id)
		}
		ids[id] = true
		if !strings.HasPrefix(id, origin+":") {
			t.Errorf("%s: id %s is not of its origin %s", name, id, origin)
		}
	}
	for _, c := range d.Checkouts {
		unique(c.ID, c.Origin)
	}
	for _, b := range d.Builds {
		unique(b.ID, b.Origin)
		if !ids[b.CheckoutID] {
			t.Errorf("%s: build %s of checkout %s, not in the document", name, b.ID, b.CheckoutID)
		}
	}
	for _, tc := range d.Tests {
		unique(tc.ID, tc.Origin)
		if !ids[tc.BuildID] {
			t.Errorf("%s: test %s of build %s, not in the document", name, tc.ID, tc.BuildID)
		}
	}
}

// TestKCIDBSchemaRefuses shows that the check fails where KCIDB would:
// each case breaks one rule of a valid document.
func TestKCIDBSchemaRefuses(t *testing.T) {
	valid := kcidbDoc(t, failingRun())
	if err := kcidbschema.Validate(valid); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		at     string // what the refusal names
		break_ func(d map[string]any)
	}{
		{"a status KCIDB does not have", "/tests/0/status", func(d map[string]any) { first(d, "tests")["status"] = "UNRESOLVED" }},
		{"a status in lower case", "/tests/0/status", func(d map[string]any) { first(d, "tests")["status"] = "pass" }},
		{"a test without its build", "missing property 'build_id'", func(d map[string]any) { delete(first(d, "tests"), "build_id") }},
		{"a test without an id", "missing property 'id'", func(d map[string]any) { delete(first(d, "tests"), "id") }},
		{"a build without its checkout", "missing property 'checkout_id'", func(d map[string]any) { delete(first(d, "builds"), "checkout_id") }},
		{"a checkout without an origin", "missing property 'origin'", func(d map[string]any) { delete(first(d, "checkouts"), "origin") }},
		{"no version", "missing property 'version'", func(d map[string]any) { delete(d, "version") }},
		{"a later minor version", "/version/minor", func(d map[string]any) { d["version"].(map[string]any)["minor"] = 4 }},
		{"a field the schema does not have", "additional properties 'result'", func(d map[string]any) { first(d, "tests")["result"] = "PASS" }},
		{"an id without its origin", "/builds/0/id", func(d map[string]any) { first(d, "builds")["id"] = "7d3faa0ff4eb9aeb6f80efcc" }},
		{"an origin in capitals", "/tests/0/origin", func(d map[string]any) { first(d, "tests")["origin"] = "Lab" }},
		{"a path with a +", "/tests/0/path", func(d map[string]any) { first(d, "tests")["path"] = "stackmap.default.SM-RESET-04+SM-BIN-04" }},
		{"a time that is not RFC 3339", "/tests/0/start_time", func(d map[string]any) { first(d, "tests")["start_time"] = "2026-11-22 16:45:52" }},
		{"a duration as text", "/tests/0/duration", func(d map[string]any) { first(d, "tests")["duration"] = "1s" }},
		{"an excerpt over the limit", "/tests/0/log_excerpt", func(d map[string]any) { first(d, "tests")["log_excerpt"] = strings.Repeat("x", maxExcerpt+1) }},
		{"a short commit hash", "/checkouts/0/git_commit_hash", func(d map[string]any) { first(d, "checkouts")["git_commit_hash"] = "0123456789ab" }},
		{"a patchset hash that is not sha256", "/checkouts/0/patchset_hash", func(d map[string]any) { first(d, "checkouts")["patchset_hash"] = "0123" }},
		{"a repository that is not https", "/checkouts/0/git_repository_url", func(d map[string]any) { first(d, "checkouts")["git_repository_url"] = "/src/linux" }},
		{"an arch with a hyphen", "/builds/0/architecture", func(d map[string]any) { first(d, "builds")["architecture"] = "x86-64" }},
		{"misc that is not an object", "/tests/0/misc", func(d map[string]any) { first(d, "tests")["misc"] = "seed 4242" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d map[string]any
			if err := json.Unmarshal(valid, &d); err != nil {
				t.Fatal(err)
			}
			tc.break_(d)
			broken, _ := json.Marshal(d)
			err := kcidbschema.Validate(broken)
			if err == nil {
				t.Fatalf("the schema took a document with %s", tc.name)
			}
			if !strings.Contains(err.Error(), tc.at) {
				t.Errorf("refused for another reason than %s: %v", tc.at, err)
			}
		})
	}
}

// first is the first object of a list in a document.
func first(d map[string]any, list string) map[string]any {
	return d[list].([]any)[0].(map[string]any)
}

// A matrix writes each checkout and build once: the arches of the
// reference kernel share its source, not its build.
func TestKCIDBMatrixShares(t *testing.T) {
	var d kcidbData
	if err := json.Unmarshal(kcidbDoc(t, matrixRuns()...), &d); err != nil {
		t.Fatal(err)
	}
	// reference (both arches), the series, Debian, KERNEL=, the refused run
	if len(d.Checkouts) != 5 || len(d.Builds) != 6 {
		t.Errorf("%d checkouts, %d builds; want 5 and 6", len(d.Checkouts), len(d.Builds))
	}
	byArch := map[string]string{}
	for _, b := range d.Builds {
		if e, _ := b.Misc["images_lock_entry"].(string); e == "reference" {
			byArch[b.Architecture] = b.CheckoutID
		}
	}
	if byArch["arm64"] == "" || byArch["arm64"] != byArch["x86_64"] {
		t.Errorf("the reference kernel's builds have checkouts %v, want one", byArch)
	}
	series := d.Checkouts[1] // after the reference kernel's
	if series.MessageID == "" || series.GitRepositoryURL == "" || series.PatchsetHash == nil || *series.PatchsetHash != korigin.PatchsetHash(matrixRuns()[2].Origin.Patches) {
		t.Errorf("the series' checkout: %+v", series)
	}
	// The same runs give the same ids; another run of the same kernel
	// gives its tests ids of their own, and shares the checkout and build.
	again := kcidbDoc(t, matrixRuns()...)
	if string(again) != string(kcidbDoc(t, matrixRuns()...)) {
		t.Error("the same runs gave two documents")
	}
	one, other := failingRun(), failingRun()
	other.Dir, other.Started = "results/20261123-101010-x86_64", started.Add(time.Hour)
	checkLinks(t, "two runs", kcidbDoc(t, one, other))
}

// MISS is a boot that never ran: each boot a run without a verdict was to
// make, and a boot not made whose specs the run did not judge otherwise.
func TestKCIDBMissingBoots(t *testing.T) {
	res := result(pass)
	res.Boots = append(res.Boots, BootResult{Plan: contract.Plans()[3], Skipped: "memory: 512M is not enough for 2 lanes"},
		BootResult{Plan: contract.BootPlan{Name: "control"}, Boot: &qemu.Result{}, Control: true})
	var d kcidbData
	json.Unmarshal(kcidbDoc(t, res), &d)
	var missing []string
	for _, tc := range d.Tests {
		if tc.Status == "MISS" {
			missing = append(missing, tc.Path+": "+tc.LogExcerpt)
		}
	}
	want := "stackmap." + contract.Plans()[3].Name + ": boot " + contract.Plans()[3].Name + " not made: memory: 512M is not enough for 2 lanes"
	if len(missing) != 1 || missing[0] != want {
		t.Errorf("missing tests %q, want %q", missing, want)
	}

	// A run without a verdict: each planned boot MISS, and the verdict
	// itself an ERROR saying why.
	json.Unmarshal(kcidbDoc(t, noVerdictRun()), &d)
	var paths []string
	for _, tc := range d.Tests {
		want := "MISS"
		if tc.Path == verdictPath {
			want = "ERROR"
		}
		if tc.Status != want || !strings.Contains(tc.LogExcerpt, "did not reach the suite") {
			t.Errorf("no-verdict test %s: %s %q, want %s", tc.Path, tc.Status, tc.LogExcerpt, want)
		}
		paths = append(paths, tc.Path)
	}
	if got := strings.Join(paths, " "); got != "stackmap.default stackmap.trace-options stackmap.bits-12 stackmap.verdict" {
		t.Errorf("no-verdict tests %s, want one per planned boot and the verdict", got)
	}
}

func TestTestPath(t *testing.T) {
	for name, want := range map[string]string{
		"default.kernel-log": "stackmap.default.kernel-log",
		"default":            "stackmap.default",
		"default.decoder":    "stackmap.default.decoder",
	} {
		if got := TestPath(name); got != want {
			t.Errorf("TestPath(%q) = %q, want %q", name, got, want)
		}
	}
	// A spec's path is KernelCI's for its LAVA case: the suite's part
	// after its first "_" (stackmap_<boot>), the case as LAVA names it.
	for name, want := range map[string]string{
		"default.SM-RESET-01":            "stackmap.default.default_sm_reset_01",
		"default.SM-RESET-04+SM-BIN-04":  "stackmap.default.default_sm_reset_04_sm_bin_04",
		"bits-12.SM-BOOT-02":             "stackmap.bits-12.bits_12_sm_boot_02",
		"trace-options.SM-OPT-02":        "stackmap.trace-options.trace_options_sm_opt_02",
		"default.a spec named in words.": "stackmap.default.default_a_spec_named_in_words_",
		"default.Größe-01":               "stackmap.default.default_gr__e_01",
	} {
		if got := SpecPath(name); got != want {
			t.Errorf("SpecPath(%q) = %q, want %q", name, got, want)
		}
	}
	if got := selftestPath("test.d/stackmap/basic-bin.tc"); got != "stackmap.ftracetest.stackmap.basic-bin" {
		t.Errorf("selftestPath = %q", got)
	}
}

// KCIDB_ORIGIN= names the origin; one KCIDB would refuse is refused before
// anything is written.
func TestKCIDBOrigin(t *testing.T) {
	t.Setenv(KCIDBOriginEnv, "")
	if o, err := KCIDBOrigin(); o != DefaultKCIDBOrigin || err != nil {
		t.Errorf("KCIDBOrigin() = %q, %v; want the default", o, err)
	}
	t.Setenv(KCIDBOriginEnv, "my_lab2")
	if o, err := KCIDBOrigin(); o != "my_lab2" || err != nil {
		t.Errorf("KCIDBOrigin() = %q, %v", o, err)
	}
	for _, bad := range []string{"My-Lab", "lab:1", "lab 1"} {
		t.Setenv(KCIDBOriginEnv, bad)
		if _, err := KCIDBOrigin(); err == nil || !strings.Contains(err.Error(), "KCIDB_ORIGIN=") {
			t.Errorf("KCIDB_ORIGIN=%q: %v", bad, err)
		}
		if _, err := KCIDB(bad, passingRun()); err == nil {
			t.Errorf("KCIDB(%q) wrote a document", bad)
		}
	}
}

// An excerpt stays within the schema's limit, in characters, and plain.
func TestExcerptOf(t *testing.T) {
	got := excerptOf("\x1b[31m" + strings.Repeat("é", 2*maxExcerpt))
	if n := len([]rune(got)); n != maxExcerpt || strings.Contains(got, "\x1b") {
		t.Errorf("excerpt of %d characters, want %d, plain", n, maxExcerpt)
	}
}

// TestKCIDBClaims holds a run's claims to KCIDB's schema: each claim a
// test, DONE with its number or SKIP with why it was not measured.
func TestKCIDBClaims(t *testing.T) {
	run := passingRun()
	rep := claims.Judge("QEMU", true, []claims.Boot{{Name: "claims", Sample: &claims.Sample{
		Pool: &claims.Pool{Capacity: 1 << 14, Bytes: 8814592}, Missing: map[string]string{claims.PartRetention: "the kernel has no event"}}}})
	run.Claims = &rep
	doc := kcidbDoc(t, run)
	if err := kcidbschema.Validate(doc); err != nil {
		t.Fatal(err)
	}
	checkLinks(t, "claims", doc)
	var d kcidbData
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	got := map[string]kcidbTest{}
	for _, tc := range d.Tests {
		got[tc.Path] = tc
	}
	pool := got["stackmap.claims.pool.bits14"]
	if pool.Status != "DONE" || pool.Number == nil || pool.Number.Value != 8.41*(1<<20) || pool.Number.Unit != "B" || pool.Misc["claim_status"] != "reproduced" {
		t.Errorf("pool at 14 bits: %+v, number %+v", pool, pool.Number)
	}
	if ev := got["stackmap.claims.retention.events"]; ev.Status != "SKIP" || !strings.Contains(ev.LogExcerpt, "no event") || ev.Number != nil {
		t.Errorf("retention not measured: %+v", ev)
	}
	if v := run.Verdict(); v != "ok" {
		t.Errorf("verdict %q with claims; want the specs' ok", v)
	}
}
