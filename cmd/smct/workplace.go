// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/ftrace-stackmap/conformance/internal/kernels"
	"github.com/ftrace-stackmap/conformance/internal/project"
)

// projectDir is the project's root given with -C, if it was.
var projectDir string

// moduleDir is the project's root (project.Find).
func moduleDir() (string, error) { return project.Find(projectDir) }

// interruptible is a context that SIGINT (Ctrl-C) and SIGTERM (timeout,
// a cancelled CI job) cancel, naming the signal as the cause, so that a run
// stopped from outside ends as interrupted and kills QEMU.
func interruptible() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		if sig, ok := <-sigs; ok {
			cancel(fmt.Errorf("%v", sig))
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(sigs)
		cancel(nil)
	}
}

// cacheDir is where kernels, builds and walks are kept between runs.
func cacheDir() string { return kernels.CacheDir() }
