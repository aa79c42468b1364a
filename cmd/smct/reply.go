// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ftrace-stackmap/conformance/internal/reply"
	"github.com/ftrace-stackmap/conformance/internal/results"
)

// replyMain prints the path of a run's or a walk's reply.eml and the
// command that sends it. It never sends mail.
func replyMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reply", flag.ContinueOnError)
	fs.SetOutput(stderr)
	run := fs.String("run", "results/latest", "the run's or the walk's directory")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "reply: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	dir, err := filepath.EvalSymlinks(*run)
	if err != nil {
		fmt.Fprintf(stderr, "reply: %v\n", err)
		return 2
	}
	path := filepath.Join(dir, reply.File)
	if _, err := os.Stat(path); err != nil {
		fmt.Fprintf(stderr, "reply: %s has no %s: only a run whose kernel came from a posted series has one\n", dir, reply.File)
		return 2
	}
	cmd, err := reply.SendCommand(path)
	if err != nil {
		fmt.Fprintf(stderr, "reply: %s: %v\n", path, err)
		return 2
	}
	fmt.Fprintln(stdout, path)
	fmt.Fprintln(stdout, cmd)
	return 0
}

// writeReply writes reply.eml into a run's directory when its kernel came
// from a series; a reply that cannot be written leaves the run as it is.
func writeReply(res *results.Result, stderr io.Writer) {
	if res == nil || res.Dir == "" || res.Origin.Series == "" {
		return
	}
	mbox, msgid, err := reply.Thread(res.Origin.Series)
	if err == nil {
		_, err = reply.Write(res.Dir, mbox, msgid, reply.FromRun(res), "")
	}
	if err != nil {
		fmt.Fprintf(stderr, "note: no %s: %v\n", reply.File, err)
	}
}
