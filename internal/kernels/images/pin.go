// SPDX-License-Identifier: GPL-2.0-only

package images

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ftrace-stackmap/conformance/internal/atomicfile"
	"github.com/ftrace-stackmap/conformance/internal/buildlock"
)

// Pin records a build entry's hashes for an arch in the lock file: its
// inputs', its kernel/ files' (kernel, "" for an entry of another source)
// and its image's. The YAML parser finds the values; only their text
// changes, so the file keeps its layout and comments. The result must
// still read. Pins of two arches at once take turns: each reads the other's.
func Pin(path, entry, arch, inputs, kernel, image string) error {
	// The lock is a file of its own: path itself is replaced by a rename.
	release, err := buildlock.Hold(path+".pin-lock", "pinning "+entry+"/"+arch+" in "+path, os.Stderr)
	if err != nil {
		return err
	}
	defer release()
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return fmt.Errorf("%s: %v", path, err)
	}
	var pins *yaml.Node
	for _, e := range field(doc.Content[0], "entries").Content {
		if n := field(e, "name"); n != nil && n.Value == entry {
			pins = field(field(e, "arches"), arch)
		}
	}
	lines := strings.Split(string(data), "\n")
	values := map[string]string{"inputs_sha256": inputs, "image_sha256": image}
	if kernel != "" {
		values["kernel_sha256"] = kernel
	}
	set := 0
	for key, v := range values {
		n := field(pins, key)
		if n == nil || n.Kind != yaml.ScalarNode || n.Style != 0 {
			continue
		}
		l, c := n.Line-1, n.Column-1
		lines[l] = lines[l][:c] + v + lines[l][c+len(n.Value):]
		set++
	}
	if set != len(values) {
		return fmt.Errorf("%s: entry %s has no %s block with %s to pin", path, entry, arch, strings.Join(slices.Sorted(maps.Keys(values)), ", "))
	}
	// Checked beside the lock, so that its relative paths resolve alike.
	return atomicfile.Produce(path, 0o644, func(tmp string) error {
		if err := os.WriteFile(tmp, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			return err
		}
		_, err := Read(tmp)
		return err
	})
}

// field is the value of key in a YAML mapping node, or nil.
func field(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
