// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/mutants"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
	"github.com/ftrace-stackmap/conformance/internal/results"
)

// mutantsMain boots the reference kernel once per fault switch and prints
// which requirements failed; it fails when a fault is missed or the kernel
// without faults fails anything.
func mutantsMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	fs.SetOutput(stderr)
	// The fault table says which requirement catches each fault, in the
	// contract's classes: a fault that hides the feature must not turn every
	// UNSUPPORTED spec into a FAIL.
	o := qemutest.Options{Progress: progress.Discard(), Request: results.Request{Profile: contract.ProfileV4, Require: results.RequireNone}}
	fs.StringVar(&o.Arch, "arch", "", "arm64 or x86_64")
	fs.StringVar(&o.Kernel, "kernel", "", "kernel image to boot (overrides -image)")
	fs.StringVar(&o.Image, "image", "reference", "images.lock entry to boot")
	runFlags(fs, &o)
	only := fs.String("faults", "", "comma-separated faults and variants to try (default: all)")
	if err := fs.Parse(args); err != nil {
		return exitNoVerdict
	}
	if !workplace(&o, stderr) {
		return exitNoVerdict
	}
	// Faults first, then the variants the contract permits: all must pass.
	all := append(mutants.Faults(), mutants.Variants()...)
	faults := slices.Clone(all)
	if *only != "" {
		faults = nil
		for _, name := range strings.Split(*only, ",") {
			i := slices.IndexFunc(all, func(f mutants.Fault) bool { return f.Name == name })
			if i < 0 {
				fmt.Fprintf(stderr, "mutants: -faults: no fault or variant %q (kernel/README.md lists them)\n", name)
				return exitNoVerdict
			}
			faults = append(faults, all[i])
		}
	}
	var err error
	if o.ResultsDir, err = newRunDir("", o.ModuleDir, "mutants", o.Arch); err != nil {
		fmt.Fprintf(stderr, "mutants: %v\n", err)
		return exitNoVerdict
	}
	ctx, stop := interruptible()
	defer stop()
	rows := mutants.Run(ctx, o, faults, stderr)
	var b strings.Builder
	ok := mutants.WriteTable(&b, rows)
	if err := os.WriteFile(filepath.Join(o.ResultsDir, "mutants.txt"), []byte(b.String()), 0o644); err != nil {
		fmt.Fprintf(stderr, "mutants: %v\n", err)
		return exitNoVerdict
	}
	io.WriteString(stdout, b.String())
	caught, noVerdict := 0, false
	for _, r := range rows {
		if r.Caught() {
			caught++
		}
		noVerdict = noVerdict || r.Err != nil
	}
	fmt.Fprintf(stdout, "results: %s\n%d passed, %d failed, 0 skipped\n", o.ResultsDir, caught, len(rows)-caught)
	switch {
	case noVerdict:
		// A row without a verdict says nothing of the suite: no verdict.
		return exitNoVerdict
	case !ok:
		return exitFailed
	}
	return 0
}
