// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"golang.org/x/sys/unix"

	"github.com/ftrace-stackmap/conformance/initramfs/guest"
	"github.com/ftrace-stackmap/conformance/internal/contract"
)

var (
	root     *TraceFS
	bootTime *Snapshot
	profile  = contract.ProfileV4
	force    bool
	// captureDir receives copies of exports the host checks again with
	// the kernel tree's own tools; nothing is kept when empty.
	captureDir string
	// workloadDelay is a wait before every workload run, so a test of the
	// suite can interrupt a spec while it has settings changed.
	workloadDelay time.Duration
	// workload is the program a workload run execs: by default this binary,
	// which exits at once (live mode has nothing else); the guest has one
	// that does nothing else (initramfs.Workload) and starts far faster.
	workload = selfExe
	// throwaway says the machine is discarded when the run ends (the
	// test VM): nothing is put back, since nothing outlives the run.
	throwaway bool
)

// RegisterFlags adds the suite's own flags to a test binary's flag set.
func RegisterFlags(fs *flag.FlagSet) {
	fs.Var(&profile, "smct.profile", "contract profile to check: v4 or v3")
	fs.BoolVar(&force, "smct.force", false, "run even if tracefs is in use (a tracer, events or instances set up by someone else)")
	fs.DurationVar(&workloadDelay, "smct.workload-delay", 0, "wait this long before each workload run (for testing interruption)")
	fs.StringVar(&workload, "smct.workload", selfExe, "program each workload run execs, which must exit 0 at once")
	registerReportFlags(fs)
	fs.BoolVar(&throwaway, "smct.throwaway", false, "the machine is discarded after the run (a test VM): leave tracefs as the specs left it instead of putting every setting back")
	fs.StringVar(&captureDir, "smct.capture", "", "keep copies of stack_map and stack_map_bin, read together, in this directory")
	fs.DurationVar(&tortureFor, "smct.torture", time.Minute, "how long the torture spec (label torture) runs its actors")
}

// tortureFor is how long the torture spec runs.
var tortureFor time.Duration

// TortureDuration is how long the torture spec runs (-smct.torture).
func TortureDuration() time.Duration { return tortureFor }

// Capturing says whether the run keeps copies of exports (-smct.capture).
func Capturing() bool { return captureDir != "" }

// Capture keeps a copy of an export under name, when the run keeps them.
func Capture(name string, data []byte) {
	if captureDir == "" {
		return
	}
	err := os.MkdirAll(captureDir, 0o755)
	if err == nil {
		err = os.WriteFile(filepath.Join(captureDir, name), data, 0o644)
	}
	if err != nil {
		Note("could not keep a copy of %s for the host: %v", name, err)
	}
}

// Profile is the contract profile this run checks.
func Profile() contract.Profile { return profile }

// SetUpSuite opens tracefs and saves every setting before any spec runs; at
// the end of the suite it restores them and fails the suite if anything still
// differs, unless the machine is thrown away. Call it from BeforeSuite.
func SetUpSuite() {
	guest.MarkIfAsked(guest.StageSetUp)
	t, err := OpenTraceFS()
	if err != nil {
		Fail(err.Error())
	}
	snap, err := t.Save()
	if err != nil {
		Fail(fmt.Sprintf("cannot save tracefs settings: %v", err))
	}
	// A test VM's tracefs is the run's own: what its command line turned
	// on (the torture boot's event) is the boot's doing, not a user's.
	if busy := snap.InUse(); busy != "" && !force && !throwaway {
		Fail(fmt.Sprintf("tracefs is in use (%s): the suite would disturb it; pass -smct.force to run anyway", busy))
	}
	root, bootTime = t, snap
	holdSignals()
	AddReportEntry(contract.KernelEntry, kernelRelease())
	if !throwaway {
		DeferCleanup(restore, snap, Offset(1))
	}
	guest.MarkIfAsked(guest.StageSpecs)
}

// restore stops the specs' writes, puts every setting back and checks that
// none differs.
func restore(snap *Snapshot) error {
	stopSpecWrites()
	if err := snap.Restore(); err != nil {
		return fmt.Errorf("restoring tracefs settings: %w", err)
	}
	if drift := snap.Drift(); len(drift) > 0 {
		return fmt.Errorf("tracefs settings differ after restore: %s", strings.Join(drift, "; "))
	}
	return nil
}

// RestoreAfterRun puts the settings back if the suite's cleanup did not: a
// second interrupt makes Ginkgo skip or abandon its cleanups. Call it after
// RunSpecs returns; when nothing differs it changes nothing.
func RestoreAfterRun() error {
	if bootTime == nil || throwaway {
		return nil // SetUpSuite saved nothing, so nothing was changed; or nothing outlives the run
	}
	stopSpecWrites()
	drift := bootTime.Drift()
	if len(drift) == 0 {
		return nil
	}
	fmt.Fprintf(os.Stderr, "restoring tracefs settings after the run: %s\n", strings.Join(drift, "; "))
	return restore(bootTime)
}

// holdSignals keeps the process alive until the settings are back. Ginkgo
// turns SIGINT and SIGTERM into an interrupt that runs the cleanups; held
// here too, a later one cannot kill RestoreAfterRun. SIGHUP (a dropped adb
// or ssh session) becomes SIGTERM, and with SIGPIPE held, output to a reader
// that is gone fails instead of killing the process.
func holdSignals() {
	signal.Notify(make(chan os.Signal, 1), os.Interrupt, unix.SIGTERM, unix.SIGPIPE)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, unix.SIGHUP)
	go func() {
		for range hup {
			unix.Kill(os.Getpid(), unix.SIGTERM)
		}
	}()
}

// Root is the tracefs the suite runs against.
func Root() *TraceFS {
	if root == nil {
		Unresolved("tracefs not opened: SetUpSuite did not run")
	}
	return root
}

// UseTraceFS makes the specs run against t instead of the tracefs
// SetUpSuite finds: a test runs specs on a fake tracefs, a directory of
// plain files, with nothing saved or restored.
func UseTraceFS(t *TraceFS) { root = t }

// AtStart is the snapshot of the settings taken before the first spec,
// which for a run right after boot are the boot-time settings.
func AtStart() *Snapshot { return bootTime }

// Option returns an option's value in the snapshot, and whether it existed.
func (s *Snapshot) Option(name string) (string, bool) {
	v, ok := s.options[name]
	return v, ok
}

// Set writes value to node and restores the old value when the spec ends.
// A failed write means the spec cannot set up: UNRESOLVED.
func Set(t *TraceFS, node, value string) {
	old, err := t.ReadTrimmed(node)
	if err != nil {
		Unresolved("cannot read %s: %v", node, err)
	}
	if strings.HasSuffix(node, "/enable") {
		// An event with a trigger reads "0*" (soft mode): "0" is its value.
		old = strings.TrimSuffix(old, "*")
	}
	if err := t.Write(node, value); err != nil {
		Unresolved("cannot write %q to %s: %v", value, node, err)
	}
	DeferCleanup(t.Write, node, old, Offset(1))
}

// The workload: the suite binary run again with this variable set exits at
// once, making exactly one sched_process_exec event with a known filename.
const workloadEnv = "SMCT_WORKLOAD"

// selfExe runs this binary as the workload.
const selfExe = "/proc/self/exe"

func init() {
	if os.Getenv(workloadEnv) == "noop" {
		os.Exit(0)
	}
}

// WorkloadFilename is what sched_process_exec reports for a workload run.
func WorkloadFilename() string { return workload }

// RunWorkload execs the workload n times, each exiting at once.
func RunWorkload(n int) error {
	for i := 0; i < n; i++ {
		time.Sleep(workloadDelay)
		cmd := exec.Command(workload)
		cmd.Env = append(os.Environ(), workloadEnv+"=noop")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("workload run %d (%s): %v: %s", i, workload, err, out)
		}
	}
	return nil
}

func kernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return fmt.Sprintf("%s %s %s", unix.ByteSliceToString(u.Release[:]), unix.ByteSliceToString(u.Version[:]), unix.ByteSliceToString(u.Machine[:]))
}
