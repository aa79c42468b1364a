// SPDX-License-Identifier: GPL-2.0-only

// Package apt is the host's use of apt: installing the tools the project
// needs and downloading kernel packages of either arch without changing
// dpkg's architecture list.
package apt

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/buildlock"
	"github.com/ftrace-stackmap/conformance/internal/textlines"
)

// aptArches lets apt see arm64 packages on an amd64 host (and the reverse)
// for downloading only; dpkg's own list is untouched.
var aptArches = []string{"-o", "APT::Architectures::=amd64", "-o", "APT::Architectures::=arm64"}

// Need names a program (or a file, Path) and the Debian package that
// provides it.
type Need struct{ Program, Path, Package string }

func (n Need) missing() bool {
	if n.Path != "" {
		_, err := os.Stat(n.Path)
		return err != nil
	}
	_, err := exec.LookPath(n.Program)
	return err != nil
}

// installLock keeps the installs of smct processes side by side apart:
// apt-get fails, rather than waits, when another holds apt's own lock.
const installLock = "/run/lock/smct-apt.lock"

// Ensure installs the packages of every missing program. When it cannot
// (not root, no apt) it returns an error naming the command to run.
func Ensure(progress io.Writer, needs ...Need) error {
	missing := packages(needs)
	if len(missing) == 0 {
		return nil
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("missing Debian packages %s: run `sudo apt-get %s`", strings.Join(missing, ", "), strings.Join(install(missing), " "))
	}
	release, err := buildlock.Hold(installLock, "installing "+strings.Join(missing, ", "), progress)
	if err != nil {
		return err
	}
	defer release()
	// What the process we waited for installed is not missing any more.
	if missing = packages(needs); len(missing) == 0 {
		return nil
	}
	fmt.Fprintf(progress, "installing %s (apt-get)...\n", strings.Join(missing, ", "))
	if out, err := apt("apt-get", "update"); err != nil {
		return fmt.Errorf("apt-get update failed: %v\n%s", err, tail(out))
	}
	if out, err := apt("apt-get", install(missing)...); err != nil {
		return fmt.Errorf("`apt-get %s` failed: %v\n%s", strings.Join(install(missing), " "), err, tail(out))
	}
	return nil
}

// Download fetches pkg=version for a Debian arch into dir and returns the
// .deb's path. It refreshes apt's lists once if the version is not known.
func Download(dir, pkg, version, debArch string) (string, error) {
	spec := fmt.Sprintf("%s:%s=%s", pkg, debArch, version)
	try := func() ([]byte, error) {
		cmd := exec.Command("apt-get", append(aptArches, "download", spec)...)
		cmd.Dir = dir
		return cmd.CombinedOutput()
	}
	out, err := try()
	if err != nil && notFound(out) {
		if uout, uerr := apt("apt-get", append(aptArches, "update")...); uerr != nil {
			return "", fmt.Errorf("apt-get update failed: %v\n%s", uerr, tail(uout))
		}
		out, err = try()
	}
	if err != nil {
		if notFound(out) {
			return "", fmt.Errorf("%w: the Debian archive no longer has %s", ErrVanished, spec)
		}
		return "", fmt.Errorf("apt-get download %s: %v\n%s", spec, err, tail(out))
	}
	name := fmt.Sprintf("%s_%s_%s.deb", pkg, strings.ReplaceAll(version, ":", "%3a"), debArch)
	return dir + "/" + name, nil
}

// ErrVanished says a pinned package version is gone from the archive.
var ErrVanished = fmt.Errorf("pinned package vanished")

func notFound(out []byte) bool {
	return bytes.Contains(out, []byte("Unable to locate package")) ||
		bytes.Contains(out, []byte("not found")) ||
		bytes.Contains(out, []byte("Can't select")) ||
		bytes.Contains(out, []byte("has no installation candidate"))
}

// Extract unpacks one file of a .deb to out.
func Extract(deb, member, out string) error {
	tmp, err := os.MkdirTemp("", "smct-deb-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if o, err := exec.Command("dpkg-deb", "-x", deb, tmp).CombinedOutput(); err != nil {
		return fmt.Errorf("dpkg-deb -x %s: %v\n%s", deb, err, tail(o))
	}
	data, err := os.ReadFile(tmp + "/" + member)
	if err != nil {
		return fmt.Errorf("%s has no %s: %v", deb, member, err)
	}
	return os.WriteFile(out, data, 0o644)
}

// install is apt-get's arguments that install packages.
func install(packages []string) []string {
	return append([]string{"install", "-y", "--no-install-recommends"}, packages...)
}

// packages are the packages of the needs that are missing, each once.
func packages(needs []Need) []string {
	var missing []string
	for _, n := range needs {
		if n.missing() && !slices.Contains(missing, n.Package) {
			missing = append(missing, n.Package)
		}
	}
	return missing
}

func apt(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	return cmd.CombinedOutput()
}

// tail is the end of a command's output, to quote in its error.
func tail(out []byte) string { return textlines.Tail(string(out), 5) }
