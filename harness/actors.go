// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Overlap is what one WhileWriteSleeps saw.
type Overlap struct {
	Held      bool  // the write was seen asleep in the kernel, and second ran then
	FirstErr  error // the write's own result
	SecondErr error // second's result, when Held
	FirstDone bool  // the write had returned by the time second did
}

// WhileWriteSleeps writes data to path from a thread of its own and, if
// /proc shows that thread asleep inside write(2) on the file before the
// write returns, runs second at once: the overlap is seen, not assumed.
// Held is false when the write returned before it was seen asleep.
func WhileWriteSleeps(path string, data []byte, second func() error) (Overlap, error) {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return Overlap{}, fmt.Errorf("opening %s: %w", path, err)
	}
	defer unix.Close(fd)
	// A P for each side: the watcher must run the moment the write
	// sleeps, not once the runtime takes back the P the write holds.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(4, runtime.GOMAXPROCS(0))))
	buf := append([]byte(nil), data...) // touched here: no page fault inside the write
	var done atomic.Bool
	tids, result := make(chan int, 1), make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tids <- unix.Gettid()
		_, err := unix.Write(fd, buf)
		done.Store(true)
		result <- err
	}()
	dir := fmt.Sprintf("/proc/%d/task/%d/", os.Getpid(), <-tids)
	sleeping := func() bool {
		call, _ := os.ReadFile(dir + "syscall")
		stat, _ := os.ReadFile(dir + "stat")
		return inWrite(string(call), fd) && asleep(string(stat)) && !done.Load()
	}
	var o Overlap
	for !done.Load() {
		if sleeping() {
			o.Held, o.SecondErr = true, second()
			o.FirstDone = done.Load()
			break
		}
		runtime.Gosched()
	}
	o.FirstErr = <-result
	return o, nil
}

// ProcSyscall says whether this kernel shows a thread's current syscall,
// which WhileWriteSleeps needs.
func ProcSyscall() error {
	if _, err := os.Stat("/proc/self/syscall"); err != nil {
		return Lacks("no /proc/self/syscall to see a sleeping write in (CONFIG_HAVE_ARCH_TRACEHOOK?)")
	}
	return nil
}

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
