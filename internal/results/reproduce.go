// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// defaultTimeout is the Makefile's TIMEOUT; another is part of the command.
const defaultTimeout = 5 * time.Minute

// Reproduce is the command that makes the run again from the project's
// root: make's when it can express the options, else smct's own.
func Reproduce(res *Result) string {
	return reproduce(res, "qemu-test")
}

// ReproduceClaims is the command that measures a claims run again (make
// claims): the kernel, lane, profile and time limit; no spec is run.
func ReproduceClaims(res *Result) string {
	return reproduce(res, "claims")
}

func reproduce(res *Result, target string) string {
	o := res.Request
	specs := target == "qemu-test"
	type opt struct{ makeVar, flag, value string }
	opts := []opt{{"ARCH", "-arch", o.Arch.Name}}
	switch {
	case o.Kernel != "":
		opts = append(opts, opt{"KERNEL", "-kernel", o.Kernel})
	case o.Tree != "":
		opts = append(opts, opt{"TREE", "-tree", o.Tree})
	case o.Image != "":
		opts = append(opts, opt{"IMAGE", "-image", o.Image})
	case res.Entry != "":
		// The lock's default may change: name the entry that was booted.
		opts = append(opts, opt{"IMAGE", "-image", res.Entry})
	}
	if o.Lane.IsSanitized() {
		opts = append(opts, opt{"SANITIZE", "-sanitize", "1"})
	}
	opts = append(opts, opt{"PROFILE", "-profile", o.Profile.String()})
	if !o.Labels.IsZero() && specs {
		opts = append(opts, opt{"LABELS", "-labels", o.Labels.String()})
	}
	if o.FtraceDir != "" && specs {
		opts = append(opts, opt{"FTRACETEST", "-ftracetest", o.FtraceDir})
		if o.FtraceMatch != DefaultFtraceMatch {
			opts = append(opts, opt{"FTRACETEST_MATCH", "-ftracetest-match", o.FtraceMatch})
		}
	}
	if o.Seed != 0 && specs {
		opts = append(opts, opt{"SEED", "-seed", fmt.Sprint(o.Seed)})
	}
	if o.Require != report.RequireAuto && specs {
		opts = append(opts, opt{"REQUIRE", "-require-feature", o.Require.String()})
	}
	if o.Timeout != 0 && o.Timeout != defaultTimeout {
		opts = append(opts, opt{"TIMEOUT", "-timeout", o.Timeout.String()})
	}
	words := []string{"make", target}
	if len(o.BootArgs) > 0 {
		// make has no variable for extra kernel command line words.
		words = []string{"go", "run", "./cmd/smct", target}
		opts = append(opts, opt{"", "-append", strings.Join(o.BootArgs, " ")})
	}
	for _, op := range opts {
		if words[0] == "make" {
			words = append(words, op.makeVar+"="+shellWord(op.value))
		} else {
			words = append(words, op.flag, shellWord(op.value))
		}
	}
	return strings.Join(words, " ")
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9_./:,+@%=-]+$`)

// shellWord quotes a value for a POSIX shell when it needs it.
func shellWord(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellCommand is a command line a POSIX shell runs as the words given,
// each quoted only when it needs it, like the reproduce line.
func ShellCommand(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = shellWord(w)
	}
	return strings.Join(q, " ")
}
