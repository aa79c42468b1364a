// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/ftrace-stackmap/conformance/internal/claims"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// kcidbRoot is the first part of every test's path: the suite's tests are
// one subtree among a build's.
const kcidbRoot = "stackmap"

// pathWord is what a part of a test's path may not hold (the schema's
// path takes [a-zA-Z0-9_-] between its dots).
var pathWord = regexp.MustCompile(`[^a-zA-Z0-9_-]+`)

// maxExcerpt is the schema's limit on a log excerpt, in characters.
const maxExcerpt = 16384

// kcidbTests are the run's tests: one per spec, after a missing test per
// boot that a run without a verdict was to make, or that was not made and
// judged no spec; then, as the KTAP has them, each boot whose kernel
// logged problems, the tree's decoder, its ftracetest, and the suite's own
// problems.
func kcidbTests(origin, buildID string, res *Result) []kcidbTest {
	w := testWriter{res: res, origin: origin, buildID: buildID, run: runName(res) + "-" + runKey(res)[:12], seen: map[string]int{}}
	if res.NoVerdict != "" {
		for _, boot := range plannedBoots(res) {
			w.add(boot, "MISS", "boot "+boot, res.NoVerdict, 0, nil)
		}
	}
	for _, br := range res.Boots {
		if res.NoVerdict == "" && br.Boot == nil && br.Skipped != "" && br.Skipped != NoSpecSelected && !br.Control && !judged(res, br.Plan.Name) {
			w.add(br.Plan.Name, "MISS", "boot "+br.Plan.Name, "boot "+br.Plan.Name+" not made: "+br.Skipped, 0, nil)
		}
	}
	for _, sp := range res.Summary.Specs {
		m := misc{}
		m.set("test_case_id", sp.Name) // as LAVA keeps the name its case was made of
		m.set("class", string(sp.Class))
		m.set("requirements", sp.IDs)
		m.set("location", sp.Location)
		m.set("warnings", sp.Warnings)
		m.set("notes", sp.Notes)
		if sp.TimedOut {
			m["timed_out"] = true
		}
		excerpt := ""
		if sp.Class != contract.Pass {
			excerpt = sp.Detail
		}
		w.addPath(SpecPath(sp.Name), specStatus(sp.Class), sp.Text, excerpt, sp.Duration, m)
	}
	w.kernelLogs()
	if d := res.Decoder; d != nil {
		status := "PASS"
		if !d.Agrees() {
			status = "FAIL"
		}
		w.add(DecoderTest, status, "the tree's "+d.Tool+" reads the stack_map_bin the kernel wrote as the suite does", strings.Join(d.Problems, "\n"), 0, nil)
	}
	if res.Request.FtraceDir != "" {
		for _, c := range res.Selftests {
			excerpt := ""
			if !c.Passed() {
				excerpt = strings.Join(append(c.Tail(maxTail), c.Hint), "\n")
			}
			w.addPath(selftestPath(c.File), selftestStatus(c.Result), c.Name, excerpt, 0, misc{"result": c.Result})
		}
		if len(res.Selftests) == 0 && res.SelftestsNote != "" {
			w.addPath(kcidbRoot+".ftracetest", "MISS", "the tree's ftracetest", res.SelftestsNote, 0, nil)
		}
	}
	if p := res.Summary.SuiteProblems; len(p) > 0 {
		w.addPath(kcidbRoot+".suite", "ERROR", "the suite's setup and its final restore of tracefs", strings.Join(p, "\n"), 0, nil)
	}
	w.claims()
	w.verdict()
	return w.tests
}

// kernelLogs adds each boot's kernel-log check, a clean one too: a
// dashboard that never sees the check pass cannot tell a clean log from
// one nobody read. A boot that could not be judged says nothing of it.
func (w *testWriter) kernelLogs() {
	res := w.res
	const comment = "the kernel's log of boot %s shows no warning, oops or lockup"
	checked := map[string]bool{}
	for _, l := range res.KernelLogs {
		checked[l.Boot] = true
		excerpt := strings.Join(l.Lines, "\n")
		if l.Missing {
			excerpt = KernelLogMissing
		}
		w.add(KernelLogTest(l.Boot), specStatus(l.Class()), fmt.Sprintf(comment, l.Boot), excerpt, 0, nil)
	}
	unjudged := map[string]bool{}
	for _, u := range res.Unjudged {
		unjudged[u.Boot] = true
	}
	for _, br := range res.Boots {
		name := br.Plan.Name
		if br.Boot != nil && !br.Control && !checked[name] && !unjudged[name] && res.NoVerdict == "" && judged(res, name) {
			w.add(KernelLogTest(name), "PASS", fmt.Sprintf(comment, name), "", 0, nil)
		}
	}
}

// verdictPath is the KCIDB path of the run's own verdict.
const verdictPath = kcidbRoot + ".verdict"

// verdict adds the run's verdict as a test of its own: a run without one
// is an ERROR a dashboard shows, with its reason, not a run whose tests
// merely went missing.
func (w *testWriter) verdict() {
	status := map[int]string{0: "PASS", 1: "FAIL"}[w.res.ExitCode()]
	if status == "" {
		status = "ERROR"
	}
	excerpt := ""
	if status != "PASS" {
		excerpt = w.res.Verdict()
	}
	w.addPath(verdictPath, status, "the run's verdict: every spec judged, none failed", excerpt, 0, misc{"verdict": w.res.Verdict()})
}

// claims adds a test per claim the run measured: DONE with its figure, or
// SKIP with why it could not be measured, so that no claim colours the
// build's status; what it says of the claim is in misc.
func (w *testWriter) claims() {
	r := w.res.Claims
	if r == nil {
		return
	}
	for _, c := range r.Claims {
		path := kcidbRoot + ".claims"
		for _, part := range strings.Split(c.ID, ".") {
			path += "." + pathPart(part)
		}
		m := misc{}
		m.set("claim_status", string(c.Status))
		m.set("claimed", c.Claimed)
		m.set("measured", c.Measured)
		m.set("rule", c.Why)
		if c.Status == claims.CouldNotMeasure {
			w.addPath(path, "SKIP", c.What, c.Why, 0, m)
			continue
		}
		w.addPath(path, "DONE", c.What, "", 0, m)
		w.tests[len(w.tests)-1].Number = claimNumber(c)
	}
}

// claimNumber is a claim's figure as KCIDB's number: bytes and seconds
// with their prefixes, ratios without a unit.
func claimNumber(c claims.Claim) *kcidbNumber {
	switch c.Unit {
	case "MB":
		return &kcidbNumber{Value: c.Value * (1 << 20), Unit: "B", Prefix: "binary"}
	case "us":
		return &kcidbNumber{Value: c.Value / 1e6, Unit: "s", Prefix: "metric"}
	case "x":
		return &kcidbNumber{Value: c.Value}
	}
	return &kcidbNumber{Value: c.Value, Unit: c.Unit}
}

// testWriter makes a run's tests: their ids, and what they all say of the
// run.
type testWriter struct {
	res     *Result
	origin  string
	buildID string
	run     string // the run's part of every id
	seen    map[string]int
	tests   []kcidbTest
}

// add is a test named as the KTAP names it: "<boot>.<name>".
func (w *testWriter) add(name, status, comment, excerpt string, d time.Duration, m misc) {
	w.addPath(TestPath(name), status, comment, excerpt, d, m)
}

func (w *testWriter) addPath(path, status, comment, excerpt string, d time.Duration, m misc) {
	res := w.res
	id := w.origin + ":" + w.run + ":" + path
	// A name may repeat in a run; its id may not.
	if w.seen[path]++; w.seen[path] > 1 {
		id += fmt.Sprintf("#%d", w.seen[path])
	}
	if m == nil {
		m = misc{}
	}
	m.set("seed", res.Request.Seed)
	m.set("profile", res.Request.Profile.String())
	m.set("suite", res.Suite)
	m.set("run", runName(res))
	t := kcidbTest{BuildID: w.buildID, ID: id, Origin: w.origin, Path: path, Comment: report.Plain(comment), Status: status,
		Duration: math.Round(d.Seconds()*1000) / 1000, LogExcerpt: excerptOf(excerpt), Misc: m}
	// The host's clock: the guest's may read 1970, and a spec's own start
	// is the guest's.
	if !res.Started.IsZero() {
		t.StartTime = res.Started.UTC().Format(time.RFC3339Nano)
	}
	if res.Machine != "" {
		t.Environment = &kcidbEnvironment{Comment: res.Machine}
	}
	w.tests = append(w.tests, t)
}

// TestPath is the KCIDB path of a test of the run's own, which no LAVA
// case has (a boot's kernel log, a boot not made): "stackmap.<boot>.<rest>",
// each part with what a path may not hold made "_".
func TestPath(name string) string {
	parts := []string{kcidbRoot}
	for _, p := range strings.SplitN(name, ".", 2) {
		parts = append(parts, pathPart(p))
	}
	return strings.Join(parts, ".")
}

// SpecPath is a spec's KCIDB path as KernelCI gives the case a LAVA lab
// records for it: "stackmap.<boot>.<case>" (default.SM-RESET-01 is
// stackmap.default.default_sm_reset_01). KernelCI's LAVA callback names a
// case's node after the part of its LAVA suite's name that follows the
// first "_" (the job's suite is stackmap_<boot>, which LAVA lowers and
// whose spaces it makes "-") and the case as LAVA named it: the name the
// guest printed, lowered, each run of non-word characters made "_". Its
// KCIDB path is the nodes' names under the job's test suite, joined by
// dots, each character a path does not take made "_".
func SpecPath(name string) string {
	boot, _, _ := strings.Cut(name, ".")
	boot = strings.ReplaceAll(strings.ToLower(boot), " ", "-")
	return kcidbRoot + "." + kcidbChars(boot) + "." + kcidbChars(LAVACase(name))
}

// LAVACase is the name LAVA's monitor gives the case of a spec it reads
// off the console: the name lowered, each run of non-word characters made
// "_" (default.SM-RESET-01.sleeper is default_sm_reset_01_sleeper).
func LAVACase(name string) string {
	return nonWord.ReplaceAllString(strings.ToLower(strings.TrimSpace(name)), "_")
}

// nonWord is what LAVA's monitor makes "_" of a case's name: Python's \W.
var nonWord = regexp.MustCompile(`[^\p{L}\p{N}_]+`)

// kcidbChars is s with each character a KCIDB path part does not take
// made "_", as KernelCI does.
func kcidbChars(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return r
		}
		return '_'
	}, s)
}

func pathPart(s string) string {
	if s = pathWord.ReplaceAllString(s, "_"); s == "" {
		return "_"
	}
	return s
}

// selftestPath is an ftracetest case's path, by its file under test.d:
// test.d/stackmap/basic.tc is stackmap.ftracetest.stackmap.basic.
func selftestPath(file string) string {
	parts := []string{kcidbRoot, "ftracetest"}
	for _, p := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(file, "test.d/"), ".tc"), "/") {
		parts = append(parts, pathPart(p))
	}
	return strings.Join(parts, ".")
}

// specStatus is a verdict in KCIDB's words: UNRESOLVED is an ERROR (the
// test could not decide), UNSUPPORTED a SKIP (not applicable).
func specStatus(c contract.Class) string {
	switch c {
	case contract.Pass:
		return "PASS"
	case contract.Unsupported:
		return "SKIP"
	case contract.Unresolved:
		return "ERROR"
	}
	return "FAIL"
}

// selftestStatus is an ftracetest result in KCIDB's words; an expected
// failure passes, as in the KTAP.
func selftestStatus(result string) string {
	switch result {
	case "PASS", "XFAIL":
		return "PASS"
	case "FAIL":
		return "FAIL"
	case "UNSUPPORTED", "UNTESTED":
		return "SKIP"
	}
	return "ERROR"
}

// judged says whether the run gave a verdict on a spec of the boot.
func judged(res *Result, boot string) bool {
	for _, sp := range res.Summary.Specs {
		if sp.Boot == boot {
			return true
		}
	}
	return false
}

// plannedBoots are the boots the run was to make: the default boot when
// it stopped before planning.
func plannedBoots(res *Result) []string {
	if len(res.Plans) == 0 {
		return []string{contract.DefaultBoot}
	}
	return res.Plans
}

// runName names the run by its directory.
func runName(res *Result) string {
	if res.Dir == "" {
		return "run"
	}
	return filepath.Base(res.Dir)
}

// excerptOf is text as a log excerpt: plain, and within the schema's
// limit, its start kept (the reason comes first).
func excerptOf(text string) string {
	text = strings.TrimSpace(report.Plain(text))
	if r := []rune(text); len(r) > maxExcerpt {
		const cut = "\n[cut: the run directory has it whole]"
		text = string(r[:maxExcerpt-len(cut)]) + cut
	}
	return text
}
