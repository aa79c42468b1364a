// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/kernels"
	"github.com/ftrace-stackmap/conformance/internal/kernels/images"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kbuild"
	"github.com/ftrace-stackmap/conformance/internal/progress"
)

// kernelMain builds the reference kernel; the last line printed is its path.
func kernelMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kernel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	archName := fs.String("arch", "", "arm64 or x86_64")
	pin := fs.Bool("pin", false, "record the build's inputs and image hashes in images.lock")
	lock := fs.String("lock", "images.lock", "the image lock file")
	entry := fs.String("entry", "reference", "the lock entry to pin")
	jobs := fs.Int("jobs", 0, "make -j (default: one per CPU)")
	if err := fs.Parse(args); err != nil {
		return exitNoVerdict
	}
	dir, err := moduleDir()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitNoVerdict
	}
	a, err := arch.Lookup(*archName)
	if err != nil {
		fmt.Fprintf(stderr, "kernel: %v\n", err)
		return exitNoVerdict
	}
	b := kbuild.Builder{Arch: a, KernelDir: filepath.Join(dir, "kernel"), CacheDir: kernels.CacheDir(), Progress: progress.New(stderr), Jobs: *jobs}
	start := time.Now()
	res, err := b.Build()
	if err != nil {
		fmt.Fprintf(stderr, "kernel: %v\n", err)
		return exitNoVerdict
	}
	how := "built in " + time.Since(start).Round(time.Second).String()
	if res.Cached {
		how = "cached"
	}
	fmt.Fprintf(stderr, "%s kernel %s: sha256 %s, inputs %s\n", a.Name, how, res.ImageSHA256, res.Key)
	if *pin {
		if err := images.Pin(filepath.Join(dir, *lock), *entry, a.Name, res.Key, res.ImageSHA256); err != nil {
			fmt.Fprintf(stderr, "kernel: %v\n", err)
			return exitNoVerdict
		}
		fmt.Fprintf(stderr, "pinned %s/%s in %s\n", *entry, a.Name, *lock)
	}
	fmt.Fprintln(stdout, res.Image)
	return 0
}
