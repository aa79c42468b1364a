// SPDX-License-Identifier: GPL-2.0-only

package initramfs

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	"github.com/u-root/u-root/pkg/cpio"

	"github.com/ftrace-stackmap/conformance/initramfs/guest"
	"github.com/ftrace-stackmap/conformance/internal/arch"
)

func TestBuildWritesTheGuestAndSkipsWhenUnchanged(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the guest programs")
	}
	root, _ := filepath.Abs("..")
	b := Builder{ModuleDir: root, OutDir: t.TempDir(), Arch: arch.MustLookup("arm64")}
	out, err := b.Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(out)
	defer f.Close()
	recs, err := cpio.ReadAllRecords(cpio.Newc.Reader(f))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]cpio.Info{}
	for _, r := range recs {
		have[r.Name] = r.Info
	}
	for _, name := range []string{"init", "suites.test", "workload", "dev/console", "tmp", "proc", "sys"} {
		if _, ok := have[name]; !ok {
			t.Errorf("archive has no %s", name)
		}
	}
	if c := have["dev/console"]; c.Rmajor != 5 || c.Rminor != 1 {
		t.Errorf("dev/console is %d:%d, want 5:1", c.Rmajor, c.Rminor)
	}
	// The arm64 suite lists its specs here, whatever the host's arch.
	var listed []types.Report
	data, err := os.ReadFile(b.Specs())
	if err == nil {
		err = json.Unmarshal(data, &listed)
	}
	if err != nil || len(listed) != 1 {
		t.Fatalf("the specs' listing: %d reports, %v", len(listed), err)
	}
	if n := len(listed[0].SpecReports.WithLeafNodeType(types.NodeTypeIt).WithState(types.SpecStatePassed)); n < 40 {
		t.Errorf("the listing holds %d specs, want the suite's (over 40)", n)
	}
	stat1, _ := os.Stat(out)
	start := time.Now()
	if _, err := b.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Logf("rebuild with nothing changed: %v", time.Since(start))
	if stat2, _ := os.Stat(out); !stat2.ModTime().Equal(stat1.ModTime()) {
		t.Errorf("Build rewrote the archive although nothing changed")
	}
}

func TestWithRunConfigAppendsAnArchive(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.cpio")
	if err := writeArchive(base, []cpio.Record{cpio.StaticFile("init", "x", 0o755)}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run.cpio")
	if err := WithRunConfig(base, out, guest.RunConfig{Args: []string{"-ginkgo.v"}, TimeoutSeconds: 60}); err != nil {
		t.Fatal(err)
	}
	baseInfo, _ := os.Stat(base)
	f, _ := os.Open(out)
	defer f.Close()
	// The kernel reads concatenated archives in turn; read the second one.
	second := cpio.Newc.Reader(io.NewSectionReader(f, baseInfo.Size(), 1<<30))
	recs, err := cpio.ReadAllRecords(second)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range recs {
		if r.Name == "etc/smct/run.json" {
			found = true
		}
	}
	if !found {
		t.Fatalf("appended archive has no etc/smct/run.json: %v", recs)
	}
	cfgPath := filepath.Join(dir, "run.json")
	os.WriteFile(cfgPath, []byte(`{"args":["-x"],"timeout_seconds":0}`), 0o644)
	if _, err := guest.ReadRunConfig(cfgPath); err == nil {
		t.Fatalf("ReadRunConfig accepted a zero timeout")
	}
}

// A runner that reads only the first archive (LAVA) still finds the run
// configuration: Single writes one archive, and nothing follows it.
func TestSingleWritesOneArchive(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.cpio")
	if err := writeArchive(base, []cpio.Record{cpio.Directory("etc", 0o755), cpio.StaticFile("init", "x", 0o755)}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "one.cpio")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := Single(base, f, guest.RunConfig{Args: []string{"-ginkgo.v"}, TimeoutSeconds: 60}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	data, _ := os.ReadFile(out)
	recs, err := cpio.ReadAllRecords(cpio.Newc.Reader(bytes.NewReader(data)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range recs {
		names = append(names, r.Name)
	}
	if !slices.Contains(names, "init") || !slices.Contains(names, "etc/smct/run.json") {
		t.Errorf("the archive holds %v, want init and etc/smct/run.json", names)
	}
	if n := bytes.Count(data, []byte(cpio.Trailer)); n != 1 {
		t.Errorf("%d trailers, want one archive", n)
	}
}

func TestFloorHoldsOnlyThePowerOffInit(t *testing.T) {
	b := Builder{ModuleDir: "..", OutDir: t.TempDir(), Arch: arch.MustLookup("arm64")}
	out, err := b.Floor(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := cpio.ReadAllRecords(cpio.Newc.Reader(f))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range recs {
		names = append(names, r.Name)
	}
	if !slices.Equal(names, []string{".", "dev", "dev/console", "init"}) {
		t.Fatalf("floor archive holds %v, want the console and init alone", names)
	}
}
