// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ftrace-stackmap/conformance/internal/kernels"
)

// projectDir is the project's root given with -C, if it was.
var projectDir string

// modulePath names the project's module in its go.mod.
const modulePath = "module github.com/ftrace-stackmap/conformance\n"

// moduleDir finds the project's root: -C's directory, else the nearest
// go.mod of this module above the working directory, else above smct
// itself (bin/smct of a checkout), so that smct runs from anywhere, a
// kernel tree included.
func moduleDir() (string, error) {
	if projectDir != "" {
		if !isProject(projectDir) {
			return "", fmt.Errorf("-C %s: not the conformance suite's checkout (no go.mod of %s)", projectDir, strings.TrimSpace(strings.TrimPrefix(modulePath, "module ")))
		}
		return filepath.Abs(projectDir)
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			starts = append(starts, filepath.Dir(exe))
		}
	}
	for _, dir := range starts {
		for d := dir; ; d = filepath.Dir(d) {
			if isProject(d) {
				return d, nil
			}
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	return "", fmt.Errorf("cannot find the suite's checkout above %v: run smct from it, or give -C DIR", starts)
}

// isProject says whether dir holds this project's go.mod.
func isProject(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	return err == nil && strings.HasPrefix(string(b), modulePath)
}

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
