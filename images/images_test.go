package images

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTheProjectLockIsValid(t *testing.T) {
	l, err := Read("../images.lock")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Entries {
		for _, arch := range []string{"arm64", "x86_64"} {
			if _, ok := e.Arches[arch]; !ok {
				t.Errorf("entry %s has no %s image", e.Name, arch)
			}
		}
	}
}

func TestReadRejectsBadLocks(t *testing.T) {
	sha := strings.Repeat("a", 64)
	good := "default: k\nentries:\n- name: k\n  kind: debian\n  arches:\n    arm64: {package: p, version: v, path: boot/x, deb_sha256: " + sha + ", image_sha256: " + sha + "}\n"
	for name, tc := range map[string]struct{ text, want string }{
		"good":          {good, ""},
		"bad default":   {strings.Replace(good, "default: k", "default: z", 1), "default"},
		"bad kind":      {strings.Replace(good, "kind: debian", "kind: tarball", 1), "kind"},
		"bad arch":      {strings.Replace(good, "arm64:", "riscv64:", 1), "arch"},
		"short hash":    {strings.Replace(good, "image_sha256: "+sha, "image_sha256: abc", 1), "required"},
		"repeated name": {good + "- name: k\n  kind: debian\n", "repeated"},
	} {
		p := filepath.Join(t.TempDir(), "images.lock")
		os.WriteFile(p, []byte(tc.text), 0o644)
		_, err := Read(p)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: Read() = %v, want error containing %q", name, err, tc.want)
		}
	}
}
