// SPDX-License-Identifier: GPL-2.0-only

// Package browser opens every kind of page the suite writes (a run, a
// failing run, a run without a verdict, the claims, a walk, a matrix, the
// mutants, the bench) in Debian's headless Chromium and holds it to what a
// reviewer needs: nothing fails to load, nothing is fetched from outside
// the file, the grid has a cell per result with the run's own counts,
// every FAIL's clause and message is on the page, every figure of a chart
// carries its number, the page fits a 1280-pixel window and prints. A
// screenshot of each is kept for a reader.
package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/ftrace-stackmap/conformance/internal/apt"
	"github.com/ftrace-stackmap/conformance/internal/claims"
	"github.com/ftrace-stackmap/conformance/internal/page"
)

const root = "../.."

// browser is Debian's headless Chromium.
var browser = apt.Need{Program: "chromium-headless-shell", Package: "chromium-headless-shell"}

// pages are the pages of each kind, as the golden tests of their writers
// keep them; SMCT_PAGES adds pages of real runs (paths, absolute or from the
// project's root, comma-separated).
var pages = []struct{ kind, path string }{
	{"run", "internal/results/testdata/pass/" + page.File},
	{"failing-run", "internal/results/testdata/fail/" + page.File},
	{"no-verdict", "internal/results/testdata/noverdict/" + page.File},
	{"claims", "internal/results/testdata/claims/" + page.File},
	{"claims-run", "internal/results/testdata/claimsrun/" + page.File},
	{"walk", "internal/review/testdata/walk/" + page.File},
	{"matrix", "internal/matrix/testdata/matrix/" + page.File},
	{"mutants", "internal/mutants/testdata/mutants/" + page.File},
	{"bench", "internal/bench/testdata/bench/" + page.File},
}

// window is the width a page must fit.
const window = 1280

func TestPagesInABrowser(t *testing.T) {
	if os.Getenv("SMCT_E2E") != "1" {
		t.Skip("opens the pages in Chromium: set SMCT_E2E=1 to run it (make test does)")
	}
	if err := apt.Ensure(os.Stderr, browser); err != nil {
		t.Fatal(err)
	}
	list := pages
	for i, p := range strings.Split(os.Getenv("SMCT_PAGES"), ",") {
		if p != "" {
			list = append(list, struct{ kind, path string }{fmt.Sprintf("given-%d", i), p})
		}
	}
	shots := filepath.Join(root, "build", "browser")
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	exe, _ := exec(browser.Program)
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("no-first-run", true), chromedp.WindowSize(window, 900))...)
	defer cancel()
	for _, p := range list {
		t.Run(p.kind, func(t *testing.T) {
			path := p.path
			if !filepath.IsAbs(path) { // the project's root is where make test runs
				path = filepath.Join(root, path)
			}
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("no page %s: %v (the writer's golden test writes it with -update)", p.path, err)
			}
			shot := filepath.Join(shots, p.kind+".png")
			check(t, alloc, path, shot)
			abs, _ := filepath.Abs(shot)
			t.Logf("screenshot: %s", abs)
		})
	}
}

// exec is the browser's path.
func exec(name string) (string, error) {
	for _, dir := range strings.Split(os.Getenv("PATH"), ":") {
		if p := filepath.Join(dir, name); isFile(p) {
			return p, nil
		}
	}
	return "/usr/bin/" + name, nil
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// check opens one page and holds it to what a reviewer needs.
func check(t *testing.T, alloc context.Context, path, shot string) {
	abs, _ := filepath.Abs(path)
	url := "file://" + abs
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	ctx, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	var (
		mu       sync.Mutex
		problems []string
	)
	err := chromedp.Listen(ctx, func(ev any) {
		var p string
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			p = "exception: " + e.ExceptionDetails.Text
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				p = "console error"
			}
		case *network.EventRequestWillBeSent:
			if e.Request.URL != url && !strings.HasPrefix(e.Request.URL, "data:") {
				p = "a request leaves the file: " + e.Request.URL
			}
		}
		if p != "" {
			mu.Lock()
			problems = append(problems, p)
			mu.Unlock()
		}
	})
	if err == nil {
		err = chromedp.Do(ctx, chromedp.EmulateViewport(window, 900), chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("body")))
	}
	if err != nil {
		t.Fatalf("opening %s: %v", url, err)
	}
	scrollWidth := run(t, ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	cells := run(t, ctx, chromedp.Evaluate[map[string]int](`(() => { const n = {}; for (const c of document.querySelectorAll("table.grid td[data-class]")) n[c.dataset.class] = (n[c.dataset.class] || 0) + 1; return n })()`))
	details := run(t, ctx, chromedp.Evaluate[[]detail](`[...document.querySelectorAll(".detail")].filter(d => d.getBoundingClientRect().height > 0).map(d => ({Class: d.dataset.class, Clause: (d.querySelector(".clause") || {}).textContent || "", Message: (d.querySelector(".message") || {}).textContent || ""}))`))
	untitled := run(t, ctx, chromedp.Evaluate[int](`[...document.querySelectorAll("svg.chart rect, svg.chart line")].filter(e => !/\d/.test((e.querySelector("title") || {}).textContent || "")).length`))
	bars := run(t, ctx, chromedp.Evaluate[[]float64](`[...document.querySelectorAll("svg.chart rect.bar")].map(e => parseFloat(e.dataset.value))`))
	png := run(t, ctx, chromedp.FullScreenshot(100))
	pdf := run(t, ctx, chromedp.PrintToPDF())
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	for _, p := range problems {
		t.Error(p)
	}
	mu.Unlock()
	if scrollWidth > window {
		t.Errorf("the page is %d pixels wide, more than a %d-pixel window", scrollWidth, window)
	}
	if len(pdf) < 1000 {
		t.Errorf("printing gave %d bytes", len(pdf))
	}
	if untitled > 0 {
		t.Errorf("%d figures of the charts carry no number", untitled)
	}
	dir := filepath.Dir(path)
	if totals, ok := closingLine(dir); ok {
		got := [3]int{cells["PASS"], cells["FAIL"] + cells["UNRESOLVED"], cells["UNSUPPORTED"]}
		if got != totals {
			t.Errorf("the grid has %v cells passed, failed and skipped; summary.txt says %v", got, totals)
		}
		fails := 0
		for _, d := range details {
			if d.Class == "FAIL" {
				fails++
				if strings.TrimSpace(d.Message) == "" {
					t.Errorf("a FAIL shows no message")
				}
			}
		}
		if fails < cells["FAIL"] {
			t.Errorf("%d FAIL cells, but %d FAILs with their message on the page", cells["FAIL"], fails)
		}
		checkClauses(t, dir, details)
	}
	if want, ok := claimedFigures(dir); ok {
		for _, v := range want {
			if !contains(bars, v) {
				t.Errorf("claims.json's figure %v is no bar of the page's charts (%v)", v, bars)
			}
		}
	}
}

// detail is a FAIL or UNRESOLVED as the page shows it.
type detail struct{ Class, Clause, Message string }

// run runs one action that gives a value, failing the test on an error.
func run[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

var closingRE = regexp.MustCompile(`(?m)^(\d+) passed, (\d+) failed, (\d+) skipped$`)

// closingLine is the counts of summary.txt beside the page, if it has one.
func closingLine(dir string) ([3]int, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "summary.txt"))
	if err != nil {
		return [3]int{}, false
	}
	m := closingRE.FindAllStringSubmatch(string(b), -1)
	if m == nil {
		return [3]int{}, false
	}
	last := m[len(m)-1]
	var out [3]int
	for i := range out {
		out[i], _ = strconv.Atoi(last[i+1])
	}
	return out, true
}

// clauseMarkRE is a clause a failure message names first.
var clauseMarkRE = regexp.MustCompile(`-- \[((?:SM|BASE)-[A-Z]+-\d+\.\d+)\]`)

// checkClauses holds the page to summary.txt: every clause a FAIL names
// there is shown as that FAIL's clause.
func checkClauses(t *testing.T, dir string, details []detail) {
	b, _ := os.ReadFile(filepath.Join(dir, "summary.txt"))
	for _, m := range clauseMarkRE.FindAllStringSubmatch(string(b), -1) {
		found := false
		for _, d := range details {
			found = found || d.Clause == m[1]
		}
		if !found {
			t.Errorf("summary.txt names the clause %s, which no FAIL on the page shows", m[1])
		}
	}
}

// claimedFigures are the figures claims.json beside the page holds.
func claimedFigures(dir string) ([]float64, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "claims.json"))
	if err != nil {
		return nil, false
	}
	var r claims.Report
	if json.Unmarshal(b, &r) != nil {
		return nil, false
	}
	var out []float64
	for _, c := range r.Claims {
		if c.Value != 0 && c.ClaimedValue != 0 {
			out = append(out, c.Value)
		}
	}
	return out, true
}

// contains says whether xs holds v, to the three digits a chart shows.
func contains(xs []float64, v float64) bool {
	for _, x := range xs {
		if math.Abs(x-v) <= 0.006*math.Max(1, math.Abs(v)) {
			return true
		}
	}
	return false
}
