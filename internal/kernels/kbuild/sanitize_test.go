// SPDX-License-Identifier: GPL-2.0-only

package kbuild

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/kernels/kchoice"
)

func writeFile(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Every line of the project's fragments must reach .config, "is not set"
// lines too; the tree's own fragment (debug.config) is met where it can
// be, and its lines that are not are returned, not refused.
func TestCheckConfig(t *testing.T) {
	dir := t.TempDir()
	config := writeFile(t, filepath.Join(dir, "out", ".config"), `CONFIG_SLUB=y
CONFIG_KASAN=y
# CONFIG_SLUB_TINY is not set
CONFIG_DEBUG_INFO_NONE=y
CONFIG_KFENCE=y
`)
	project := writeFile(t, filepath.Join(dir, "kernel", "config", "sanitize.config"), `# comment
CONFIG_SLUB=y
# CONFIG_SLUB_TINY is not set
# CONFIG_DEBUG_KMEMLEAK_DEFAULT_OFF is not set
CONFIG_KASAN=y
`)
	debug := writeFile(t, filepath.Join(dir, "src", DebugConfig), `CONFIG_KASAN=y
CONFIG_DEBUG_INFO=y
CONFIG_DEBUG_VM_VMACACHE=y
# CONFIG_KFENCE is not set
# CONFIG_PAGE_POISONING is not set
`)
	fragments := []string{debug, project}
	unmet, err := checkConfig(config, fragments, treeFragments(fragments, filepath.Join(dir, "src")), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"CONFIG_DEBUG_INFO=y (debug.config)", "CONFIG_DEBUG_VM_VMACACHE=y (debug.config)", "# CONFIG_KFENCE is not set (debug.config)"}
	if !reflect.DeepEqual(unmet, want) {
		t.Errorf("unmet %q, want %q", unmet, want)
	}

	// The project's lines are refused by name: an option set that must
	// not be, one a dependency kept out, one the feature's absence excuses.
	writeFile(t, project, "CONFIG_SLUB=y\n# CONFIG_KFENCE is not set\nCONFIG_KASAN_VMALLOC=y\nCONFIG_PROVE_LOCKING=y\nCONFIG_FTRACE_STACKMAP=y\n")
	_, err = checkConfig(config, fragments, treeFragments(fragments, filepath.Join(dir, "src")), []string{FeatureOption})
	wantErr := "kernel config lacks fragment lines (unmet dependencies?): # CONFIG_KFENCE is not set (sanitize.config), CONFIG_KASAN_VMALLOC=y (sanitize.config), CONFIG_PROVE_LOCKING=y (sanitize.config)"
	if err == nil || err.Error() != wantErr {
		t.Errorf("checkConfig: %v\nwant: %s", err, wantErr)
	}

	for l, want := range map[string]string{"# CONFIG_KFENCE is not set": "CONFIG_KFENCE", "# CONFIG_A is not set, really": "", "# not set": "", "CONFIG_A=y": ""} {
		if got, ok := notSet(l); got != want && ok || ok != (want != "") {
			t.Errorf("notSet(%q) = %q, %v; want %q", l, got, ok, want)
		}
	}
}

// The sanitized lane merges the tree's debug.config and then the
// project's sanitize.config; its config is named after them (KCIDB's
// config_name).
func TestLaneFragments(t *testing.T) {
	b := Builder{Env{Host: Host{Arch: arm64, KernelDir: "/p/kernel"}}}
	if got := b.laneFragments("/src"); !reflect.DeepEqual(got, b.fragments()) {
		t.Errorf("plain lane: %v", got)
	}
	b.Lane = kchoice.Sanitized
	got := b.laneFragments("/src")
	want := []string{"/p/kernel/config/common.config", "/p/kernel/config/arm64.config", "/src/kernel/configs/debug.config", "/p/kernel/config/sanitize.config"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sanitized lane: %v, want %v", got, want)
	}
	if name := ConfigName(got); name != "tinyconfig+common+arm64+debug+sanitize" {
		t.Errorf("ConfigName = %q", name)
	}
	if own := treeFragments(got, "/src"); !reflect.DeepEqual(own, want[2:3]) {
		t.Errorf("the tree's fragments: %v", own)
	}
	if own := treeFragments(got, "/sr"); len(own) != 0 {
		t.Errorf("a path that only begins like the tree's: %v", own)
	}
	if proj := treeless(got, "/src"); !reflect.DeepEqual(proj, []string{want[0], want[1], want[3]}) {
		t.Errorf("the project's fragments: %v", proj)
	}
}

// A plain and a sanitized build never share a build directory, a log, a
// lock or a cached kernel.
func TestLanesApart(t *testing.T) {
	plain := Builder{Env{Host: Host{Arch: arm64, CacheDir: "/c"}}}
	sanitized := plain
	sanitized.Lane = kchoice.Sanitized
	key := strings.Repeat("ab", 32)
	for what, pair := range map[string][2]string{
		"source tree":   {plain.src(), sanitized.src()},
		"cached kernel": {plain.cached(key), sanitized.cached(key)},
		"TREE= builds":  {localWork("/c", "/t", "arm64", kchoice.Plain), localWork("/c", "/t", "arm64", kchoice.Sanitized)},
		"TREE= log":     {LocalBuildLog("/c", "/t", "arm64", kchoice.Plain), LocalBuildLog("/c", "/t", "arm64", kchoice.Sanitized)},
	} {
		if pair[0] == pair[1] {
			t.Errorf("%s shared: %s", what, pair[0])
		}
	}
	// The plain lane's paths are what they were.
	if plain.src() != "/c/kbuild/src-arm64" || plain.cached(key) != "/c/kernels/arm64-abababababababab/Image" {
		t.Errorf("plain paths moved: %s, %s", plain.src(), plain.cached(key))
	}
	if sanitized.cached(key) != "/c/kernels/arm64-sanitized-abababababababab/Image" {
		t.Errorf("sanitized kernel cached as %s", sanitized.cached(key))
	}
}

// A sanitized build is keyed by the lane, sanitize.config and the tree's
// debug.config; a plain build's key is what it was before the lane.
func TestSanitizedKey(t *testing.T) {
	kernelDir := t.TempDir()
	writeFile(t, filepath.Join(kernelDir, "config", "common.config"), "CONFIG_FTRACE=y\n")
	writeFile(t, filepath.Join(kernelDir, "config", "arm64.config"), "CONFIG_OF=y\n")
	writeFile(t, filepath.Join(kernelDir, SanitizeConfig), "CONFIG_KASAN=y\n")
	tree := t.TempDir()
	debug := writeFile(t, filepath.Join(tree, DebugConfig), "CONFIG_KASAN=y\n")
	state := TreeState{Dir: tree, Commit: strings.Repeat("1", 40)}
	key := func(l kchoice.Lane) (string, LocalInputs) {
		t.Helper()
		lt := LocalTree{Dir: tree, Env: Env{Host: Host{Arch: arm64, KernelDir: kernelDir}, Lane: l}}
		in, err := lt.inputs(state, lt.builder().laneFragments(tree))
		if err != nil {
			t.Fatal(err)
		}
		return inputsKey(in), in
	}
	plainKey, plain := key(kchoice.Plain)
	js, _ := json.Marshal(plain)
	if strings.Contains(string(js), "sanitize") || strings.Contains(string(js), "debug_config") {
		t.Errorf("a plain build's inputs name the lane: %s", js)
	}
	sanitizedKey, in := key(kchoice.Sanitized)
	if sanitizedKey == plainKey || !in.Lane.IsSanitized() || in.DebugConfig == "" || in.Files[SanitizeConfig] == "" {
		t.Errorf("sanitized inputs %+v", in)
	}
	writeFile(t, debug, "CONFIG_KASAN=y\nCONFIG_UBSAN=y\n")
	if k, _ := key(kchoice.Sanitized); k == sanitizedKey {
		t.Errorf("the key does not change with the tree's debug.config")
	}
	writeFile(t, filepath.Join(kernelDir, SanitizeConfig), "CONFIG_KASAN=y\nCONFIG_DEBUG_LIST=y\n")
	if k, _ := key(kchoice.Sanitized); k == sanitizedKey {
		t.Errorf("the key does not change with sanitize.config")
	}
	if k, _ := key(kchoice.Plain); k != plainKey {
		t.Errorf("the plain key changed with the lane's files")
	}

	// The reference kernel's and a b4 entry's inputs, likewise.
	for _, in := range []any{Inputs{Arch: "arm64"}, TreeInputs{Arch: "arm64"}} {
		js, _ := json.Marshal(in)
		if strings.Contains(string(js), "sanitize") || strings.Contains(string(js), "debug_config") {
			t.Errorf("a plain build's inputs name the lane: %s", js)
		}
	}
	if inputsKey(Inputs{Arch: "arm64"}) == inputsKey(Inputs{Arch: "arm64", Lane: kchoice.Sanitized}) ||
		inputsKey(TreeInputs{Arch: "arm64"}) == inputsKey(TreeInputs{Arch: "arm64", Lane: kchoice.Sanitized}) {
		t.Errorf("the lane is not in the key")
	}
}

// A sanitized build of a tree without debug.config stops before anything
// is installed or built, naming the file.
func TestSanitizedTreeNeedsDebugConfig(t *testing.T) {
	tree := t.TempDir()
	for _, d := range []string{"kernel/trace", "arch/arm64"} {
		os.MkdirAll(filepath.Join(tree, d), 0o755)
	}
	writeFile(t, filepath.Join(tree, "Makefile"), "")
	_, _, err := LocalTree{Dir: tree, Env: Env{Host: Host{Arch: arm64, CacheDir: t.TempDir()}, Lane: kchoice.Sanitized}}.Build()
	if err == nil || !strings.Contains(err.Error(), "SANITIZE=1 merges the tree's kernel/configs/debug.config, which "+tree+" does not have") {
		t.Errorf("Build: %v", err)
	}
}

// The project's sanitize.config explains every line, and restates each
// check the lane stands for, so that each is held to .config.
func TestSanitizeFragment(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "kernel", SanitizeConfig))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	have := map[string]bool{}
	explained := false
	for _, l := range lines {
		if name, ok := notSet(l); ok {
			have["# "+name+" is not set"] = true
		} else if strings.HasPrefix(l, "#") {
			explained = true
			continue
		} else if l == "" {
			explained = false
			continue
		}
		if !explained {
			t.Errorf("%q has no comment above it", l)
		}
		have[l] = true
	}
	for _, l := range []string{"CONFIG_KASAN=y", "CONFIG_KASAN_GENERIC=y", "CONFIG_KASAN_VMALLOC=y", "CONFIG_PROVE_LOCKING=y",
		"CONFIG_DEBUG_ATOMIC_SLEEP=y", "CONFIG_UBSAN=y", "CONFIG_DEBUG_OBJECTS=y", "CONFIG_DEBUG_KMEMLEAK=y", "CONFIG_DEBUG_LIST=y",
		"# CONFIG_SLUB_TINY is not set", "# CONFIG_DEBUG_KMEMLEAK_DEFAULT_OFF is not set"} {
		if !have[l] {
			t.Errorf("sanitize.config lacks %q", l)
		}
	}
}
