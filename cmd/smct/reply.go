// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ftrace-stackmap/conformance/internal/reply"
	"github.com/ftrace-stackmap/conformance/internal/results"
)

// replyCmd prints the path of a run's or a walk's reply.eml and the
// command that sends it. It never sends mail.
var replyCmd = command{
	name:   "reply",
	page:   "docs/reply.md",
	about:  "print a run's or a walk's reply.eml and the git send-email command that sends it (nothing is sent)",
	groups: []group{exitGroup},
	flags: func(fs *flag.FlagSet, r *request) runFunc {
		var run userPath
		fs.Var(&run, "run", "the run's or the walk's directory (default: the project's results/latest)")
		return func(ctx context.Context, r *request, out outputs) outcome {
			if run == "" {
				run = userPath(filepath.Join(r.run.ModuleDir, "results", "latest"))
			}
			dir, err := filepath.EvalSymlinks(string(run))
			if err != nil {
				return refuseAt(out, "reply", err)
			}
			path := filepath.Join(dir, reply.File)
			if _, err := os.Stat(path); err != nil {
				return refuseAt(out, "reply", fmt.Errorf("%s has no %s: only a run whose kernel came from a posted series has one", dir, reply.File))
			}
			cmd, err := reply.SendCommand(path)
			if err != nil {
				return refuseAt(out, "reply", fmt.Errorf("%s: %v", path, err))
			}
			return outcome{body: path + "\n" + cmd + "\n"}
		}
	},
}

// writeReply writes reply.eml into a run's directory when its kernel came
// from a series; a reply that cannot be written is said, and leaves the
// run's verdict as it is.
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
