// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ftrace-stackmap/conformance/internal/flagvalue"
	"github.com/ftrace-stackmap/conformance/internal/reply"
	"github.com/ftrace-stackmap/conformance/internal/results"
)

// replyCmd prints the path of a run's or a walk's reply.eml and the
// command that sends it. It never sends mail.
var replyCmd = command{
	name:   "reply",
	page:   "docs/reply.md",
	about:  "print a run's or a walk's reply.eml and the git send-email command that sends it (nothing is sent)",
	groups: []group{resultsGroup, exitGroup},
	flags: func(fs *flag.FlagSet, r *request) runFunc {
		var run flagvalue.Path
		fs.Var(&run, "run", "the run's or the walk's directory (default: latest under -results)")
		return func(ctx context.Context, r *request, out outputs) outcome {
			if run == "" {
				run = flagvalue.Path(filepath.Join(r.run.ResultsDir, "latest"))
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

// writeReply writes a run's reply.eml (reply.WriteForRun); one that
// cannot be written is said, and leaves the run's verdict as it is.
func writeReply(res *results.Result, stderr io.Writer) {
	if err := reply.WriteForRun(res); err != nil {
		fmt.Fprintf(stderr, "note: no %s: %v\n", reply.File, err)
	}
}
