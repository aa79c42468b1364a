// SPDX-License-Identifier: GPL-2.0-only

package atomicfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// entries lists dir's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

func TestWriteReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "answer.json")
	for _, data := range []string{"first", "second"} {
		if err := Write(path, []byte(data), 0o640); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != data {
			t.Fatalf("read %q, %v; want %q", got, err, data)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", fi.Mode().Perm())
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("the directory holds %v, want the file alone", names)
	}
}

// A producer that fails leaves neither its temporary file nor a target,
// and an existing target as it was.
func TestFailingProducerLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "vmlinux")
	boom := errors.New("payload cut short")
	var tmp string
	err := Produce(path, 0o644, func(name string) error {
		tmp = name
		os.WriteFile(name, []byte("half"), 0o644)
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Produce() = %v, want the producer's error", err)
	}
	if filepath.Dir(tmp) != dir {
		t.Errorf("temporary file %s not beside the target", tmp)
	}
	if names := entries(t, dir); len(names) != 0 {
		t.Fatalf("a failed producer left %v", names)
	}
	os.WriteFile(path, []byte("old"), 0o644)
	Produce(path, 0o644, func(string) error { return boom })
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Fatalf("a failed producer changed the target to %q", got)
	}
}

// The rename's error is returned (here: the target is a directory that is
// not empty) and the temporary file removed.
func TestRenameErrorIsReturned(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config")
	if err := os.MkdirAll(filepath.Join(path, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := Write(path, []byte("CONFIG_FTRACE=y\n"), 0o644)
	var le *os.LinkError
	if !errors.As(err, &le) || le.Op != "rename" {
		t.Fatalf("Write() = %v, want the rename's error", err)
	}
	if names := entries(t, dir); len(names) != 1 || names[0] != "config" {
		t.Fatalf("after a failed rename the directory holds %v", names)
	}
}

// Writers at once each write a temporary file of their own: the target is
// always one of them, whole.
func TestWritersAtOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "specs.json")
	const n, size = 8, 1 << 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data := bytes.Repeat([]byte{byte('a' + i)}, size)
			if err := Write(path, data, 0o644); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != size || !bytes.Equal(got, bytes.Repeat(got[:1], size)) {
		t.Fatalf("the target is %d bytes of mixed writers, want %d bytes of one", len(got), size)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Fatalf("the directory holds %v, want the file alone", names)
	}
}
