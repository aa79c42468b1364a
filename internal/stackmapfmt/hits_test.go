// SPDX-License-Identifier: GPL-2.0-only

package stackmapfmt

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// entry is one ring-buffer entry line as trace prints it.
func hitEntry(cpu, pid int, ts uint64, body string) string {
	return fmt.Sprintf("     suites.test-%d     [%03d] .....  %d: %s\n", pid, cpu, ts, body)
}

// fullStack is a <stack trace> entry with sym-addr's addresses.
func hitStack(cpu, pid int, ts uint64, addrs ...uint64) string {
	s := hitEntry(cpu, pid, ts, "<stack trace>")
	for _, a := range addrs {
		s += fmt.Sprintf(" => fn_%x <%016x>\n", a, a)
	}
	return s
}

func TestParseHitsAttachesEachStackToItsEvent(t *testing.T) {
	text := "# tracer: nop\n#\n" +
		hitEntry(0, 40, 101, "sched_process_fork: comm=suites.test pid=40 child_pid=57") +
		hitEntry(1, 41, 102, "sched_process_exec: filename=/w pid=41 old_pid=41") +
		hitEntry(0, 40, 103, "<stack_id 7>") +
		hitStack(1, 41, 104, 0xffff800080001000, 0xffff800080002000) +
		hitEntry(0, 40, 105, "function_name <ffff800080003000> <-caller <ffff800080004000>")
	hits := ParseHits(text)
	if len(hits) != 3 {
		t.Fatalf("got %d hits, want 3: %+v", len(hits), hits)
	}
	if hits[0].ID != 7 || hits[0].Stack != nil || hits[0].CPU != 0 || hits[0].Stamp != 101 {
		t.Errorf("fork: %+v, want id 7 on CPU 0 at 101", hits[0])
	}
	if hits[1].ID != -1 || len(hits[1].Stack) != 2 || hits[1].Stack[1].Addr != 0xffff800080002000 || hits[1].Stack[1].Text != "fn_ffff800080002000" {
		t.Errorf("exec: %+v, want the two-frame stack", hits[1])
	}
	if want := "40 function_name <-caller"; hits[2].Key != want {
		t.Errorf("key %q, want %q: sym-addr's addresses are not the event's", hits[2].Key, want)
	}
	if got := ParseHits(hitEntry(0, 40, 0, "x: y")[:0] + "     suites.test-40     [000] .....  12.000345: x: y\n"); len(got) != 1 || got[0].Stamp != 12000345 {
		t.Errorf("seconds.microseconds: %+v", got)
	}
}

func TestPairHitsFindsTheOrderAndNestedHits(t *testing.T) {
	const a, b = 0xffff800080001000, 0xffff800080002000
	event := "vfs_read <-ksys_read"
	irq := "tick_handle <-irq"
	for _, topFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("top first %v", topFirst), func(t *testing.T) {
			var top, twin strings.Builder
			ts := uint64(0)
			// rec writes one hit to both buffers, in the recording's order.
			rec := func(body string, id int, addrs ...uint64) {
				write := []func(){
					func() {
						ts += 2
						top.WriteString(hitEntry(0, 9, ts-1, body) + hitEntry(0, 9, ts, fmt.Sprintf("<stack_id %d>", id)))
					},
					func() { ts += 2; twin.WriteString(hitEntry(0, 9, ts-1, body) + hitStack(0, 9, ts, addrs...)) },
				}
				if !topFirst {
					write[0], write[1] = write[1], write[0]
				}
				write[0]()
				write[1]()
			}
			// The twin was on first: a hit only it saw.
			ts += 2
			twin.WriteString(hitEntry(0, 9, ts-1, event) + hitStack(0, 9, ts, b))
			rec(event, 1, a)
			rec(event, 1, a)
			// An interrupt's hit of the same key between the two records.
			ts += 2
			first := hitEntry(0, 9, ts-1, event) + hitEntry(0, 9, ts, "<stack_id 1>")
			firstTwin := hitEntry(0, 9, ts-1, event) + hitStack(0, 9, ts, a)
			if topFirst {
				top.WriteString(first)
			} else {
				twin.WriteString(firstTwin)
			}
			rec(event, 2, b)
			rec(irq, 3, b, a)
			ts += 2
			if topFirst {
				twin.WriteString(hitEntry(0, 9, ts-1, event) + hitStack(0, 9, ts, a))
			} else {
				top.WriteString(hitEntry(0, 9, ts-1, event) + hitEntry(0, 9, ts, "<stack_id 1>"))
			}
			pairs := PairHits(ParseHits(top.String()), ParseHits(twin.String()))
			if len(pairs) != 5 {
				t.Fatalf("%d pairs, want 5", len(pairs))
			}
			bin := Bin{Records: []Record{{ID: 1, Addrs: []uint64{a}}, {ID: 2, Addrs: []uint64{b}}, {ID: 3, Addrs: []uint64{b, a}}}}
			if judged, err := CheckIdentity(pairs, bin, nil); judged != 5 || err != nil {
				t.Errorf("judged %d, %v; want 5 and no error", judged, err)
			}
		})
	}
}

func TestCheckIdentityNamesTheBlockThatHoldsTheStack(t *testing.T) {
	const a, b = 0xffff800080001000, 0xffff800080002000
	top := ParseHits(hitEntry(0, 9, 1, "sched_process_exec: pid=9") + hitEntry(0, 9, 2, "<stack_id 1>"))
	twin := ParseHits(hitEntry(0, 9, 3, "sched_process_exec: pid=9") + hitStack(0, 9, 4, b, a))
	pairs := PairHits(top, twin)
	bin := Bin{Records: []Record{{ID: 1, Addrs: []uint64{a, b}}, {ID: 5, Addrs: []uint64{b, a}}}}
	judged, err := CheckIdentity(pairs, bin, nil)
	if judged != 1 || err == nil || !strings.Contains(err.Error(), "<stack_id 1>") || !strings.Contains(err.Error(), "the event's stack is block 5") {
		t.Fatalf("judged %d, %v; want the wrong id and block 5 named", judged, err)
	}
	// A trampoline frame stands for the marker.
	twin = ParseHits(hitEntry(0, 9, 3, "sched_process_exec: pid=9") + hitEntry(0, 9, 4, "<stack trace>") + " => [FTRACE TRAMPOLINE]\n" + fmt.Sprintf(" => x <%016x>\n", uint64(a)))
	bin = Bin{Records: []Record{{ID: 1, Addrs: []uint64{TrampolineMarker, a}}}}
	if _, err := CheckIdentity(PairHits(top, twin), bin, nil); err != nil {
		t.Errorf("trampoline: %v", err)
	}
	// Hits only one buffer has, and ids naming no record, are not judged.
	if judged, err := CheckIdentity(PairHits(top, nil), bin, nil); judged != 0 || err != nil {
		t.Errorf("no twin: judged %d, %v", judged, err)
	}
	if judged, _ := CheckIdentity(pairs, Bin{}, nil); judged != 0 {
		t.Errorf("no record: judged %d", judged)
	}
}

func TestCheckIdentityBlamesTheBinaryExportWhenTheTextIsTheStack(t *testing.T) {
	const a, b = 0xffff800080001000, 0xffff800080002000
	top := ParseHits(hitEntry(0, 9, 1, "sched_process_exec: pid=9") + hitEntry(0, 9, 2, "<stack_id 1>"))
	twin := ParseHits(hitEntry(0, 9, 3, "sched_process_exec: pid=9") + hitEntry(0, 9, 4, "<stack trace>") +
		fmt.Sprintf(" => f+0x10/0x40 <%016x>\n => g+0x8/0x20 <%016x>\n", uint64(a), uint64(b)))
	bin := Bin{Records: []Record{{ID: 1, Addrs: []uint64{a + 1<<20, b + 1<<20}}}}
	for _, c := range []struct {
		name   string
		frames []string
		bin    bool // the binary export's fault, not the id's
	}{
		{"the text is the stack", []string{"f+0x10/0x40", "g+0x8/0x20"}, true},
		{"bare symbols", []string{"f", "g [mod]"}, true},
		{"another offset", []string{"f+0x14/0x40", "g+0x8/0x20"}, false},
		{"another stack", []string{"h+0x10/0x40", "g+0x8/0x20"}, false},
	} {
		blocks := []Block{{ID: 1, Ref: 1, Depth: 2, Frames: c.frames}}
		_, err := CheckIdentity(PairHits(top, twin), bin, blocks)
		var be *BinError
		if err == nil || errors.As(err, &be) != c.bin {
			t.Errorf("%s: %v, want the binary export blamed: %v", c.name, err, c.bin)
		}
	}
}

func TestCheckCallsHoldsFunctionEventsToTheirOwnFields(t *testing.T) {
	stack := func(names ...string) string {
		s := hitEntry(0, 9, 0, "<stack trace>")
		for i, n := range names {
			s += fmt.Sprintf(" => %s+0x4/0x40 <%016x>\n", n, 0xffff800080000000+uint64(i))
		}
		return s
	}
	twin := ParseHits(hitEntry(0, 9, 1, "vfs_read+0x4/0x40 <ffff800080001000> <-ksys_read+0x6c/0x100 <ffff800080002000>") +
		stack("[FTRACE TRAMPOLINE]", "vfs_read", "ksys_read", "do_syscall"))
	top := ParseHits(hitEntry(0, 9, 5, "vfs_read <-ksys_read") + hitEntry(0, 9, 6, "<stack_id 7>"))
	right := []Block{{ID: 7, Ref: 1, Depth: 4, Frames: []string{"[FTRACE TRAMPOLINE]", "vfs_read+0x4/0x40", "ksys_read+0x6c/0x100", "do_syscall+0x1/0x2"}}}
	wrong := []Block{{ID: 7, Ref: 1, Depth: 3, Frames: []string{"[FTRACE TRAMPOLINE]", "vfs_write+0x4/0x40", "ksys_write+0x6c/0x100"}}}
	if judged, err := CheckCalls(top, twin, right); judged != 1 || err != nil {
		t.Errorf("right block: judged %d, %v", judged, err)
	}
	if judged, err := CheckCalls(top, twin, wrong); judged != 1 || err == nil {
		t.Errorf("another call's block: judged %d, %v; want an error", judged, err)
	}
	// A kernel whose own full stacks do not show the call gives no rule.
	odd := ParseHits(hitEntry(0, 9, 1, "vfs_read <-ksys_read") + stack("a", "b", "c", "d", "e"))
	if judged, err := CheckCalls(top, odd, wrong); judged != 0 || err != nil {
		t.Errorf("no rule: judged %d, %v", judged, err)
	}
}
