// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A HeldWrite is one write(2) made on a thread of its own, so that a second
// actor can see, from /proc, when it sleeps inside the kernel and act while
// it does: an overlap made certain by looking, not hoped for by racing.
type HeldWrite struct {
	fd   int
	tid  chan int
	done atomic.Bool
	err  chan error
}

// StartWrite opens path for writing and writes data to it from a locked
// thread of its own; it returns once the thread is about to write.
func StartWrite(path string, data []byte) (*HeldWrite, error) {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	w := &HeldWrite{fd: fd, tid: make(chan int, 1), err: make(chan error, 1)}
	buf := append([]byte(nil), data...) // touched here: no page fault inside the write
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		w.tid <- unix.Gettid()
		_, err := unix.Write(fd, buf)
		w.done.Store(true)
		unix.Close(fd)
		w.err <- err
	}()
	return w, nil
}

// Held waits up to limit for the write to sleep inside the kernel: its
// thread's /proc syscall file names write(2) on the file, and its state is
// asleep. False when the write returned first or the limit passed.
func (w *HeldWrite) Held(limit time.Duration) (bool, error) {
	tid := <-w.tid
	dir := fmt.Sprintf("/proc/%d/task/%d/", os.Getpid(), tid)
	for end := time.Now().Add(limit); time.Now().Before(end) && !w.done.Load(); {
		call, err := os.ReadFile(dir + "syscall")
		if os.IsNotExist(err) && !w.done.Load() {
			return false, Lacks("no %ssyscall to see a sleeping write in (CONFIG_HAVE_ARCH_TRACEHOOK?)", dir)
		}
		stat, _ := os.ReadFile(dir + "stat")
		if inWrite(string(call), w.fd) && asleep(string(stat)) && !w.done.Load() {
			return true, nil
		}
		runtime.Gosched()
	}
	return false, nil
}

// Done says whether the write has returned, without waiting.
func (w *HeldWrite) Done() bool { return w.done.Load() }

// Wait returns the write's error once it has returned.
func (w *HeldWrite) Wait() error { return <-w.err }

// inWrite reads /proc/<tid>/syscall: "<nr> <arg0> ..." while in a syscall.
func inWrite(call string, fd int) bool {
	f := strings.Fields(call)
	if len(f) < 2 {
		return false
	}
	nr, err1 := strconv.Atoi(f[0])
	arg, err2 := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
	return err1 == nil && err2 == nil && nr == unix.SYS_WRITE && arg == uint64(fd)
}

// asleep reads the state letter of /proc/<tid>/stat: S or D.
func asleep(stat string) bool {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return false
	}
	return stat[i+2] == 'S' || stat[i+2] == 'D'
}
