// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/internal/arch"
)

// NewRunDir makes the directory of a run that starts now in parent, and
// points parent/latest at it, so that whoever reads latest reads this run
// from its start. Every command that makes a run names it the same way:
// what made it (kind, "" for a single run), when, and its arch ("" for a
// run of several), e.g. 20260102-150405-arm64, mutants-20260102-150405-arm64,
// matrix-20260102-150405. An arch this project does not know is the user's
// input, refused later: the name says unknown-arch.
func NewRunDir(parent, kind, archName string) (string, error) {
	words := []string{time.Now().Format("20060102-150405")}
	if kind != "" {
		words = append([]string{kind}, words...)
	}
	if archName != "" {
		if !arch.Known(archName) {
			archName = "unknown-arch"
		}
		words = append(words, archName)
	}
	name := strings.Join(words, "-")
	dir := filepath.Join(parent, name)
	for i := 2; ; i++ {
		err := os.MkdirAll(parent, 0o755)
		if err == nil {
			err = os.Mkdir(dir, 0o755)
		}
		if err == nil {
			break
		}
		if !os.IsExist(err) {
			return "", err
		}
		dir = filepath.Join(parent, fmt.Sprintf("%s.%d", name, i))
	}
	// Replace latest by a rename, which is atomic, so that runs starting
	// together in one parent cannot fail on each other's link. The new
	// link's name is the run's own, as its directory's is: no other run
	// makes or renames it.
	latest := filepath.Join(parent, "latest")
	tmp := filepath.Join(parent, ".latest-"+filepath.Base(dir))
	os.Remove(tmp) // a killed run's, whose directory was removed since
	if err := os.Symlink(filepath.Base(dir), tmp); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, latest); err != nil {
		os.Remove(tmp)
		return dir, err
	}
	return dir, nil
}

// WriteReports writes a run's merged reports into its directory as
// Ginkgo's JSON, report.json.
func WriteReports(dir string, reports []types.Report) error {
	js, err := json.MarshalIndent(reports, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "report.json"), js, 0o644)
}

// Console is a run's console.log: every boot's console, whole, under a
// line that names the boot and its command, in the order the boots ended.
type Console struct {
	path string
	mu   sync.Mutex // boots ending side by side take turns
}

// NewConsole is the console.log of the run directory dir.
func NewConsole(dir string) *Console {
	return &Console{path: filepath.Join(dir, "console.log")}
}

// Add appends a boot's console, whole, under its heading line.
func (c *Console) Add(boot, commandLine string, console []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, err := os.OpenFile(c.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "===== boot %s: %s =====\n%s", boot, commandLine, console)
	return errors.Join(err, f.Close())
}

// WriteQEMUCommand writes the command a boot ran into its directory, as a
// shell would run it: qemu-command.txt.
func WriteQEMUCommand(dir string, command []string) error {
	return os.WriteFile(filepath.Join(dir, "qemu-command.txt"), []byte(ShellCommand(command)+"\n"), 0o644)
}

// WriteRerun writes rerun.sh into dir: a script that runs command again,
// what it does said in its comment.
func WriteRerun(dir, what string, command []string) error {
	script := "#!/bin/sh\n# " + what + "\nexec " + ShellCommand(command) + "\n"
	return os.WriteFile(filepath.Join(dir, "rerun.sh"), []byte(script), 0o755)
}
