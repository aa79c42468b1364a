// SPDX-License-Identifier: GPL-2.0-only

package reply

import (
	"bytes"
	"io"
	"mime"
	"net/mail"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/apt"
	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kchoice"
	"github.com/ftrace-stackmap/conformance/internal/kernels/korigin"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

const tester = "Tëss Tester <tess@example.net>"

// series makes a made-up series of two patches with a cover letter, as
// git format-patch posts it, and returns its mbox.
func series(t *testing.T) []byte {
	dir := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=Ada Author", "-c", "user.email=ada@example.org"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(text string) {
		if err := os.WriteFile(filepath.Join(dir, "map.c"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	write("int map;\n")
	git("add", ".")
	git("commit", "-qm", "base")
	write("int map;\nint ids;\n")
	git("commit", "-qam", "trace: add stack ids", "-m", "Signed-off-by: Ada Author <ada@example.org>")
	write("int map;\nint ids;\nint stat;\n")
	git("commit", "-qam", "trace: count the map's entries", "-m", "Signed-off-by: Ada Author <ada@example.org>")
	git("format-patch", "-q", "--cover-letter", "--thread", "--subject-prefix=PATCH v2", "-o", "out",
		"--to=Trace List <trace@lists.example.org>", "--cc=Bob Reviewer <bob@example.com>", "HEAD~2")
	var mbox []byte
	names, _ := filepath.Glob(filepath.Join(dir, "out", "*.patch"))
	for _, n := range names {
		data, _ := os.ReadFile(n)
		data = bytes.Replace(data, []byte("*** SUBJECT HERE ***"), []byte("trace: stack ids"), 1)
		data = bytes.Replace(data, []byte("*** BLURB HERE ***"), []byte("Stack ids in the trace, and a count of them."), 1)
		mbox = append(mbox, data...)
	}
	return mbox
}

var (
	passSpec = report.Spec{Name: "default.SM-OPT-01", Boot: "default", Text: "the stackmap option [SM-OPT-01] round-trips", IDs: []string{"SM-OPT-01"}, Class: contract.Pass}
	failSpec = report.Spec{Name: "default.SM-RESET-01", Boot: "default", Text: "resetting the map [SM-RESET-01] refuses a reset while tracing is on",
		IDs: []string{"SM-RESET-01"}, Class: contract.Fail, Message: "write \"0\" to stack_map with tracing on: accepted"}
)

// run is a finished x86_64 run of a kernel built from the series.
func run(specs ...report.Spec) *results.Result {
	return &results.Result{
		Request: results.Request{Arch: arch.MustLookup("x86_64"), Choice: kchoice.Choice{Image: "stackmap-v2"}, Profile: contract.ProfileV4, Seed: 7},
		Entry:   "stackmap-v2",
		Origin:  korigin.Origin{Tree: "https://git.example.org/linux.git", Commit: strings.Repeat("ab", 20), Describe: "v6.12", Series: "cover@example.org"},
		Machine: "QEMU emulator version 7.2.22 -M q35 -cpu qemu64",
		Summary: report.Summary{Specs: specs, Succeeded: true, Kernel: "6.12.0-stackmap #1 SMP x86_64"},
	}
}

// write writes the reply for res to the series in a new directory.
func write(t *testing.T, mbox []byte, res *results.Result) []byte {
	dir := t.TempDir()
	path, err := Write(dir, mbox, "", FromRun(res), tester)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestReplyHeadersAndBody(t *testing.T) {
	mbox := series(t)
	h, err := FindHead(mbox, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.Subject, "0/2") {
		t.Fatalf("head %q, want the cover letter", h.Subject)
	}
	for name, c := range map[string]struct {
		res     *results.Result
		trailer bool
	}{"pass": {run(passSpec), true}, "fail": {run(passSpec, failSpec), false}} {
		data := write(t, mbox, c.res)
		m, err := mail.ReadMessage(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: net/mail: %v", name, err)
		}
		hd := m.Header
		if got := hd.Get("In-Reply-To"); got != "<"+h.MessageID+">" {
			t.Errorf("%s: In-Reply-To %q", name, got)
		}
		if got := hd.Get("Subject"); got != "Re: "+h.Subject {
			t.Errorf("%s: Subject %q", name, got)
		}
		from, _ := hd.AddressList("From")
		to, _ := hd.AddressList("To")
		cc, _ := hd.AddressList("Cc")
		if len(from) != 1 || from[0].Name != "Tëss Tester" || len(to) != 1 || to[0].Address != "ada@example.org" || len(cc) != 2 {
			t.Errorf("%s: From %v To %v Cc %v", name, from, to, cc)
		}
		if hd.Get("Message-ID") == "" || hd.Get("Date") == "" || hd.Get("Content-Type") != "text/plain; charset=UTF-8" {
			t.Errorf("%s: headers %v", name, hd)
		}
		body, _ := io.ReadAll(m.Body)
		for _, l := range strings.Split(string(body), "\n") {
			if len([]rune(l)) > report.Width && !strings.HasPrefix(l, "  make ") {
				t.Errorf("%s: line wider than %d: %q", name, report.Width, l)
			}
		}
		if got := strings.Contains(string(body), "\nTested-by: Tëss Tester <tess@example.net>\n"); got != c.trailer {
			t.Errorf("%s: trailer %v, want %v:\n%s", name, got, c.trailer, body)
		}
		if !c.trailer && !strings.Contains(strings.SplitN(string(body), "\n\n", 2)[0], "no Tested-by") {
			t.Errorf("%s: the first paragraph does not say why there is no trailer:\n%s", name, body)
		}
	}
}

// TestPythonReadsHeaders reads the reply back with Python's email parser.
func TestPythonReadsHeaders(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	data := write(t, series(t), run(passSpec))
	path := filepath.Join(t.TempDir(), File)
	os.WriteFile(path, data, 0o644)
	script := `import sys, email, email.policy
m = email.message_from_binary_file(open(sys.argv[1], "rb"), policy=email.policy.default)
for h in ("From", "To", "Subject", "In-Reply-To"):
    print(h + ": " + str(m[h]))
print(m.get_content_type(), m.get_content_charset())`
	out, err := exec.Command("python3", "-c", script, path).CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	m, _ := mail.ReadMessage(bytes.NewReader(data))
	subj, _ := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	for _, want := range []string{"From: " + tester, "Subject: " + subj, "In-Reply-To: " + m.Header.Get("In-Reply-To"), "text/plain utf-8"} {
		if !strings.Contains(string(out), want+"\n") {
			t.Errorf("python reads %q, want a line %q", out, want)
		}
	}
}

// TestSendEmailDryRun has git send-email read the reply without sending.
func TestSendEmailDryRun(t *testing.T) {
	if err := apt.Ensure(io.Discard, apt.Need{Program: "git-send-email", Path: "/usr/lib/git-core/git-send-email", Package: "git-email"},
		// Only recommended by git-email, which apt leaves out here, yet
		// git send-email will not start without it.
		apt.Need{Program: "Mail::Address", Path: "/usr/share/perl5/Mail/Address.pm", Package: "libmailtools-perl"}); err != nil {
		t.Skipf("git send-email is not installable here: %v", err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, File)
	os.WriteFile(path, write(t, series(t), run(passSpec)), 0o644)
	cmd := exec.Command("git", "send-email", "--dry-run", "--confirm=never", "--smtp-server=/bin/true", "--from="+tester, "--to=ada@example.org", path)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git send-email --dry-run: %v\n%s", err, out)
	}
	t.Logf("%s", out)
	if !bytes.Contains(out, []byte("Dry-OK. Log says:")) || !bytes.Contains(out, []byte("In-Reply-To: <cover.")) {
		t.Errorf("git send-email --dry-run:\n%s", out)
	}
}

// TestB4CollectsTrailer has b4 am apply the series followed by the reply:
// a passing run's Tested-by lands on every patch, a failing run's adds none.
func TestB4CollectsTrailer(t *testing.T) {
	if err := apt.Ensure(io.Discard, apt.Need{Program: "b4", Package: "b4"}); err != nil {
		t.Skipf("b4 is not installable here: %v", err)
	}
	mbox := series(t)
	for name, c := range map[string]struct {
		res  *results.Result
		want int
	}{"pass": {run(passSpec), 2}, "fail": {run(passSpec, failSpec), 0}} {
		dir := t.TempDir()
		thread := append(append(append([]byte{}, mbox...), "From reply@z Thu Jan  1 00:00:00 1970\n"...), write(t, mbox, c.res)...)
		os.WriteFile(filepath.Join(dir, "thread.mbox"), thread, 0o644)
		os.Mkdir(filepath.Join(dir, "out"), 0o755) // b4 makes no directory for -n's file
		// -t: trailers sent to the cover letter go to every patch.
		cmd := exec.Command("b4", "--offline-mode", "am", "-t", "-m", "thread.mbox", "-o", "out", "-n", "series")
		cmd.Dir = dir
		// b4 wants a git identity (it stops silently without one): the
		// user's is kept, and one is given where there is none.
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+dir, "GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=Maintainer",
			"GIT_CONFIG_KEY_1=user.email", "GIT_CONFIG_VALUE_1=maintainer@example.org")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: b4 am: %v\n%s", name, err, out)
		}
		t.Logf("%s: b4 am:\n%s", name, out)
		applied, err := os.ReadFile(filepath.Join(dir, "out", "series.mbx"))
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.Count(applied, []byte("\nTested-by: Tëss Tester <tess@example.net>\n")); got != c.want {
			t.Errorf("%s: %d patches carry the Tested-by, want %d:\n%s", name, got, c.want, applied)
		}
	}
}

// A run whose kernel log did not arrive earns no Tested-by: its kernel-log
// check is an UNRESOLVED failure of the reply, named with its boot.
func TestKernelLogMissingIsUnresolved(t *testing.T) {
	res := run(passSpec)
	res.KernelLogs = []results.KernelLog{{Boot: "bits-12", Missing: true}}
	r := FromRun(res)
	fs := r.Runs[0].Failures
	if len(fs) != 1 || fs[0].Class != contract.Unresolved || !strings.HasPrefix(fs[0].Observed, "boot bits-12: no kernel log arrived") {
		t.Fatalf("failures %+v, want the kernel log UNRESOLVED", fs)
	}
	// Tested goes by the class, whatever the verdict says.
	r.Runs[0].Passed = true
	ok, why := r.Tested()
	t.Logf("no Tested-by: %s", why)
	if ok || why != "the x86_64 run left kernel log UNRESOLVED" {
		t.Errorf("Tested() = %v, %q; want no trailer for the kernel log", ok, why)
	}
}

// TestFailureNamesTheClause: a FAIL whose message names the clause it
// broke is listed under that clause, the message after it.
func TestFailureNamesTheClause(t *testing.T) {
	spec := failSpec
	spec.Message = "[SM-RESET-01.1] writing 0 to stack_map with tracing_on=1: got success, want EBUSY"
	body := Body(FromRun(run(passSpec, spec)), &mail.Address{Name: "Tess", Address: "tess@example.net"})
	for _, want := range []string{"\n  FAIL SM-RESET-01.1 (x86_64): reset while", "\n    observed: writing 0 to stack_map"} {
		if !strings.Contains(body, want) {
			t.Errorf("reply:\n%s\nwant a line starting %q", body, want)
		}
	}
	if body := Body(FromRun(run(passSpec, failSpec)), &mail.Address{Address: "tess@example.net"}); !strings.Contains(body, "  FAIL SM-RESET-01 (x86_64): ") {
		t.Errorf("a FAIL naming no clause is not listed under its requirement:\n%s", body)
	}
}

// A reply of a run of a sanitized kernel says so in what was tested, and
// its command makes the run again sanitized.
func TestSanitizedRunSaysSo(t *testing.T) {
	res := run(passSpec)
	res.Request.Lane, res.Sanitized = kchoice.Sanitized, "sanitized (debug.config)"
	body := Body(FromRun(res), &mail.Address{Address: "tess@example.net"})
	for _, want := range []string{"\n  config   sanitized (debug.config)\n", " SANITIZE=1 "} {
		if !strings.Contains(body, want) {
			t.Errorf("reply:\n%s\nwant %q", body, want)
		}
	}
	if body := Body(FromRun(run(passSpec)), &mail.Address{Address: "tess@example.net"}); strings.Contains(body, "sanitized") || strings.Contains(body, "SANITIZE") {
		t.Errorf("a plain run's reply speaks of the sanitized lane:\n%s", body)
	}
}
