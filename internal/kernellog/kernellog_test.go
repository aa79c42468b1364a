// SPDX-License-Identifier: GPL-2.0-only

package kernellog

import (
	"slices"
	"strings"
	"testing"
)

// A boot's log as the init sends it: spec marks, a checker's report in
// each of two specs, one between them, and a leaked object that the scan
// after the second spec found, allocated in the first.
const log = `<6>[    0.000000] Booting Linux on physical CPU 0x0
<6>[    1.000000] ftrace_stackmap: 16384 entries
<6>[    9.000000] smct-spec: start default.SM-BIN-02 jiffies=4294900000
<3>[    9.100000] ==================================================================
<3>[    9.100001] BUG: KASAN: slab-use-after-free in stackmap_bin_read+0x1f4/0x230
<3>[    9.100002] Read of size 8 at addr ffff888004a1c010 by task smct-suite/93
<3>[    9.100003] 
<4>[    9.100004] CPU: 1 UID: 0 PID: 93 Comm: smct-suite Not tainted 6.12.57 #1
<4>[    9.100005] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996)
<4>[    9.100006] Call Trace:
<3>[    9.100100] ==================================================================
<6>[    9.500000] smct-spec: end default.SM-BIN-02 jiffies=4294900500
<4>[    9.600000] ------------[ cut here ]------------
<3>[    9.600001] ODEBUG: free active (active state 0) object: ffff88800 object type: timer_list hint: stackmap_timer+0x0/0x10
<4>[    9.600002] WARNING: CPU: 0 PID: 97 at lib/debugobjects.c:514 debug_print_object+0xd6/0x100
<4>[    9.600003] Modules linked in:
<6>[    9.700000] smct-spec: start default.SM-RESET-01.sleeper jiffies=4294900600
<4>[    9.800000] 
<4>[    9.800001] ======================================================
<4>[    9.800002] WARNING: possible circular locking dependency detected
<4>[    9.800003] 6.12.57 #1 Not tainted
<4>[    9.800004] ------------------------------------------------------
<4>[    9.800005] smct-suite/95 is trying to acquire lock:
<4>[    9.800006] ffffffff8260a0c8 (stackmap_lock){+.+.}-{3:3}, at: stackmap_reset+0x2c/0x90
<4>[    9.800007] 
<4>[    9.800008] but task is already holding lock:
<6>[   10.000000] smct-spec: end default.SM-RESET-01.sleeper jiffies=4294901100
<6>[   15.000000] kmemleak: 1 new suspected memory leaks (see /sys/kernel/debug/kmemleak)
<6>[   15.100000] smct-kmemleak: unreferenced object 0xffff888004b2c000 (size 4096):
<6>[   15.100001] smct-kmemleak:   comm "smct-suite", pid 93, jiffies 4294900300
<6>[   15.100002] smct-kmemleak:   hex dump (first 32 bytes):
<6>[   15.100003] smct-kmemleak:     00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00  ................
<6>[   15.100004] smct-kmemleak:   backtrace (crc 5a3b1c2d):
<6>[   15.100005] smct-kmemleak:     [<ffffffff812345a0>] __kmalloc_noprof+0x1c/0x30
<6>[   15.100006] smct-kmemleak:     [<ffffffff812346b0>] stackmap_bin_open+0x40/0x100
<6>[   15.100007] smct-kmemleak:     [<ffffffff812347c0>] do_dentry_open+0x1a0/0x4f0
`

func TestReportsNameKindLinesAndSpec(t *testing.T) {
	got := Reports([]byte(log))
	want := []Report{
		{"KASAN", []string{
			"BUG: KASAN: slab-use-after-free in stackmap_bin_read+0x1f4/0x230",
			"Read of size 8 at addr ffff888004a1c010 by task smct-suite/93",
			"CPU: 1 UID: 0 PID: 93 Comm: smct-suite Not tainted 6.12.57 #1",
			"Hardware name: QEMU Standard PC (i440FX + PIIX, 1996)",
		}, "while default.SM-BIN-02 ran", "default.SM-BIN-02"},
		{"debug-objects", []string{
			"ODEBUG: free active (active state 0) object: ffff88800 object type: timer_list hint: stackmap_timer+0x0/0x10",
			"WARNING: CPU: 0 PID: 97 at lib/debugobjects.c:514 debug_print_object+0xd6/0x100",
			"Modules linked in:",
		}, "after default.SM-BIN-02, between specs", ""},
		{"lockdep", []string{
			"WARNING: possible circular locking dependency detected",
			"6.12.57 #1 Not tainted",
			"smct-suite/95 is trying to acquire lock:",
			"ffffffff8260a0c8 (stackmap_lock){+.+.}-{3:3}, at: stackmap_reset+0x2c/0x90",
		}, "while default.SM-RESET-01.sleeper ran", "default.SM-RESET-01.sleeper"},
		{"kmemleak", []string{
			"unreferenced object 0xffff888004b2c000 (size 4096):",
			"__kmalloc_noprof+0x1c/0x30",
			"stackmap_bin_open+0x40/0x100",
			"do_dentry_open+0x1a0/0x4f0",
		}, "allocated while default.SM-BIN-02 ran", "default.SM-BIN-02"},
	}
	if len(got) != len(want) {
		t.Fatalf("Reports() = %d reports, want %d:\n%s", len(got), len(want), strings.Join(Problems([]byte(log)), "\n"))
	}
	for i := range want {
		if got[i].Kind != want[i].Kind || got[i].Where != want[i].Where || got[i].Spec != want[i].Spec || !slices.Equal(got[i].Lines, want[i].Lines) {
			t.Errorf("report %d = %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// A leak is named by the allocation's own frames, not kmemleak's.
func TestLeakStackLeavesOutKmemleaksFrames(t *testing.T) {
	log := "<6>[ 9.0] smct-kmemleak: unreferenced object 0xffff0000052c5aa0 (size 32):\n" +
		"<6>[ 9.0] smct-kmemleak:   backtrace (crc 1):\n" +
		"<6>[ 9.0] smct-kmemleak:     [<00000000ab>] create_object+0x18/0x20\n" +
		"<6>[ 9.0] smct-kmemleak:     [<00000000ab>] kmemleak_alloc+0x8c/0x9c\n" +
		"<6>[ 9.0] smct-kmemleak:     [<00000000ab>] kmemleak_alloc_recursive.constprop.0+0x14/0x20\n" +
		"<6>[ 9.0] smct-kmemleak:     [<00000000ab>] __kmalloc_node_noprof+0x184/0x21c\n" +
		"<6>[ 9.0] smct-kmemleak:     [<00000000ab>] stackmap_snapshot+0x1f4/0x300\n"
	got := Reports([]byte(log))
	want := "unreferenced object 0xffff0000052c5aa0 (size 32): | __kmalloc_node_noprof+0x184/0x21c | stackmap_snapshot+0x1f4/0x300"
	if len(got) != 1 || strings.Join(got[0].Lines, " | ") != want {
		t.Fatalf("Reports() = %+v\nwant lines %s", got, want)
	}
}

// Without the guest's list, the kernel's own kmemleak line is the report.
func TestKmemleakLineAloneIsAReport(t *testing.T) {
	got := Problems([]byte("<6>[    0.000000] Booting Linux\n<6>[ 700.0] kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)\n"))
	if len(got) != 1 || !strings.HasPrefix(got[0], "kmemleak report before the specs: kmemleak: 2 new") {
		t.Fatalf("Problems() = %q", got)
	}
}

// A report's first lines name code: the faulting bytes and the registers
// are left out, the function is kept.
func TestReportLinesLeaveOutMachineState(t *testing.T) {
	for _, c := range []struct{ log, want string }{
		{"[ 1.0] BUG: kernel NULL pointer dereference, address: 0000000000000008\n" +
			"[ 1.0] RIP: 0010:stackmap_insert+0x1c/0x80\n" +
			"[ 1.0] Code: 48 8b 47 08 <48> 8b 00 c3\n" +
			"[ 1.0] RSP: 0018:ffffc90000183d58 EFLAGS: 00010246\n" +
			"[ 1.0] RAX: 0000000000000000 RBX: ffff888004a1c000 RCX: 0000000000000001\n" +
			"[ 1.0] Call Trace:\n",
			"BUG: kernel NULL pointer dereference, address: 0000000000000008 | RIP: 0010:stackmap_insert+0x1c/0x80 | Call Trace:"},
		{"[ 1.0] Unable to handle kernel NULL pointer dereference at virtual address 0000000000000008\n" +
			"[ 1.0] pc : stackmap_insert+0x1c/0x80\n" +
			"[ 1.0] lr : stackmap_trace+0x40/0x90\n" +
			"[ 1.0] sp : ffff800080003e40\n" +
			"[ 1.0] x29: ffff800080003e40 x28: ffff0000c0a8e000 x27: 0000000000000000\n" +
			"[ 1.0] pstate: 60000005 (nZCv daif -PAN -UAO -TCO -DIT -SSBS BTYPE=--)\n",
			"Unable to handle kernel NULL pointer dereference at virtual address 0000000000000008 | pc : stackmap_insert+0x1c/0x80 | lr : stackmap_trace+0x40/0x90"},
	} {
		got := Reports([]byte(c.log))
		if len(got) != 1 || strings.Join(got[0].Lines, " | ") != c.want {
			t.Errorf("Reports() = %+v\nwant lines %s", got, c.want)
		}
	}
}

// Each kind a checker prints is named as that kind.
func TestKinds(t *testing.T) {
	for line, kind := range map[string]string{
		"BUG: KASAN: slab-out-of-bounds in stackmap_insert+0x1c/0x1a0":                     "KASAN",
		"UBSAN: array-index-out-of-bounds in kernel/trace/trace_stackmap.c:210:5":          "UBSAN",
		"BUG: KFENCE: out-of-bounds read in stackmap_seq_show+0x40/0x90":                   "KFENCE",
		"list_add corruption. next->prev should be prev (ffff8880), but was 0":             "list corruption",
		"WARNING: possible recursive locking detected":                                     "lockdep",
		"WARNING: bad unlock balance detected!":                                            "lockdep",
		"WARNING: suspicious RCU usage":                                                    "RCU",
		"rcu: INFO: rcu_preempt self-detected stall on CPU":                                "RCU",
		"INFO: task kworker/0:1:31 blocked for more than 120 seconds.":                     "hung task",
		"watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [swapper/0:1]":                  "lockup",
		"WARNING: CPU: 0 PID: 1 at kernel/trace/trace.c:123 foo+0x1/0x2":                   "warning",
		"BUG: sleeping function called from invalid context at kernel/locking/mutex.c:585": "oops",
		"Internal error: Oops: 0000000096000004 [#1] SMP":                                  "oops",
	} {
		got := Reports([]byte("[    5.000000] " + line + "\n"))
		if len(got) != 1 || got[0].Kind != kind {
			t.Errorf("Reports(%q) = %+v, want one %s report", line, got, kind)
		}
	}
}

// A checkpoint inside a spec places what it finds there, and a warning
// that repeats is listed once.
func TestCheckpointsAndRepeats(t *testing.T) {
	log := `<6>[ 1.0] smct-spec: start default.SM-RESET-04.workload
<4>[ 1.1] WARNING: CPU: 0 PID: 93 at kernel/trace/trace_stackmap.c:905 stackmap_wipe+0x4c/0x90
<6>[ 1.2] smct-spec: checkpoint
<3>[ 1.3] BUG: KASAN: slab-out-of-bounds in stackmap_fault_walk+0x30/0x50
<6>[ 1.4] smct-spec: resume
<6>[ 1.5] smct-spec: end default.SM-RESET-04.workload
<6>[ 2.0] smct-spec: start default.SM-RESET-05
<4>[ 2.1] WARNING: CPU: 1 PID: 97 at kernel/trace/trace_stackmap.c:905 stackmap_wipe+0x4c/0x90
`
	got := Problems([]byte(log))
	want := []string{
		"warning report while default.SM-RESET-04.workload ran: WARNING: CPU: 0 PID: 93 at kernel/trace/trace_stackmap.c:905 stackmap_wipe+0x4c/0x90 (and 1 more like it, the last while default.SM-RESET-05 ran)",
		"KASAN report at a checkpoint of default.SM-RESET-04.workload: BUG: KASAN: slab-out-of-bounds in stackmap_fault_walk+0x30/0x50",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Problems() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A log whose start the ring buffer overwrote does not say "before the
// specs" of a report whose marks went with it.
func TestLostHeadPlacesNothing(t *testing.T) {
	log := `<4>[   44.448156][   T47] Call Trace:
<4>[   44.515376][   T55] WARNING: CPU: 0 PID: 55 at kernel/trace/trace_stackmap.c:892 stackmap_wipe+0x55/0x1d9
<6>[   45.740022][   T43] smct-spec: end default.SM-RESET-01.sleeper jiffies=4294903301
<4>[   45.815376][   T55] WARNING: CPU: 0 PID: 55 at kernel/trace/trace_stackmap.c:892 stackmap_wipe+0x55/0x1d9
`
	got := Reports([]byte(log))
	if len(got) != 2 || got[0].Where != unplaced || got[1].Where != "after default.SM-RESET-01.sleeper, between specs" {
		t.Fatalf("Reports() = %+v", got)
	}
	if got := Reports([]byte("[    0.000000] Booting Linux\n[    5.0] WARNING: CPU: 0 PID: 1 at x\n")); len(got) != 1 || got[0].Where != "before the specs" {
		t.Fatalf("a whole log: %+v", got)
	}
}
