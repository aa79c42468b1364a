// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/term"

	"github.com/ftrace-stackmap/conformance/initramfs"
	"github.com/ftrace-stackmap/conformance/initramfs/guest"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// Shell boots the kernel the options name with busybox's shell on the
// console instead of the suite (SHELL=1), the user's terminal attached, and
// returns when QEMU exits. The run directory keeps the initramfs and a
// rerun.sh; there is no verdict.
func Shell(ctx context.Context, o Options, stdin io.Reader, stdout, stderr io.Writer) (*results.Result, error) {
	r, res, err := new(Runner).begin(ctx, o)
	if err != nil {
		return res, err
	}
	busybox, err := o.busybox(r.m.Arch)
	if err != nil {
		return r.res, failed("fetching busybox for the shell", err)
	}
	records, err := initramfs.BusyboxRecords(busybox)
	if err != nil {
		return r.res, failed("packing busybox", err)
	}
	dir := filepath.Join(r.res.Dir, "boots", "shell")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r.res, err
	}
	initrd := filepath.Join(dir, "initrd.cpio")
	cfg := guest.RunConfig{Args: o.suiteArgs(defaultPlan().Filter(o.Labels)), TimeoutSeconds: 1, Shell: true}
	if err := initramfs.WithRunConfig(r.base, initrd, cfg, records...); err != nil {
		return r.res, failed("writing the run configuration", err)
	}
	boot := qemu.Boot{Machine: r.m, Kernel: r.kernel, Initrd: initrd,
		Append: o.kernelArgs(defaultPlan(), r.res.Derived), Memory: o.Mem, Extra: o.QEMUOpts}
	args := append([]string{r.m.Binary}, boot.Args()...)
	if err := results.WriteRerun(dir, "Boots the kernel of this run to a shell again.", args); err != nil {
		return r.res, failed("writing rerun.sh", err)
	}
	fmt.Fprintf(stderr, "booting %s to a shell (%s); Ctrl-A x stops QEMU\n", filepath.Base(r.res.Kernel), strings.Join(boot.Append, " "))
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	if f, ok := stdin.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
		cmd.Stdin = nil
		feed, err := cmd.StdinPipe()
		if err != nil {
			return r.res, err
		}
		prompt := &promptWatch{w: stdout, seen: make(chan struct{})}
		cmd.Stdout = prompt
		go scriptShell(feed, stdin, prompt.seen)
	}
	if err := cmd.Run(); err != nil {
		return r.res, failed("QEMU", err)
	}
	return r.res, nil
}

// scriptShell types a script (stdin that is not a terminal) into the
// guest's shell once its first prompt is out: bytes sent earlier reach a
// console nobody reads yet and are lost. The script's end is an end of
// input for the shell (Ctrl-D), which exits and powers the guest off.
func scriptShell(feed io.WriteCloser, script io.Reader, prompt <-chan struct{}) {
	defer feed.Close()
	<-prompt
	io.Copy(feed, script)
	feed.Write([]byte{0x04})
}

// promptWatch passes the console through and closes seen when the guest's
// shell prompt first appears in it.
type promptWatch struct {
	w    io.Writer
	seen chan struct{}
	tail []byte // the end of what has passed, for a prompt cut across writes
}

func (p *promptWatch) Write(b []byte) (int, error) {
	select {
	case <-p.seen:
	default:
		p.tail = append(p.tail, b...)
		if strings.Contains(string(p.tail), guest.ShellPrompt) {
			close(p.seen)
		} else if keep := len(guest.ShellPrompt); len(p.tail) > keep {
			p.tail = p.tail[len(p.tail)-keep:]
		}
	}
	return p.w.Write(b)
}
