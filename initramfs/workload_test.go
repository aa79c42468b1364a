// SPDX-License-Identifier: GPL-2.0-only

package initramfs

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/arch"
)

func TestWorkloadIsAnExecutableForItsArch(t *testing.T) {
	for goarch, machine := range map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64} {
		a, err := arch.ByGOARCH(goarch)
		if err != nil {
			t.Fatal(err)
		}
		data, err := Workload(a)
		if err != nil {
			t.Fatal(err)
		}
		f, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: not an ELF file: %v", goarch, err)
		}
		if f.Machine != machine || f.Class != elf.ELFCLASS64 || f.Type != elf.ET_EXEC {
			t.Errorf("%s: %v %v %v, want %v ELFCLASS64 ET_EXEC", goarch, f.Machine, f.Class, f.Type, machine)
		}
		if len(f.Progs) != 1 || f.Progs[0].Type != elf.PT_LOAD {
			t.Fatalf("%s: want one PT_LOAD segment, have %v", goarch, f.Progs)
		}
		p := f.Progs[0]
		code := a.ExitGroup
		if f.Entry < p.Vaddr || f.Entry+uint64(len(code)) > p.Vaddr+p.Filesz || p.Flags&elf.PF_X == 0 {
			t.Errorf("%s: entry %#x is not in the executable segment %#x+%d", goarch, f.Entry, p.Vaddr, p.Filesz)
		}
		if at := f.Entry - p.Vaddr; !bytes.Equal(data[p.Off+at:], code) {
			t.Errorf("%s: the entry point does not hold the exit code", goarch)
		}
	}
	if _, err := Workload(arch.Arch{Name: "riscv64"}); err == nil {
		t.Error("an arch without exit code gave a workload")
	}
}

// The host runs its own arch's workload: it must exit 0 at once.
func TestWorkloadRunsAndExitsZero(t *testing.T) {
	a, err := arch.ByGOARCH(runtime.GOARCH)
	if err != nil {
		t.Skipf("host arch %s: %v", runtime.GOARCH, err)
	}
	data, err := Workload(a)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "workload")
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(path).CombinedOutput()
	if err != nil {
		t.Fatalf("running the workload: %v %s", err, out)
	}
}
