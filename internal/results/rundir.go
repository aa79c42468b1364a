// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/buildlock"
	"github.com/ftrace-stackmap/conformance/internal/cachelimit"
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
	// Held while this process lives: a pruner elsewhere keeps the run
	// it makes (PruneRuns).
	buildlock.Share(dir)
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

// DefaultKeepRuns is how many runs results/ keeps unless KEEP_RUNS= says.
const DefaultKeepRuns = 50

// KeepRuns is how many of the newest runs results/ keeps: KEEP_RUNS, else
// DefaultKeepRuns; 0 keeps them all.
func KeepRuns() (int, error) {
	v := os.Getenv("KEEP_RUNS")
	if v == "" {
		return DefaultKeepRuns, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("KEEP_RUNS=%s: want how many runs results/ keeps, 0 for all", v)
	}
	return n, nil
}

// runDirName is a run directory's name, as NewRunDir makes it: its kind,
// when it started, its arch, and a number when one second made several.
var runDirName = regexp.MustCompile(`^(?:[a-z][a-z0-9-]*-)?(\d{8}-\d{6})(?:-[a-z0-9_-]+)?(?:\.(\d+))?$`)

// Runs are the run directories in parent, newest first. A matrix's, a
// mutants' or a walk's is one run, whatever it holds.
func Runs(parent string) ([]string, error) {
	des, err := os.ReadDir(parent)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	type run struct {
		name, started string
		seq           int
	}
	var runs []run
	for _, d := range des {
		m := runDirName.FindStringSubmatch(d.Name())
		if m == nil || !d.IsDir() {
			continue
		}
		seq, _ := strconv.Atoi(m[2])
		runs = append(runs, run{d.Name(), m[1], seq})
	}
	sort.Slice(runs, func(i, j int) bool {
		a, b := runs[i], runs[j]
		if a.started != b.started {
			return a.started > b.started
		}
		if a.seq != b.seq {
			return a.seq > b.seq
		}
		return a.name > b.name
	})
	var out []string
	for _, r := range runs {
		out = append(out, r.name)
	}
	return out, err
}

// PruneRuns removes the run directories of parent beyond the newest keep
// (0 keeps them all), and returns their names. The run latest points at
// stays, and so does a run a process still makes (its directory is held:
// NewRunDir), this one's included.
func PruneRuns(parent string, keep int) ([]string, error) {
	runs, err := Runs(parent)
	if err != nil || keep == 0 || len(runs) <= keep {
		return nil, err
	}
	latest, _ := os.Readlink(filepath.Join(parent, "latest"))
	var removed []string
	var errs []error
	for _, name := range runs[keep:] {
		if name == latest {
			continue
		}
		dir := filepath.Join(parent, name)
		release, ok, err := buildlock.TryHold(dir)
		if err != nil || !ok {
			errs = append(errs, err)
			continue
		}
		err = os.RemoveAll(dir)
		release()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, name)
	}
	return removed, errors.Join(errs...)
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

// BoundRuns keeps the newest runs of parent (KEEP_RUNS=), once a command
// that adds runs has ended, and says through note what it removed.
func BoundRuns(parent string, note func(format string, args ...any)) {
	keep, _ := KeepRuns()
	removed, err := PruneRuns(parent, keep)
	if err != nil {
		note("note: pruning %s: %v\n", parent, err)
	}
	if len(removed) > 0 {
		note("note: removed %d runs from %s, beyond the newest %d (KEEP_RUNS=)\n", len(removed), parent, keep)
	}
}

// ShowRuns says how many runs parent holds, their size and how many it
// keeps (KEEP_RUNS=).
func ShowRuns(w io.Writer, parent string) error {
	keep, err := KeepRuns()
	if err != nil {
		return err
	}
	runs, err := Runs(parent)
	if err != nil {
		return err
	}
	bytes, err := cachelimit.DiskSize(parent)
	if err != nil {
		return err
	}
	size := cachelimit.FormatSize(bytes)
	kept := fmt.Sprintf("the newest %d kept (KEEP_RUNS=)", keep)
	if keep == 0 {
		kept = "all kept (KEEP_RUNS=0)"
	}
	fmt.Fprintf(w, "results %s: %d runs, %s, %s\n", parent, len(runs), size, kept)
	return nil
}
