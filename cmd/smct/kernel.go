// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/kernels/images"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kbuild"
)

// kernelCmd builds the reference kernel; the last line printed is its path.
var kernelCmd = command{
	name:   "kernel",
	page:   "docs/running.md",
	about:  "build the reference kernel (kernel/) and print its path",
	groups: []group{archGroup, buildGroup, exitGroup},
	prunes: true,
	flags: func(fs *flag.FlagSet, r *request) runFunc {
		pin := fs.Bool("pin", false, "record the build's inputs and image hashes in images.lock")
		entry := fs.String("entry", "reference", "the lock entry to pin")
		return func(ctx context.Context, r *request, out outputs) outcome {
			o := r.run
			a := o.Arch
			if *pin && o.Lane.IsSanitized() {
				return refuseAt(out, "kernel", fmt.Errorf("-pin with -sanitize: images.lock pins the plain build of the %s entry, which a sanitized build is not", *entry))
			}
			o.Progress = out.progress
			b := kbuild.Builder{Env: o.BuildEnv(a)}
			start := time.Now()
			res, err := b.Build()
			if err != nil {
				return refuseAt(out, "kernel", err)
			}
			how := "built in " + time.Since(start).Round(time.Second).String()
			if res.Cached {
				how = "cached"
			}
			if o.Lane.IsSanitized() {
				how = o.Lane.Words() + ", " + how
			}
			fmt.Fprintf(out.stderr, "%s kernel %s: sha256 %s, inputs %s\n", a.Name, how, res.ImageSHA256, res.Key)
			if *pin {
				if err := images.Pin(o.LockFile, *entry, a.Name, res.Key, res.KernelSHA256, res.ImageSHA256); err != nil {
					return refuseAt(out, "kernel", err)
				}
				fmt.Fprintf(out.stderr, "pinned %s/%s in %s\n", *entry, a.Name, o.LockFile)
			}
			// The path is the last line: scripts read it.
			return outcome{body: res.Image + "\n"}
		}
	},
}
