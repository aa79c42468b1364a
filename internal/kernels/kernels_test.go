// SPDX-License-Identifier: GPL-2.0-only

package kernels

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/buildlock"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kbuild"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kchoice"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kimage/kimagetest"
	"github.com/ftrace-stackmap/conformance/internal/progress"
)

// arm64Image is an Image header with config embedded as CONFIG_IKCONFIG does.
func arm64Image(t *testing.T, config string) string {
	t.Helper()
	b := make([]byte, 4096)
	copy(b[0x38:], "ARM\x64")
	if config != "" {
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		w.Write([]byte(config))
		w.Close()
		b = append(append(append(b, "IKCFG_ST"...), z.Bytes()...), "IKCFG_ED"...)
	}
	p := filepath.Join(t.TempDir(), "Image")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestUserKernelsConfigIsChecked(t *testing.T) {
	var all strings.Builder
	arm64 := arch.MustLookup("arm64")
	for _, opt := range needed(arm64) {
		all.WriteString(opt + "=y\n")
	}
	var notes bytes.Buffer
	req := func(kernel string) Request {
		return Request{Choice: kchoice.Choice{Kernel: kernel}, Host: kbuild.Host{Arch: arm64, CacheDir: t.TempDir(), Progress: progress.Quiet(&notes, "")}}
	}
	if _, err := Resolve(req(arm64Image(t, all.String()+"CONFIG_FTRACE_STACKMAP=y\n"))); err != nil {
		t.Fatalf("a kernel with every option: %v", err)
	}
	noConsole := strings.Replace(all.String(), "CONFIG_SERIAL_AMBA_PL011_CONSOLE=y", "# CONFIG_SERIAL_AMBA_PL011_CONSOLE is not set", 1)
	_, err := Resolve(req(arm64Image(t, strings.Replace(noConsole, "CONFIG_DEVTMPFS=y", "CONFIG_DEVTMPFS=m", 1))))
	if err == nil || !strings.Contains(err.Error(), "CONFIG_DEVTMPFS, CONFIG_SERIAL_AMBA_PL011_CONSOLE") {
		t.Fatalf("a kernel without its console = %v, want both missing options named", err)
	}
	notes.Reset()
	if _, err := Resolve(req(arm64Image(t, ""))); err != nil || !strings.Contains(notes.String(), "carries no config") {
		t.Fatalf("a kernel without IKCONFIG = %v, note %q; want it booted with a note", err, notes.String())
	}
}

// Two processes at once (each its own lock descriptor, as goroutines that
// open the lock file themselves are) unpack one bzImage once: the second
// waits for the first and finds its vmlinux, whole.
func TestUnpackOnceAtOnce(t *testing.T) {
	want := kimagetest.Vmlinux(62)
	kernel := filepath.Join(t.TempDir(), "bzImage")
	if err := os.WriteFile(kernel, kimagetest.BzImage(want, true), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	vmlinux := filepath.Join(cache, "vmlinux", "sum.elf")
	// Both start while another holds the lock, so both wait.
	release, err := buildlock.Hold(vmlinux+".lock", "unpacking vmlinux", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	outs := make([]bytes.Buffer, 2)
	var wg sync.WaitGroup
	for i := range outs {
		r := Request{Host: kbuild.Host{Arch: arch.MustLookup("x86_64"), CacheDir: cache, Progress: progress.New(&outs[i])}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.unpack(kernel, vmlinux); err != nil {
				t.Error(err)
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	release()
	wg.Wait()
	got, err := os.ReadFile(vmlinux)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("vmlinux %d bytes, %v; want the %d-byte ELF", len(got), err, len(want))
	}
	all := outs[0].String() + outs[1].String()
	if n := strings.Count(all, "for a PVH boot ..."); n != 1 {
		t.Errorf("unpacked %d times, want once:\n%s", n, all)
	}
	if n := strings.Count(all, "waiting for another smct unpacking vmlinux"); n != 2 {
		t.Errorf("%d of the two said they wait:\n%s", n, all)
	}
	if left, _ := filepath.Glob(filepath.Join(cache, "vmlinux", "*.tmp*")); len(left) > 0 {
		t.Errorf("left %v", left)
	}
}

// A kernel's config is found where it can be: embedded in the image, the
// config file beside it (a build cached here), or the .config of the build
// directory it sits in; only the embedded one is held against a user's
// kernel.
func TestFindConfig(t *testing.T) {
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	embedded := arm64Image(t, "CONFIG_KASAN=y\n")
	write(filepath.Join(filepath.Dir(embedded), "config"), "CONFIG_LOCKDEP=y\n")

	cached := filepath.Join(t.TempDir(), "kernels", "arm64-0123456789abcdef")
	write(filepath.Join(cached, "config"), "CONFIG_LOCKDEP=y\n# CONFIG_KASAN is not set\n")
	write(filepath.Join(cached, "Image"), string(make([]byte, 0x40)))

	tree := t.TempDir()
	write(filepath.Join(tree, ".config"), "# Automatically generated file; DO NOT EDIT.\nCONFIG_UBSAN=y\n")
	bz := filepath.Join(tree, "arch", "x86", "boot", "bzImage")
	write(bz, "")
	vmlinux := filepath.Join(tree, "vmlinux")
	write(vmlinux, "")

	stray := filepath.Join(t.TempDir(), "Image")
	write(stray, "")
	write(filepath.Join(filepath.Dir(stray), "config"), "not a kernel's\n")

	for _, tc := range []struct {
		name, path, from, option string
	}{
		{"embedded", embedded, EmbeddedConfig, "CONFIG_KASAN"},
		{"beside a cached build", filepath.Join(cached, "Image"), filepath.Join(cached, "config"), "CONFIG_LOCKDEP"},
		{"a tree's bzImage", bz, filepath.Join(tree, ".config"), "CONFIG_UBSAN"},
		{"a tree's vmlinux", vmlinux, filepath.Join(tree, ".config"), "CONFIG_UBSAN"},
		{"a file named config that is none", stray, "", ""},
	} {
		// An image that Inspect does not know stands for the boot file
		// only where it must be read (the embedded case).
		bootable := tc.path
		if tc.name != "embedded" {
			bootable = arm64Image(t, "")
		}
		cfg, from, err := findConfig(tc.path, bootable)
		if err != nil || from != tc.from || tc.option != "" && cfg[tc.option] != "y" || tc.option == "" && cfg != nil {
			t.Errorf("%s: %v from %q, %v; want %s=y from %q", tc.name, cfg, from, err, tc.option, tc.from)
		}
	}

	// A config beside a user's kernel is not held against it.
	var notes bytes.Buffer
	image := arm64Image(t, "")
	write(filepath.Join(filepath.Dir(image), "config"), "CONFIG_KASAN=y\n")
	k, err := Resolve(Request{Choice: kchoice.Choice{Kernel: image}, Host: kbuild.Host{Arch: arch.MustLookup("arm64"), CacheDir: t.TempDir(), Progress: progress.Quiet(&notes, "")}})
	if err != nil || k.Config["CONFIG_KASAN"] != "y" || !strings.Contains(notes.String(), "carries no config") {
		t.Errorf("a user's kernel with a config beside it: %v, %v, notes %q; want it booted unchecked, its config known", k, err, notes.String())
	}
}
