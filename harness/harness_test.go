// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	"golang.org/x/sys/unix"

	"github.com/ftrace-stackmap/conformance/initramfs/guest"
	"github.com/ftrace-stackmap/conformance/internal/contract"
)

// fakeTraceFS lays out regular files shaped like a tracefs root.
func fakeTraceFS(t *testing.T) *TraceFS {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"trace":                "# tracer: nop\n",
		"current_tracer":       "nop\n",
		"tracing_on":           "1\n",
		"trace_clock":          "[local] global counter uptime\n",
		"buffer_size_kb":       "7 (expanded: 1408)\n",
		"options/stacktrace":   "0\n",
		"options/sym-offset":   "1\n",
		"set_event":            "",
		"set_ftrace_filter":    "#### all functions enabled ####\n",
		"instances/theirs/foo": "",
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &TraceFS{Root: root}
}

func TestReadWriteKeepErrno(t *testing.T) {
	tfs := fakeTraceFS(t)
	if err := tfs.Write("tracing_on", "0"); err != nil {
		t.Fatal(err)
	}
	if got, _ := tfs.ReadTrimmed("tracing_on"); got != "0" {
		t.Fatalf("ReadTrimmed(tracing_on) = %q, want 0", got)
	}
	n, err := tfs.WriteBytes("tracing_on", nil, os.O_TRUNC)
	if n != 0 || err != nil {
		t.Fatalf("WriteBytes(empty) = %d, %v; want 0, nil", n, err)
	}
	err = tfs.Write("options", "1") // a directory
	if !errors.Is(err, unix.EISDIR) || Errno(err) != unix.EISDIR {
		t.Fatalf("Write(directory) = %v, want EISDIR kept", err)
	}
	if Errno(errors.New("plain")) != 0 {
		t.Fatalf("Errno(non-errno) != 0")
	}
}

func TestStat(t *testing.T) {
	tfs := fakeTraceFS(t)
	os.Chmod(tfs.Path("trace"), 0o640)
	info, err := tfs.Stat("trace")
	if err != nil || info.Perm != 0o640 || info.UID != uint32(os.Getuid()) {
		t.Fatalf("Stat(trace) = %+v, %v; want 0640 owned by us", info, err)
	}
}

func TestRestorePutsBackEverything(t *testing.T) {
	tfs := fakeTraceFS(t)
	snap, err := tfs.Save()
	if err != nil {
		t.Fatal(err)
	}
	tfs.Write("current_tracer", "function")
	tfs.Write("options/stacktrace", "1")
	tfs.Write("buffer_size_kb", "64")
	tfs.Write("set_event", "sched:sched_switch\n")
	tfs.Write("set_ftrace_filter", "schedule\n")
	tfs.Write("trace_clock", "counter")
	os.Mkdir(tfs.Path("instances/ours"), 0o755)
	if d := snap.Drift(); len(d) != 7 {
		t.Fatalf("Drift() before restore = %q, want 7 differences", d)
	}
	if err := snap.Restore(); err != nil {
		t.Fatalf("Restore() = %v", err)
	}
	if d := snap.Drift(); len(d) != 0 {
		t.Fatalf("Drift() after restore = %q, want none", d)
	}
	if !tfs.Exists("instances/theirs") || tfs.Exists("instances/ours") {
		t.Fatalf("Restore() must remove only the instances made after Save()")
	}
	if got, _ := tfs.ReadTrimmed("trace_clock"); got != "local" {
		t.Fatalf("trace_clock = %q, want local written back", got)
	}
	if got, _ := tfs.ReadTrimmed("buffer_size_kb"); got != "1408" {
		t.Fatalf("buffer_size_kb = %q, want the expanded size 1408", got)
	}
}

func TestBufferSizeRounding(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{{"1410", "7 (expanded: 1408)", true}, {"1410", "1408", true}, {"64", "1408", false}} {
		if got := SameBufferSize(tc.a, tc.b); got != tc.same {
			t.Errorf("SameBufferSize(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}

func TestNeeds(t *testing.T) {
	tfs := fakeTraceFS(t)
	os.WriteFile(tfs.Path("available_tracers"), []byte("function nop\n"), 0o644)
	if err := Probe(tfs, Node("trace"), Tracer("function")); err != nil {
		t.Fatalf("Probe(met needs) = %v", err)
	}
	err := Probe(tfs, Node("stack_map"), Tracer("function_graph"), Event("sched/sched_switch"))
	var lacks *UnsupportedFeatureError
	if !errors.Is(err, ErrNotSupported) || !errors.As(err, &lacks) {
		t.Fatalf("Probe(unmet needs) = %v, want an *UnsupportedFeatureError", err)
	}
	for _, want := range []string{"no stack_map", `tracer "function_graph"`, "no event sched/sched_switch"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Probe() = %q, want it to mention %q", err, want)
		}
	}
	// A probe that cannot read tracefs has not found anything missing.
	os.Mkdir(tfs.Path("README"), 0o755)
	err = Probe(tfs, Node("stack_map"), Readme("stackmap"))
	if errors.Is(err, ErrNotSupported) || !errors.Is(err, unix.EISDIR) {
		t.Fatalf("Probe(unreadable README) = %v, want the read's EISDIR and not ErrNotSupported", err)
	}
}

func TestRequirementRegistry(t *testing.T) {
	if got := contract.IDsOf([]string{"baseline", "SM-NODE-01", "BASE-ONOFF-01"}); strings.Join(got, ",") != "SM-NODE-01,BASE-ONOFF-01" {
		t.Fatalf("contract.IDsOf() = %v", got)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "unknown requirement ID") {
			t.Fatalf("ReqIt(unknown ID) recovered %v, want an unknown-ID panic", r)
		}
	}()
	ReqIt("SM-NOPE-99", "does nothing", func() {})
}

func TestInUse(t *testing.T) {
	tfs := fakeTraceFS(t)
	snap, _ := tfs.Save()
	if got := snap.InUse(); got != "instances theirs" {
		t.Fatalf("InUse() = %q, want the instance named", got)
	}
	os.Remove(tfs.Path("instances/theirs/foo"))
	os.Remove(tfs.Path("instances/theirs"))
	tfs.Write("current_tracer", "function\n")
	snap, _ = tfs.Save()
	if got := snap.InUse(); got != "current_tracer=function" {
		t.Fatalf("InUse() = %q, want the tracer named", got)
	}
}

func TestStoppedWritesAreRefusedButRestoreWrites(t *testing.T) {
	tfs := fakeTraceFS(t)
	snap, _ := tfs.Save()
	tfs.Write("tracing_on", "0")
	stopSpecWrites()
	t.Cleanup(func() { specWrites.Lock(); specWrites.stopped = false; specWrites.Unlock() })
	// An abandoned spec body writing after the restore gets an error and
	// ends; the restore's own writes go through.
	if err := tfs.Write("current_tracer", "function"); !errors.Is(err, ErrWritesStopped) {
		t.Fatalf("a spec write after stopSpecWrites = %v, want ErrWritesStopped", err)
	}
	if err := snap.Restore(); err != nil {
		t.Fatalf("Restore() after stopSpecWrites = %v", err)
	}
	if d := snap.Drift(); len(d) != 0 {
		t.Fatalf("Drift() = %q, want none", d)
	}
}

func TestKernelUint(t *testing.T) {
	for s, want := range map[string]int64{"12": 12, "0x10": 16, "010": 8, "30": 30, "many": -1, "": -1, "+5": -1, "1_0": -1, "-1": -1} {
		n, ok := KernelUint(s)
		if got := int64(n); !ok {
			got = -1
		} else if got != want {
			t.Errorf("KernelUint(%q) = %d, want %d", s, got, want)
		}
		if !ok && want != -1 {
			t.Errorf("KernelUint(%q) refused a number", s)
		}
	}
}

func TestLines(t *testing.T) {
	opts := "print-parent\nnostackmap\n"
	if !HasLine(opts, "nostackmap") || HasLine(opts, "stackmap") {
		t.Errorf("HasLine matches parts of lines or misses whole ones")
	}
	format := "name: stack_id\n\tfield:unsigned short common_type;\toffset:0;\n\tfield:int stack_id;\toffset:8;\n"
	if !FieldDeclared(format, "int stack_id") || FieldDeclared(format, "int stack") {
		t.Errorf("FieldDeclared does not read the format's fields")
	}
}

// ReadUnderLoad's readers stop however its work ends: a failed assertion
// (a panic, as Ginkgo's Fail is) leaves none running.
func TestReadUnderLoadLeavesNoReaderBehind(t *testing.T) {
	tfs := fakeTraceFS(t)
	before := runtime.NumGoroutine()
	ok := func(string, []byte) error { return nil }
	func() {
		defer func() { recover() }()
		ReadUnderLoad(context.Background(), tfs, 4, false, []string{"trace"}, ok, func(func() int) {
			time.Sleep(20 * time.Millisecond)
			panic("a failed assertion")
		})
	}()
	problems, reads := ReadUnderLoad(context.Background(), tfs, 2, false, []string{"trace", "nosuch"}, ok, func(reads func() int) {
		for reads() < 10 {
			time.Sleep(time.Millisecond)
		}
	})
	if reads < 10 || len(problems) == 0 || !strings.Contains(problems[0], "nosuch") {
		t.Errorf("ReadUnderLoad() = %d reads, problems %q; want reads and the missing node", reads, problems)
	}
	// The runtime may take a moment to retire a goroutine that returned.
	for i := 0; runtime.NumGoroutine() > before && i < 100; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Fatalf("%d goroutines after, %d before: readers left running", after, before)
	}
}

func TestKallsymsLookup(t *testing.T) {
	k := parseKallsyms("" +
		"ffffffff81000200 T second\n" +
		"ffffffff81000100 T first\n" +
		"ffffffff81000100 t first_alias\n" +
		"0000000000000000 A hidden\n" +
		"ffffffffc0001000 t mod_func\t[some_mod]\n" +
		"garbage\n" +
		"ffffffff81000300 D last")
	for _, tc := range []struct {
		addr  uint64
		base  uint64
		names []string
	}{
		{0xffffffff81000050, 0, nil},
		{0xffffffff81000100, 0xffffffff81000100, []string{"first", "first_alias"}},
		{0xffffffff810001ff, 0xffffffff81000100, []string{"first", "first_alias"}},
		{0xffffffff81000210, 0xffffffff81000200, []string{"second"}},
		{0xffffffff81000300, 0xffffffff81000300, []string{"last"}},
		{0xffffffffc0001004, 0xffffffffc0001000, []string{"mod_func"}},
	} {
		base, names := k.Lookup(tc.addr)
		if base != tc.base || !slices.Equal(names, tc.names) {
			t.Errorf("Lookup(%#x) = %#x %q, want %#x %q", tc.addr, base, names, tc.base, tc.names)
		}
	}
	if parseKallsyms("0000000000000000 T hidden\n0000000000000000 t also\n") != nil {
		t.Error("a kallsyms with its addresses hidden gave symbols")
	}
}

// `go test ./...` runs the suite with no label filter, outside the guest:
// it must not run the specs on this machine. The host's dry run, which
// lists the specs before any boot, runs none and must not be refused.
func TestAskedOnlyWithAFilterOrInTheGuest(t *testing.T) {
	if _, err := os.Stat(guest.RunConfigPath); err == nil {
		t.Skip("this is the guest")
	}
	if Asked(types.SuiteConfig{}) {
		t.Errorf("Asked(no filter) outside the guest = true")
	}
	if !Asked(types.SuiteConfig{LabelFilter: "!needs-boot && !stress"}) {
		t.Errorf("Asked(live mode's filter) = false")
	}
	if !Asked(types.SuiteConfig{DryRun: true}) {
		t.Errorf("Asked(the host's dry run) = false: the specs could not be listed")
	}
}

func TestCPUStats(t *testing.T) {
	tfs := fakeTraceFS(t)
	for cpu, text := range []string{
		"entries: 12\noverrun: 3\ncommit overrun: 9\nbytes: 640\noldest event ts:    41.000001\nnow ts:    42.5\ndropped events: 1\nread events: 0\n",
		"entries: 0\noverrun: 0\ndropped events: 0\n",
	} {
		dir := tfs.Path(fmt.Sprintf("per_cpu/cpu%d", cpu))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "stats"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := []BufferStats{{Entries: 12, Overrun: 3, Dropped: 1}, {}}
	if got := CPUStats(tfs); !slices.Equal(got, want) {
		t.Errorf("CPUStats() = %+v, want %+v", got, want)
	}
}
