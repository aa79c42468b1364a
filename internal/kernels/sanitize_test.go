// SPDX-License-Identifier: GPL-2.0-only

package kernels

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kbuild"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kchoice"
	"github.com/ftrace-stackmap/conformance/internal/progress"
)

// SANITIZE=1 with a user's kernel holds its config to KASAN wherever
// findConfig finds it (embedded, beside the image, the build directory's
// .config), names that place, and refuses the kernel before any boot when
// KASAN is off or no config is found; a packaged kernel is refused, as
// nothing sanitized it.
func TestSanitizedUserKernel(t *testing.T) {
	arm64 := arch.MustLookup("arm64")
	var all strings.Builder
	for _, opt := range needed(arm64) {
		all.WriteString(opt + "=y\n")
	}
	var notes bytes.Buffer
	req := func(kernel string) Request {
		return Request{Choice: kchoice.Choice{Kernel: kernel, Lane: kchoice.Sanitized}, Host: kbuild.Host{Arch: arm64, CacheDir: t.TempDir(), Progress: progress.Quiet(&notes, "")}}
	}
	write := func(path, text string) string {
		t.Helper()
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	every := "CONFIG_KASAN=y\nCONFIG_FTRACE_STACKMAP=y\n"
	for _, opt := range sanitizers {
		every += opt + "=y\n"
	}

	k, err := Resolve(req(arm64Image(t, all.String()+every)))
	if err != nil || k.ConfigFrom != EmbeddedConfig || k.Sanitized != "sanitized (KASAN on in its embedded config)" ||
		!strings.HasSuffix(k.Source, ", "+k.Sanitized) || notes.Len() > 0 {
		t.Fatalf("a kernel with every check: %+v, %v, notes %q", k, err, notes.String())
	}
	k, err = Resolve(req(arm64Image(t, all.String()+"CONFIG_KASAN=y\nCONFIG_UBSAN=y\n")))
	if err != nil || k.Sanitized == "" || !strings.Contains(notes.String(), "has KASAN but not CONFIG_KASAN_GENERIC, CONFIG_KASAN_VMALLOC, CONFIG_PROVE_LOCKING") ||
		!strings.HasSuffix(strings.TrimSpace(notes.String()), "(its embedded config)") {
		t.Fatalf("a kernel with KASAN only: %v, notes %q", err, notes.String())
	}

	_, err = Resolve(req(arm64Image(t, all.String()+"# CONFIG_KASAN is not set\n")))
	if err == nil || !strings.Contains(err.Error(), "has KASAN off (CONFIG_KASAN is not set in its embedded config): build it with the tree's kernel/configs/debug.config merged") {
		t.Errorf("a kernel without KASAN: %v", err)
	}
	noConfig := "carries no config (CONFIG_IKCONFIG), and none is beside it (config, .config) or in its build directory"
	_, err = Resolve(req(arm64Image(t, "")))
	if err == nil || !strings.Contains(err.Error(), noConfig) {
		t.Errorf("a kernel without a config: %v", err)
	}
	// A file named config that sets nothing is none.
	stray := arm64Image(t, "")
	write(filepath.Join(filepath.Dir(stray), "config"), "not a kernel's\n")
	if _, err := Resolve(req(stray)); err == nil || !strings.Contains(err.Error(), noConfig) {
		t.Errorf("a kernel beside a file named config that is none: %v", err)
	}

	// A config beside the image, as a build cached here keeps it: held to
	// KASAN, though checkConfig does not hold it against the kernel.
	beside := arm64Image(t, "")
	besideConfig := write(filepath.Join(filepath.Dir(beside), "config"), every)
	if k, err := Resolve(req(beside)); err != nil || k.ConfigFrom != besideConfig || k.Sanitized != "sanitized (KASAN on in "+besideConfig+")" {
		t.Errorf("a config beside the image: %v, %v", k, err)
	}
	// A build directory's .config, for its arch/arm64/boot/Image.
	tree := t.TempDir()
	image, _ := os.ReadFile(arm64Image(t, ""))
	inTree := write(filepath.Join(tree, "arch", "arm64", "boot", "Image"), string(image))
	write(filepath.Join(tree, ".config"), "CONFIG_PRINTK=y\n# CONFIG_KASAN is not set\n")
	if _, err := Resolve(req(inTree)); err == nil || !strings.Contains(err.Error(), "(CONFIG_KASAN is not set in "+filepath.Join(tree, ".config")+")") {
		t.Errorf("a build directory's .config without KASAN: %v", err)
	}

	// Without SANITIZE=1 none of this is asked.
	plain := req(arm64Image(t, ""))
	plain.Choice.Lane = kchoice.Plain
	if k, err := Resolve(plain); err != nil || k.Sanitized != "" {
		t.Errorf("plain: %+v, %v", k, err)
	}

	r := req("")
	r.Kernel, r.Image, r.LockFile = "", "debian-6.12", filepath.Join("..", "..", "images.lock")
	if _, err := Resolve(r); err == nil || !strings.Contains(err.Error(), "IMAGE=debian-6.12 is a packaged kernel (kind debian), fetched as built: SANITIZE=1 builds") {
		t.Errorf("a packaged kernel: %v", err)
	}
}

// What a sanitized KERNEL= is noted for lacking is what the lane's own
// fragment promises.
func TestSanitizersAreTheLanes(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "kernel", "config", "sanitize.config"))
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range append([]string{"CONFIG_KASAN"}, sanitizers...) {
		if !strings.Contains(string(data), "\n"+opt+"=y\n") {
			t.Errorf("sanitize.config does not set %s", opt)
		}
	}
}
