// SPDX-License-Identifier: GPL-2.0-only

package dumpcheck

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	fmtx "github.com/ftrace-stackmap/conformance/internal/stackmapfmt"
)

// export writes a v4 stack_map_bin of two stacks and its stack_map.
func export(t *testing.T, dir string) (bin, text string) {
	le := binary.LittleEndian
	data := le.AppendUint32(nil, fmtx.MagicV4)
	data = le.AppendUint32(data, 1)
	data = le.AppendUint32(data, 2)
	data = le.AppendUint32(data, 0)
	for _, r := range []struct {
		id, ref uint32
		addrs   []uint64
	}{{1, 3, []uint64{0xffff800080010000, 0xffff800080020010}}, {5, 1, []uint64{0xffff800080030020}}} {
		data = le.AppendUint32(data, r.id)
		data = le.AppendUint32(data, uint32(len(r.addrs)))
		data = le.AppendUint32(data, r.ref)
		data = le.AppendUint32(data, 0)
		for _, a := range r.addrs {
			data = le.AppendUint64(data, a)
		}
	}
	bin, text = filepath.Join(dir, "stack_map_bin"), filepath.Join(dir, "stack_map")
	os.WriteFile(bin, data, 0o644)
	os.WriteFile(text, []byte("stack_id 1 [ref 3, depth 2]\n  [0] a+0x0/0x10\n  [1] b+0x10/0x20\n\nstack_id 5 [ref 1, depth 1]\n  [0] c+0x20/0x40\n\n"), 0o644)
	return bin, text
}

// decoder writes a stand-in for a tree's decoder: a Python reading of the
// layout, header check and frame handling given.
func decoder(t *testing.T, dir, magic, frames string) string {
	t.Helper()
	script := `import json, struct, sys
data = open(sys.argv[1], 'rb').read()
magic, version, nr, _ = struct.unpack_from('<IIII', data, 0)
if magic != ` + magic + `:
    sys.exit('bad magic 0x%x' % magic)
off, out = 16, []
for _ in range(nr):
    sid, n, ref, _ = struct.unpack_from('<IIII', data, off)
    off += 16
    ips = struct.unpack_from('<%dQ' % n, data, off)
    off += 8 * n
    out.append({'stack_id': sid, 'ref_count': ref, 'ips': ['0x%x' % ip for ip in ips` + frames + `]})
print(json.dumps(out))
`
	p := filepath.Join(dir, "stackmap_dump.py")
	os.WriteFile(p, []byte(script), 0o755)
	return p
}

func TestDecoderIsHeldToTheExport(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatalf("python3 is needed to run a tree's decoder: %v", err)
	}
	for name, tc := range map[string]struct{ magic, frames, want string }{
		"agrees":           {"0x46534D42", "", ""},
		"v3 header on v4":  {"0x464D5342", "", "the decoder failed on the kernel's export"},
		"drops a frame":    {"0x46534D42", "[1:]", "depth 1, the export 2"},
		"reverses a stack": {"0x46534D42", "[::-1]", "frame [0]: the decoder says 0xffff800080020010"},
	} {
		dir := t.TempDir()
		bin, text := export(t, dir)
		c, err := Run(decoder(t, dir, tc.magic, tc.frames), bin, text, binary.LittleEndian)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := strings.Join(c.Problems, "; ")
		if tc.want == "" && !c.Agrees() || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: problems %q, want %q", name, got, tc.want)
		}
		if c.Stacks != 2 {
			t.Errorf("%s: %d stacks, want 2", name, c.Stacks)
		}
	}
}

func TestFindLooksInTheTree(t *testing.T) {
	tree := t.TempDir()
	if Find(tree) != "" {
		t.Fatalf("found a decoder in an empty tree")
	}
	os.MkdirAll(filepath.Join(tree, "tools", "tracing"), 0o755)
	os.WriteFile(filepath.Join(tree, Tool), []byte("#!/usr/bin/env python3\n"), 0o755)
	if Find(tree) != filepath.Join(tree, Tool) {
		t.Fatalf("Find = %q", Find(tree))
	}
}
