// SPDX-License-Identifier: GPL-2.0-only

package kernels

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/kernels/kbuild"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kimage"
)

// lane is the sanitized lane's words for a kernel built here, "" when the
// request does not ask for it.
func (r Request) lane() string {
	if r.Sanitize {
		return kbuild.Sanitized
	}
	return ""
}

// laneWords add a lane to the line that says where a kernel came from.
func laneWords(lane string) string {
	if lane == "" {
		return ""
	}
	return ", " + lane
}

// sanitizers are what the sanitized lane stands for besides KASAN: a
// KERNEL= without one still runs, with a note naming it.
var sanitizers = []string{"CONFIG_KASAN_GENERIC", "CONFIG_KASAN_VMALLOC", "CONFIG_PROVE_LOCKING", "CONFIG_DEBUG_ATOMIC_SLEEP",
	"CONFIG_UBSAN", "CONFIG_DEBUG_OBJECTS", "CONFIG_DEBUG_KMEMLEAK", "CONFIG_DEBUG_LIST"}

// checkSanitized refuses a user's kernel that SANITIZE=1 cannot stand
// behind: one whose config cannot be found, or has KASAN off. The lane's
// other checks it lacks are noted.
func (r Request) checkSanitized(k *Kernel) error {
	cfg, from, err := kernelConfig(k.Path, k.Bootable)
	if err != nil {
		return err
	}
	if cfg == nil {
		return fmt.Errorf("SANITIZE=1: KERNEL=%s carries no config (CONFIG_IKCONFIG), and none is beside it (config, .config) or in its build directory: whether it has KASAN cannot be told", r.Kernel)
	}
	if cfg["CONFIG_KASAN"] != "y" {
		return fmt.Errorf("SANITIZE=1: KERNEL=%s has KASAN off (CONFIG_KASAN is not set in %s): build it with the tree's %s merged, or leave SANITIZE= empty", r.Kernel, from, kbuild.DebugConfig)
	}
	var lacks []string
	for _, opt := range sanitizers {
		if cfg[opt] != "y" {
			lacks = append(lacks, opt)
		}
	}
	if len(lacks) > 0 {
		r.Progress.Notef("note: %s has KASAN but not %s (%s)\n", r.Kernel, strings.Join(lacks, ", "), from)
	}
	k.Sanitized = "sanitized (KASAN on in " + from + ")"
	k.Source += laneWords(k.Sanitized)
	return nil
}

// kernelConfig is the configuration of the kernel at path (booted as
// bootable) and where it was found: embedded in the image
// (CONFIG_IKCONFIG), else a config file beside it (as a build cached here
// keeps it), else the .config of the build directory it was taken from
// (<dir>/vmlinux, <dir>/arch/<arch>/boot/<image>). None is nil.
func kernelConfig(path, bootable string) (map[string]string, string, error) {
	info, err := kimage.Inspect(bootable)
	if err != nil {
		return nil, "", err
	}
	if cfg, err := kimage.Config(bootable, info.Format); cfg != nil || err != nil {
		return cfg, "its embedded config", err
	}
	dir := filepath.Dir(path)
	candidates := []string{filepath.Join(dir, "config"), filepath.Join(dir, ".config")}
	if filepath.Base(dir) == "boot" && filepath.Base(filepath.Dir(filepath.Dir(dir))) == "arch" {
		candidates = append(candidates, filepath.Join(dir, "..", "..", "..", ".config"))
	}
	for _, c := range candidates {
		text, err := os.ReadFile(c)
		if err != nil {
			continue
		}
		if cfg := parseConfig(text); len(cfg) > 0 {
			return cfg, filepath.Clean(c), nil
		}
	}
	return nil, "", nil
}

// parseConfig reads a .config as option name to value; options not set
// are not in it.
func parseConfig(text []byte) map[string]string {
	cfg := map[string]string{}
	for _, l := range strings.Split(string(text), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok && strings.HasPrefix(k, "CONFIG_") {
			cfg[k] = v
		}
	}
	return cfg
}
