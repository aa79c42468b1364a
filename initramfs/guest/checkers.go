// SPDX-License-Identifier: GPL-2.0-only

package guest

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/kernellog"
)

// Kmemleak is kmemleak's file: present when the kernel has it on and
// debugfs is mounted.
const Kmemleak = "/sys/kernel/debug/kmemleak"

// KmemleakMinAge is how old an object must be before kmemleak reports
// it (the kernel's MSECS_MIN_AGE): a scan sooner misses it.
const KmemleakMinAge = 5 // seconds

// HasKmemleak says whether this kernel runs kmemleak.
func HasKmemleak() bool {
	_, err := os.Stat(Kmemleak)
	return err == nil
}

// SpecStarts and SpecEnds log a spec's start and end for the kernel-log
// reader (kernellog.SpecMark), which names the spec a report appeared in;
// with kmemleak on, the mark carries the jiffies that place an
// allocation. Only in a process the init started with MarksEnv set.
func SpecStarts(name string) { specMark("start", name) }

// SpecEnds: see SpecStarts.
func SpecEnds(name string) { specMark("end", name) }

// CheckpointStarts and CheckpointEnds log a checkpoint of the running
// spec: a report between them is placed at the checkpoint, which reads
// every export, and not in what the spec itself did.
func CheckpointStarts() { specMark("checkpoint", "") }

// CheckpointEnds: see CheckpointStarts.
func CheckpointEnds() { specMark("resume", "") }

func specMark(what, name string) {
	if os.Getenv(MarksEnv) != "1" {
		return
	}
	line := kernellog.SpecMark + what
	if name != "" {
		line += " " + name
	}
	if HasKmemleak() {
		if j, ok := jiffies(); ok {
			line += " jiffies=" + j
		}
	}
	writeKmsg(line)
}

// jiffies reads the kernel's jiffies from /proc/timer_list, the one file
// that shows them; kmemleak stamps an allocation with them.
func jiffies() (string, bool) {
	f, err := os.Open("/proc/timer_list")
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if j, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "jiffies: "); ok {
			return j, true
		}
	}
	return "", false
}

// ScanLeaks has kmemleak scan now, copies each object it suspects into the
// kernel's log (kernellog.LeakLine), where the host reads it and places it
// by its allocation's jiffies, and clears the list so that the next scan
// lists only new ones. It returns how many objects it copied; a kernel
// without kmemleak has none.
func ScanLeaks() (int, error) {
	if !HasKmemleak() {
		return 0, nil
	}
	if err := os.WriteFile(Kmemleak, []byte("scan"), 0); err != nil {
		return 0, fmt.Errorf("kmemleak scan: %v", err)
	}
	list, err := os.ReadFile(Kmemleak)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %v", Kmemleak, err)
	}
	n := 0
	for _, l := range strings.Split(string(list), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if strings.HasPrefix(l, "unreferenced object") {
			n++
		}
		writeKmsg(kernellog.LeakLine + l)
	}
	if err := os.WriteFile(Kmemleak, []byte("clear"), 0); err != nil {
		return n, fmt.Errorf("kmemleak clear: %v", err)
	}
	return n, nil
}

// writeKmsg logs one line in the kernel's log; a guest without /dev/kmsg
// logs nothing.
func writeKmsg(line string) {
	f, err := os.OpenFile("/dev/kmsg", os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer f.Close()
	// Without its newline the record stays open, and a reader of the log
	// sees it only once a later one closes it.
	f.WriteString("<6>" + line + "\n")
}
