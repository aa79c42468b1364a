// SPDX-License-Identifier: GPL-2.0-only

package kbuild

// make.go: configuring and compiling a tree, and checking its .config.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/cachelimit"
	"github.com/ftrace-stackmap/conformance/internal/textlines"
)

// Make configures the source tree src (tinyconfig plus the fragments, each
// line checked) and compiles it into out with ccache, its output in log.
// ccache takes work as the base of the paths it hashes.
// Lines in absent may be missing from the final .config: options of a
// feature the tree does not have. A fragment of the tree itself (the
// sanitized lane's debug.config) is met where it can be; its lines that
// are not are noted.
func (b Builder) Make(work, src, out, log string, fragments []string, absent ...string) error {
	a := b.Arch
	env := append(withoutMake(os.Environ()),
		"ARCH="+a.KernelArch, "CROSS_COMPILE="+a.Cross,
		"CCACHE_DIR="+cachelimit.Ccache.In(b.CacheDir), "CCACHE_DEPEND=1", "CCACHE_BASEDIR="+work,
		"CCACHE_MAXSIZE="+cachelimit.CCacheMaxSize(), // ccache keeps its cache within the area's cap
		// Fixed build identity, so the same inputs give the same image.
		"KBUILD_BUILD_TIMESTAMP=2026-01-01", "KBUILD_BUILD_USER=smct", "KBUILD_BUILD_HOST=smct", "KBUILD_BUILD_VERSION=1")
	with := "kernel/config"
	if b.Lane.IsSanitized() {
		with += " + " + DebugConfig + ", " + b.Lane.Words()
	}
	step := announce(b.Progress, "configuring %s (tinyconfig + %s)", b.Arch.Name, with)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := run(src, env, "make", "O="+out, "tinyconfig"); err != nil {
		return err
	}
	if err := run(src, env, append([]string{"scripts/kconfig/merge_config.sh", "-m", "-O", out, filepath.Join(out, ".config")}, fragments...)...); err != nil {
		return err
	}
	if err := run(src, env, "make", "O="+out, "olddefconfig"); err != nil {
		return err
	}
	unmet, err := checkConfig(filepath.Join(out, ".config"), fragments, treeFragments(fragments, src), absent)
	if err != nil {
		return err
	}
	if len(unmet) > 0 {
		b.Progress.Notef("note: lines of the tree's fragments not in .config (no such option in this tree, a dependency unmet, or another fragment's choice): %s\n", strings.Join(unmet, ", "))
	}
	step()
	step = announce(b.Progress, "compiling %s (log: %s)", b.Arch.Name, log)
	cc := "CC=ccache " + a.Cross + "gcc"
	if err := b.makeWithProgress(src, env, log, "make", "O="+out, cc, fmt.Sprintf("-j%d", b.jobs()), a.KernelTarget); err != nil {
		return err
	}
	step()
	return nil
}

// checkConfig fails when a fragment line did not make it into .config:
// merge_config.sh drops options whose dependencies are missing. A line
// "# CONFIG_X is not set" is met when .config does not set CONFIG_X. The
// lines of the fragments in lenient that are not met are returned, not
// refused.
func checkConfig(config string, fragments, lenient, absent []string) (unmet []string, err error) {
	have, err := os.ReadFile(config)
	if err != nil {
		return nil, err
	}
	lines, set := map[string]bool{}, map[string]bool{}
	for _, l := range absent {
		lines[l] = true
	}
	for _, l := range strings.Split(string(have), "\n") {
		lines[l] = true
		if name, _, ok := strings.Cut(l, "="); ok && strings.HasPrefix(name, "CONFIG_") {
			set[name] = true
		}
	}
	met := func(l string) bool {
		if name, ok := notSet(l); ok {
			return !set[name]
		}
		return strings.HasPrefix(l, "#") || lines[l]
	}
	var missing []string
	for _, f := range fragments {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(l); l == "" || met(l) {
				continue
			}
			if slices.Contains(lenient, f) {
				unmet = append(unmet, l+" ("+filepath.Base(f)+")")
			} else {
				missing = append(missing, l+" ("+filepath.Base(f)+")")
			}
		}
	}
	if len(missing) > 0 {
		return unmet, fmt.Errorf("kernel config lacks fragment lines (unmet dependencies?): %s", strings.Join(missing, ", "))
	}
	return unmet, nil
}

// notSet reads a fragment's "# CONFIG_X is not set" line: CONFIG_X.
func notSet(l string) (string, bool) {
	name, ok := strings.CutSuffix(strings.TrimPrefix(l, "# "), " is not set")
	return name, ok && strings.HasPrefix(l, "# CONFIG_") && !strings.ContainsAny(name, " =")
}

// makeWithProgress runs make with its output in log, printing how many
// objects it has compiled every few seconds.
func (b Builder) makeWithProgress(dir string, env []string, log string, args ...string) error {
	f, err := os.Create(log)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, env
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); pw.Close() }()
	start, last := time.Now(), time.Now()
	objects := 0
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(f, line)
		if strings.HasPrefix(strings.TrimSpace(line), "CC ") {
			objects++
		}
		if time.Since(last) >= 15*time.Second || (b.Progress.Terminal() && time.Since(last) >= time.Second) {
			last = time.Now()
			b.progressLine(fmt.Sprintf("    %d objects compiled, %s", objects, time.Since(start).Round(time.Second)))
		}
	}
	err = <-done
	if b.Progress.Terminal() {
		fmt.Fprintln(b.Progress)
	}
	if err != nil {
		return &BuildError{Log: log, Err: err}
	}
	return nil
}

// BuildError is a kernel build that failed: make's own failure, not the
// suite's. A series walk blames the patch for it.
type BuildError struct {
	Log string // make's output
	Err error
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("kernel build failed (%v); the end of %s:\n%s", e.Err, e.Log, tailFile(e.Log, 20))
}

// FirstError is the compiler's or linker's first error line in the log,
// or make's last words when there is none.
func (e *BuildError) FirstError() string {
	data, _ := os.ReadFile(e.Log)
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, "error:") || strings.Contains(l, "undefined reference") {
			return strings.TrimSpace(l)
		}
	}
	return textlines.Tail(string(data), 1)
}

func (b Builder) progressLine(s string) {
	if b.Progress.Terminal() {
		fmt.Fprintf(b.Progress, "\r%s", s)
	} else {
		fmt.Fprintln(b.Progress, s)
	}
}

// announce announces a long step on w and returns what ends it.
func announce(w io.Writer, format string, args ...any) func() {
	fmt.Fprintf(w, "==> %s ...\n", fmt.Sprintf(format, args...))
	start := time.Now()
	return func() { fmt.Fprintf(w, "    done in %.1fs\n", time.Since(start).Seconds()) }
}

func run(dir string, env []string, args ...string) error {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v\n%s", strings.Join(args, " "), err, textlines.Tail(string(out), 20))
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func tailFile(path string, n int) string {
	b, _ := os.ReadFile(path)
	return textlines.Tail(string(b), n)
}

// withoutMake drops the variables an outer make passes down (make -s would
// silence the kernel build's progress).
func withoutMake(env []string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, "MAKEFLAGS=") && !strings.HasPrefix(e, "MFLAGS=") && !strings.HasPrefix(e, "MAKELEVEL=") && !strings.HasPrefix(e, "MAKEOVERRIDES=") {
			out = append(out, e)
		}
	}
	return out
}
