// SPDX-License-Identifier: GPL-2.0-only

package lava

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/textlines"
)

// LavaRun is LAVA's dispatcher, which runs a job without a server.
const LavaRun = "/usr/bin/lava-run"

// DownloadDir is where lava-run keeps a job's downloads while it runs.
const DownloadDir = "/var/lib/lava/dispatcher/tmp"

// ErrNoDispatcher says lava-dispatcher is not installed here.
var ErrNoDispatcher = errors.New("lava-dispatcher is not installed (apt-get install --no-install-recommends lava-dispatcher)")

// schemaCheck validates a job (and a device dictionary, or a Lava-Test
// test definition) with the schemas of the dispatcher's own Python
// package, as a LAVA server does when a job is submitted.
const schemaCheck = `
import sys, yaml
from voluptuous import Schema
from lava_common.schemas import validate
from lava_common.schemas.device import validate as validate_device
from lava_common.schemas.test.testdef import testdef
kind, path = sys.argv[1], sys.argv[2]
data = yaml.safe_load(open(path))
try:
    if kind == "job":
        validate(data, strict=True)
    elif kind == "device":
        validate_device(data)
    else:
        Schema(testdef())(data)
except Exception as e:
    print("%s: %s" % (path, e))
    sys.exit(1)
`

// python is the interpreter lava-run runs with, which has LAVA's packages.
func python() (string, error) {
	f, err := os.Open(LavaRun)
	if err != nil {
		return "", ErrNoDispatcher
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	words := strings.Fields(strings.TrimPrefix(line, "#!"))
	if len(words) == 0 {
		return "", fmt.Errorf("%s: no interpreter line", LavaRun)
	}
	return words[0], nil
}

// CheckSchema validates a file with LAVA's schema for its kind: "job",
// "device", or "testdef" (a Lava-Test test definition). It returns
// ErrNoDispatcher when lava-dispatcher is not installed.
func CheckSchema(ctx context.Context, kind, path string) error {
	py, err := python()
	if err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, py, "-c", schemaCheck, kind, path).CombinedOutput()
	if err != nil {
		return fmt.Errorf("LAVA's %s schema refuses it: %s", kind, textlines.Tail(strings.TrimSpace(string(out)), 5))
	}
	return nil
}

// Validate checks a written job as LAVA would: the job and the device
// dictionary against LAVA's schemas, then, when asked (full) and as root,
// lava-run --validate, which builds the job's pipeline for the device and
// checks its artefacts and QEMU. It returns ErrNoDispatcher when
// lava-dispatcher is not installed.
func Validate(ctx context.Context, f *Files, full bool) error {
	if err := CheckSchema(ctx, "job", f.Job); err != nil {
		return err
	}
	if err := CheckSchema(ctx, "device", f.Device); err != nil {
		return err
	}
	if !full || os.Geteuid() != 0 {
		return nil
	}
	out, err := os.MkdirTemp("", "smct-lava-validate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(out)
	// The pipeline makes its download directories under LAVA's own
	// tmp/<prefix><job id>, and only a job that runs removes them.
	prefix := filepath.Base(out) + "-"
	dispatcher := filepath.Join(out, "dispatcher.yaml")
	if err := os.WriteFile(dispatcher, []byte("prefix: "+prefix+"\n"), 0o644); err != nil {
		return err
	}
	defer os.RemoveAll(filepath.Join(DownloadDir, prefix+"0"))
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, LavaRun, "--validate", "--job-id", "0", "--output-dir", filepath.Join(out, "output"),
		"--dispatcher", dispatcher, "--device", f.Device, f.Job)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		why := textlines.Tail(stderr.String(), 5)
		if l, perr := ParseLog(&stderr); perr == nil && l.Failed() != "" {
			why = l.Failed()
		}
		return fmt.Errorf("lava-run --validate refuses it: %s", why)
	}
	return nil
}
