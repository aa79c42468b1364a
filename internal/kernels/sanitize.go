// SPDX-License-Identifier: GPL-2.0-only

package kernels

import (
	"fmt"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/kernels/kbuild"
)

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
// other checks it lacks are noted. Unlike checkConfig it takes the config
// wherever findConfig found it (embedded, beside the image, its build
// directory's .config): without one, whether KASAN is on cannot be told.
func (r Request) checkSanitized(k *Kernel) error {
	cfg, from := k.Config, configPlace(k.ConfigFrom)
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

// configPlace is where a config was found (ConfigFrom) in the lane's
// words, which put it in parentheses: the embedded config without its
// option's name in parentheses of its own.
func configPlace(from string) string {
	if from == EmbeddedConfig {
		return "its embedded config"
	}
	return from
}
