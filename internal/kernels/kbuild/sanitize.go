// SPDX-License-Identifier: GPL-2.0-only

package kbuild

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/atomicfile"
	"github.com/ftrace-stackmap/conformance/internal/cachelimit"
	"github.com/ftrace-stackmap/conformance/internal/kernels/images"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kchoice"
)

// The sanitized lane (SANITIZE=1) builds a kernel with the project's
// fragments, then the tree's own debugging fragment (KASAN, lockdep,
// UBSAN, debug objects, kmemleak, ...), then the project's
// sanitize.config: what tinyconfig needs to take it, and the checks the
// lane promises, each of which must reach .config. Its builds are keyed
// apart from the plain ones and made in build directories of their own.

// DebugConfig is the tree's debugging fragment, under its top directory.
const DebugConfig = "kernel/configs/debug.config"

// SanitizeConfig is the project's fragment of the lane, under kernel/.
const SanitizeConfig = "config/sanitize.config"

// withLane adds the lane's fragments to the plain ones of a build of the
// tree at src: its debug.config, then sanitize.config, merged last.
func withLane(fragments []string, l kchoice.Lane, src, kernelDir string) []string {
	if !l.IsSanitized() {
		return fragments
	}
	return append(append([]string{}, fragments...), filepath.Join(src, DebugConfig), filepath.Join(kernelDir, SanitizeConfig))
}

// treeFragments are the fragments that belong to the tree at src rather
// than to the project: their lines are met where the tree and tinyconfig
// allow, and noted where they are not (a debug.config names options of
// other arches and of other kernel versions).
func treeFragments(fragments []string, src string) []string {
	var own []string
	for _, f := range fragments {
		if strings.HasPrefix(f, filepath.Clean(src)+string(filepath.Separator)) {
			own = append(own, f)
		}
	}
	return own
}

// needDebugConfig refuses a sanitized build of a tree that has no
// debug.config (an older kernel), naming what is missing.
func needDebugConfig(src string) error {
	if _, err := os.Stat(filepath.Join(src, DebugConfig)); err != nil {
		return fmt.Errorf("SANITIZE=1 merges the tree's %s, which %s does not have", DebugConfig, src)
	}
	return nil
}

// debugConfigSHA256 is the sum of the reference source's debug.config, a
// sanitized build's input. It is remembered against the tarball's size
// and time, so that a cached kernel is found without the unpacked source.
func (b Builder) debugConfigSHA256() (string, error) {
	return b.byTarball("debug.config.sha256", func() (string, error) {
		pristine := pristineDir(cachelimit.Kbuild.In(b.CacheDir))
		if err := b.unpackPristine(pristine); err != nil {
			return "", err
		}
		if err := needDebugConfig(pristine); err != nil {
			return "", err
		}
		return images.FileSHA256(filepath.Join(pristine, DebugConfig))
	})
}

// byTarball returns what compute says of the source tarball, remembered in
// kbuild/name against the tarball's size and time.
func (b Builder) byTarball(name string, compute func() (string, error)) (string, error) {
	fi, err := os.Stat(tarball)
	if err != nil {
		return "", err
	}
	memo := cachelimit.Kbuild.In(b.CacheDir, name)
	stamp := fmt.Sprintf("%d %d ", fi.Size(), fi.ModTime().UnixNano())
	if old, err := os.ReadFile(memo); err == nil && strings.HasPrefix(string(old), stamp) {
		return strings.TrimPrefix(string(old), stamp), nil
	}
	sum, err := compute()
	if err != nil {
		return "", err
	}
	// Builds of both arches may write it at once.
	if err := os.MkdirAll(filepath.Dir(memo), 0o755); err != nil {
		return "", err
	}
	return sum, atomicfile.Write(memo, []byte(stamp+sum), 0o644)
}
