// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"flag"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// TestBadFlagValuesAreRefused: a value smct cannot use ends the run at
// once, as no verdict, naming the flag.
func TestBadFlagValuesAreRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-exit-codes", "tap"}, `invalid value "tap" for flag -exit-codes: want smct or kselftest`},
		{[]string{"-arch", "riscv64"}, `ARCH="riscv64": want one of [arm64 x86_64]`},
		{[]string{"-arch", ""}, `ARCH="": want one of [arm64 x86_64]`},
		{[]string{"-arch", "arm64", "-require-feature", "all"}, "want stackmap, none, or nothing"},
		{[]string{"-seed", "many"}, "want a positive number"},
		{[]string{"-seed", "-3"}, "want a positive number"},
		{[]string{"-arch", "arm64", "-sanitize", "kasan"}, `invalid value "kasan" for flag -sanitize: want 1 or 0`},
		{[]string{"-boot-quiet", "-5s"}, "invalid value \"-5s\" for flag -boot-quiet: want a duration above 0"},
		{[]string{"-boot-quiet", "long"}, "invalid value \"long\" for flag -boot-quiet: want a duration above 0"},
		{[]string{"-arch", "arm64", "-timeout", "-5s"}, "invalid value \"-5s\" for flag -timeout: want a duration above 0"},
		{[]string{"-arch", "arm64", "-timeout", "0s"}, "invalid value \"0s\" for flag -timeout: want a duration above 0"},
		{[]string{"-arch", "arm64", "-mem", "1"}, "-mem 1: the guest needs at least 256 MB"},
		{[]string{"-arch", "arm64", "-mem", "lots"}, "-mem lots: want megabytes"},
		{[]string{"-arch", "arm64", "-jobs", "many"}, "invalid value \"many\" for flag -jobs: want 0"},
		{[]string{"-arch", "arm64", "-jobs", "-1"}, "invalid value \"-1\" for flag -jobs: want 0"},
		{[]string{"-arch", "arm64", "-lanes", "-2"}, "invalid value \"-2\" for flag -lanes: want 0"},
		{[]string{"-arch", "arm64", "-labels", "SM-NODE-01 &&"}, "LABELS=\"SM-NODE-01 &&\""},
		{[]string{"-arch", "arm64", "-torture", "0s"}, "invalid value \"0s\" for flag -torture: want a duration above 0"},
	} {
		var stdout, stderr strings.Builder
		dir := t.TempDir()
		code := smct(append([]string{"qemu-test", "-results", dir}, tc.args...), &stdout, &stderr)
		if code != exitNoVerdict || !strings.Contains(stdout.String()+stderr.String(), tc.want) {
			t.Errorf("qemu-test %v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr.String(), exitNoVerdict, tc.want)
		}
		// Refused before any work: nothing under results/.
		if left, _ := os.ReadDir(dir); len(left) > 0 {
			t.Errorf("qemu-test %v: a refused command line left %d entries under results/", tc.args, len(left))
		}
		if n := strings.Count(stdout.String()+stderr.String(), "NO VERDICT: "); n != 1 {
			t.Errorf("qemu-test %v: NO VERDICT said %d times, want once", tc.args, n)
		}
	}
}

// An origin KCIDB would refuse stops any command before it makes a run
// directory, builds or boots, naming KCIDB_ORIGIN=.
func TestBadKCIDBOriginIsRefused(t *testing.T) {
	t.Setenv("KCIDB_ORIGIN", "My-Lab")
	dir := t.TempDir()
	var stdout, stderr strings.Builder
	code := realMain([]string{"qemu-test", "-results", dir, "-arch", "x86_64"}, &stdout, &stderr)
	if code != exitNoVerdict || !strings.Contains(stderr.String(), `KCIDB_ORIGIN="My-Lab"`) || !strings.HasPrefix(stdout.String(), "NO VERDICT: ") {
		t.Errorf("exit %d, stdout %q, stderr %q; want %d and KCIDB_ORIGIN named", code, stdout.String(), stderr.String(), exitNoVerdict)
	}
	if made, _ := os.ReadDir(dir); len(made) > 0 {
		t.Errorf("a refused origin made %v", made)
	}
}

// smct runs a command line as main does, from this package's directory
// (the project is found above it).
func smct(args []string, stdout, stderr io.Writer) int { return realMain(args, stdout, stderr) }

// Every command that makes runs hands its package a request the run
// accepts: a profile, a requirement and an exit convention it knows, even
// when the command line leaves them out.
func TestEveryCommandsRequestIsValid(t *testing.T) {
	for _, c := range commands {
		r, _, err := c.parse([]string{}, io.Discard)
		if _, ok := flagNamed(c, "arch"); ok && err != nil && !strings.Contains(err.Error(), `ARCH=""`) {
			t.Errorf("%s with no flags: %v", c.name, err)
		}
		if _, ok := flagNamed(c, "arch"); ok {
			if r, _, err = c.parse([]string{"-arch", "x86_64"}, io.Discard); err != nil {
				t.Errorf("%s -arch x86_64: %v", c.name, err)
				continue
			}
		}
		// Commands that boot run the contract of a profile.
		if c.name != "reply" && c.name != "lava-results" && c.name != "kernel" && c.name != "cache" {
			if err := r.run.Profile.Valid(); err != nil {
				t.Errorf("%s: the request's profile: %v", c.name, err)
			}
		}
		for _, err := range []error{r.run.Require.Valid(), r.exitCodes.Set(r.exitCodes.String())} {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
		}
	}
}

// flagNamed finds a command's flag by name.
func flagNamed(c command, name string) (*flag.Flag, bool) {
	fs, _ := c.flagSet(new(request))
	f := fs.Lookup(name)
	return f, f != nil
}

// Every command that resolves or builds a kernel takes -sanitize, as the
// Makefile passes SANITIZE=: 1 on, 0 or empty off.
func TestEveryKernelCommandTakesSanitize(t *testing.T) {
	var takers []string
	for _, c := range commands {
		if _, ok := flagNamed(c, "sanitize"); !ok {
			continue
		}
		takers = append(takers, c.name)
		for v, want := range map[string]bool{"1": true, "0": false, "": false} {
			r, _, err := c.parse([]string{"-arch", "x86_64", "-sanitize", v}, io.Discard)
			if _, ok := flagNamed(c, "arch"); !ok {
				r, _, err = c.parse([]string{"-sanitize", v}, io.Discard)
			}
			if err != nil || r.run.Lane.IsSanitized() != want {
				t.Errorf("%s -sanitize %q: %v, sanitize %v", c.name, v, err, r.run.Lane)
			}
		}
	}
	want := []string{"qemu-test", "claims", "kernel", "mutants", "matrix", "bench", "review", "lava"}
	if strings.Join(takers, " ") != strings.Join(want, " ") {
		t.Errorf("-sanitize taken by %v, want %v", takers, want)
	}
}

// The lock pins the plain build: a sanitized one is not pinned.
func TestSanitizedKernelIsNotPinned(t *testing.T) {
	t.Setenv("SMCT_CACHE", t.TempDir())
	var stdout, stderr strings.Builder
	code := smct([]string{"kernel", "-arch", "arm64", "-pin", "-sanitize", "1"}, &stdout, &stderr)
	if code != exitNoVerdict || !strings.Contains(stdout.String()+stderr.String(), "-pin with -sanitize: images.lock pins the plain build of the reference entry") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

// -boot-quiet reaches the run: a duration as given, nothing (BOOT_QUIET=
// left empty) as 0, which lets the run scale it; every command that makes
// boots here has it.
func TestBootQuietFlag(t *testing.T) {
	c, ok := lookup("qemu-test")
	if !ok {
		t.Fatal("no qemu-test command")
	}
	for value, want := range map[string]time.Duration{"90s": 90 * time.Second, "": 0, "2m": 2 * time.Minute} {
		r, _, err := c.parse([]string{"-arch", "x86_64", "-boot-quiet", value}, io.Discard)
		if err != nil || r.run.BootQuiet != want {
			t.Errorf("-boot-quiet %q: %v, %v; want %s", value, r.run.BootQuiet, err, want)
		}
	}
	for _, c := range commands {
		_, here := flagNamed(c, "lanes")
		if _, has := flagNamed(c, "boot-quiet"); has != here {
			t.Errorf("%s: -boot-quiet %v, boots made here %v", c.name, has, here)
		}
	}
}
