// SPDX-License-Identifier: GPL-2.0-only

// Package lava runs the suite as a LAVA job and reads back what LAVA
// recorded: a job for LAVA's qemu device type with a deploy, boot and
// test block per boot plan, the device dictionary a standalone lava-run
// needs, and LAVA's YAML log, whose console is judged by the suite's own
// code (qemutest.Collect).
package lava

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/consoleframe"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// Artefact is a file a job downloads, gzip-compressed.
type Artefact struct {
	Path   string // here
	SHA256 string // of the compressed file, which LAVA checks
}

// Block is one boot of the job: a deploy, boot and test block in a
// namespace named after its boot plan.
type Block struct {
	Name        string // the boot plan's
	CommandLine string // the kernel's
	CPUs        int
	Initrd      Artefact
	Timeout     time.Duration // the boot's whole time, as a run here gives it
	Quiet       time.Duration // the console's longest silence; QuietTimeout when 0
}

// Job is one run as a LAVA job.
type Job struct {
	Name    string
	Arch    arch.Arch
	Machine qemu.Machine // the device dictionary's QEMU
	Memory  string       // QEMU's -m, megabytes
	Kernel  Artefact
	Blocks  []Block
	// URL is where a lab serves the directory of the artefacts; "" names
	// them with file:// paths on this machine.
	URL string
	// Notify is where the LAVA server posts the job's data when it ends
	// (the job's notify callback), "" for nowhere.
	Notify   string
	Metadata map[string]string
}

// Timeouts of a block besides its boot's: the artefacts' download, and
// the silence of a console before LAVA stops reading it, the longest
// quiet spell of a run.
const (
	DeployTimeout = 5 * time.Minute
	QuietTimeout  = qemutest.RunQuiet
)

// Suite is the LAVA test suite of a boot's cases: stackmap_<boot>. LAVA
// names a monitor's suite as the job does (lower case, no "N_" prefix as
// a test definition's gets), and KernelCI's LAVA callback keeps what
// follows the first "_" of a suite's name: the boot.
func Suite(boot string) string { return "stackmap_" + boot }

// The monitor's patterns. It starts at once: a kernel that dies before the
// suite starts prints nothing else to wait for. It ends at the guest's
// status line, after every frame, or at a panic, before QEMU exits
// (-no-reboot) and LAVA would end the whole job on the closed console.
// Each pattern takes its line whole, to its newline (after one or two
// carriage returns: the guest's tty and LAVA's each add one): LAVA matches
// the console as it reads it, and a line cut between two reads would give
// a result cut short, or log the rest of the line apart from the console.
//
// A kernel that panics is a case too, so that a dashboard sees the boot
// die and not only its cases stop: the pattern takes the panic's first
// two words as the case "Kernel" and its result "panic", a failure, and
// the end the rest of the line. LAVA takes the earliest match, and the
// case starts before the end's part of the line.
var (
	monitorEnd     = "(" + consoleframe.ExitTag + " code=|" + consoleframe.GuestErrorTag + "|" + panicRest + `)[^\n]*\n`
	monitorPattern = "(?:" + consoleframe.CaseTag + " |(?=" + qemu.PanicMarker + "))" +
		`(?P<test_case_id>\S+) (?P<result>[A-Za-z]+)(?:\r*\n| - )`
	// UNRESOLVED is never a pass: a failure, as the closing line counts it.
	fixup = map[string]string{string(contract.Pass): "pass", string(contract.Fail): "fail",
		string(contract.Unsupported): "skip", string(contract.Unresolved): "fail", panicResult: "fail"}
)

// The panic's case as the pattern reads it ("Kernel panic - not
// syncing"), and what is left of its line for the end.
const (
	PanicCase   = "Kernel"
	panicResult = "panic"
	panicRest   = "not syncing"
)

type (
	jobFile struct {
		JobName    string            `yaml:"job_name"`
		DeviceType string            `yaml:"device_type"`
		Visibility string            `yaml:"visibility"`
		Priority   string            `yaml:"priority"`
		Timeouts   map[string]limit  `yaml:"timeouts"`
		Context    map[string]any    `yaml:"context"`
		Metadata   map[string]string `yaml:"metadata,omitempty"`
		Notify     *notify           `yaml:"notify,omitempty"`
		Actions    []action          `yaml:"actions"`
	}
	// notify asks the LAVA server to post the job's data, its log and
	// results, when the job ends, as KernelCI's labs do.
	notify struct {
		Criteria map[string]string `yaml:"criteria"`
		Callback notifyCallback    `yaml:"callback"`
	}
	notifyCallback struct {
		URL         string `yaml:"url"`
		Method      string `yaml:"method"`
		Dataset     string `yaml:"dataset"`
		ContentType string `yaml:"content-type"`
	}
	limit struct {
		Minutes int  `yaml:"minutes,omitempty"`
		Seconds int  `yaml:"seconds,omitempty"`
		Skip    bool `yaml:"skip,omitempty"`
	}
	action struct {
		Deploy *deploy `yaml:"deploy,omitempty"`
		Boot   *boot   `yaml:"boot,omitempty"`
		Test   *test   `yaml:"test,omitempty"`
	}
	deploy struct {
		Namespace string           `yaml:"namespace"`
		Timeout   limit            `yaml:"timeout"`
		To        string           `yaml:"to"`
		Images    map[string]image `yaml:"images"`
	}
	image struct {
		URL         string `yaml:"url"`
		Compression string `yaml:"compression"`
		SHA256      string `yaml:"sha256sum"`
		ImageArg    string `yaml:"image_arg"`
	}
	boot struct {
		Namespace string `yaml:"namespace"`
		Timeout   limit  `yaml:"timeout"`
		Method    string `yaml:"method"`
		Media     string `yaml:"media"`
	}
	test struct {
		Namespace string    `yaml:"namespace"`
		Timeout   limit     `yaml:"timeout"`
		Monitors  []monitor `yaml:"monitors"`
	}
	monitor struct {
		Name      string            `yaml:"name"`
		Start     string            `yaml:"start"`
		End       string            `yaml:"end"`
		Pattern   string            `yaml:"pattern"`
		Fixupdict map[string]string `yaml:"fixupdict"`
	}
)

// limitOf is a duration as LAVA's timeouts give it: whole minutes, else
// seconds, at least one.
// quiet is the block's console silence limit.
func (b Block) quiet() time.Duration {
	if b.Quiet > 0 {
		return b.Quiet
	}
	return QuietTimeout
}

func limitOf(d time.Duration) limit {
	s := max(1, int((d+time.Second-1)/time.Second))
	if s%60 == 0 {
		return limit{Minutes: s / 60}
	}
	return limit{Seconds: s}
}

// url is where LAVA fetches an artefact.
func (j Job) url(a Artefact) string {
	name := a.Path[strings.LastIndex(a.Path, "/")+1:]
	if j.URL == "" {
		return "file://" + a.Path
	}
	return strings.TrimSuffix(j.URL, "/") + "/" + name
}

// YAML is the job definition.
func (j Job) YAML() ([]byte, error) {
	for _, b := range j.Blocks {
		if strings.Contains(b.CommandLine, `"`) {
			return nil, fmt.Errorf("boot %s: a kernel command line with a double quote cannot be given in image_arg", b.Name)
		}
	}
	f := jobFile{JobName: j.Name, DeviceType: "qemu", Visibility: "public", Priority: "medium",
		Context: j.context(), Metadata: j.Metadata}
	if j.Notify != "" {
		f.Notify = &notify{Criteria: map[string]string{"status": "finished"},
			Callback: notifyCallback{URL: j.Notify, Method: "POST", Dataset: "all", ContentType: "json"}}
	}
	total := time.Minute // lava-run's own start and end
	for _, b := range j.Blocks {
		ns := b.Name
		args := fmt.Sprintf(`-kernel {kernel} -append "%s" -no-reboot`, b.CommandLine)
		if b.CPUs > 1 {
			args += fmt.Sprintf(" -smp %d,sockets=%d", b.CPUs, b.CPUs)
		}
		f.Actions = append(f.Actions,
			action{Deploy: &deploy{Namespace: ns, Timeout: limitOf(DeployTimeout), To: "tmpfs", Images: map[string]image{
				"kernel":  {URL: j.url(j.Kernel), Compression: "gz", SHA256: j.Kernel.SHA256, ImageArg: args},
				"ramdisk": {URL: j.url(b.Initrd), Compression: "gz", SHA256: b.Initrd.SHA256, ImageArg: "-initrd {ramdisk}"},
			}}},
			// The boot only starts QEMU; its time is, for LAVA, how long the
			// test may wait for the next line of the console.
			action{Boot: &boot{Namespace: ns, Timeout: limitOf(b.quiet()), Method: "qemu", Media: "tmpfs"}},
			// A boot that hangs ends its block, not the job: the next
			// boots still run, as they do here.
			action{Test: &test{Namespace: ns, Timeout: skippable(limitOf(b.Timeout)), Monitors: []monitor{{
				Name: Suite(b.Name), End: monitorEnd, Pattern: monitorPattern, Fixupdict: fixup}}}},
		)
		total += DeployTimeout + b.quiet() + b.Timeout
	}
	f.Timeouts = map[string]limit{"job": limitOf(total.Round(time.Minute))}
	out, err := marshal(f)
	if err != nil {
		return nil, err
	}
	head := fmt.Sprintf("# LAVA job: the stackmap conformance suite, one deploy, boot and test block per boot.\n"+
		"# Each boot's cases are LAVA test suite %s; `smct lava-results` turns LAVA's log\n"+
		"# of it into the suite's verdict.\n", Suite("<boot>"))
	return append([]byte(head), out...), nil
}

// context is what a LAVA server renders the job's device from with the
// qemu device type's template: the arch, machine, CPU and memory the suite
// boots, no_kvm as the run chose its accelerator, and as extra_options
// (added last to QEMU's) what the stock template drops for the arch: on
// x86_64 it reads neither machine nor cpu (QEMU's pc, and -cpu host with
// KVM); on arm64 it reads both but never enables KVM. A dictionary that
// sets no_kvm itself overrides the job's.
func (j Job) context() map[string]any {
	m := machineWords(j.Machine.Args)
	c := map[string]any{"arch": j.Arch.Name, "machine": m["-M"], "cpu": m["-cpu"], "memory": j.Memory}
	kvm := j.Machine.Accel.Name == "kvm"
	if j.Machine.Accel.Name != "" {
		c["no_kvm"] = !kvm
	}
	var extra []string
	switch j.Arch.Name {
	case "x86_64":
		extra = []string{"-machine " + m["-M"], "-cpu " + m["-cpu"]}
	case "arm64":
		if kvm {
			extra = []string{"-enable-kvm"}
		}
	}
	if len(extra) > 0 {
		c["extra_options"] = extra
	}
	return c
}

// marshal writes YAML indented as LAVA's own examples are.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

func skippable(l limit) limit {
	l.Skip = true
	return l
}

// machineWords reads QEMU's options as a map of option to value:
// "-M q35 -cpu qemu64" gives -M: q35, -cpu: qemu64.
func machineWords(args []string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(args); i += 2 {
		m[args[i]] = args[i+1]
	}
	return m
}

// device is the dictionary lava-run reads, with the constants the
// dispatcher insists on.
type device struct {
	Constants              map[string]any `yaml:"constants"`
	Parameters             map[string]any `yaml:"parameters"`
	AvailableArchitectures []string       `yaml:"available_architectures"`
	Actions                map[string]any `yaml:"actions"`
	Timeouts               map[string]any `yaml:"timeouts"`
}

// Device is the device dictionary of this machine's QEMU for the job's
// arch, as a standalone lava-run needs it: LAVA's qemu device type keys,
// the machine and CPU as the suite boots them here.
func (j Job) Device() ([]byte, error) {
	var options []string
	args := j.Machine.Args
	for i := 0; i+1 < len(args); i += 2 {
		options = append(options, args[i]+" "+args[i+1])
	}
	options = append(options, "-m "+j.Memory, "-nographic", "-nic none")
	d := device{
		Constants: map[string]any{
			"failure_retry": nil, "boot_retry": nil,
			"kernel-start-message": "Linux version [0-9]",
			"default-shell-prompt": "lava-test: # ",
			"shutdown-message":     "The system is going down for reboot NOW",
			"spawn_maxread":        "4092",
			"posix":                map[string]string{"lava_test_sh_cmd": "/bin/sh", "lava_test_results_dir": "/lava-%s", "lava_test_shell_file": "~/.bashrc"},
		},
		Parameters:             map[string]any{},
		AvailableArchitectures: []string{j.Arch.Name},
		Actions: map[string]any{
			// The guest disk LAVA makes for a test shell's overlay, unless
			// the ramdisk takes it (overlays: lava).
			"deploy": map[string]any{"methods": map[string]any{"image": map[string]any{"parameters": map[string]any{
				"guest": map[string]any{"size": 512, "interface": "ide", "driveid": "lavatest"}}}}},
			"boot": map[string]any{"connections": map[string]any{"serial": nil},
				"methods": map[string]any{"qemu": map[string]any{"parameters": map[string]any{
					"command": j.Machine.Binary, "options": options}}}},
		},
		Timeouts: map[string]any{"actions": map[string]any{}, "connections": map[string]any{}},
	}
	out, err := marshal(d)
	if err != nil {
		return nil, err
	}
	head := fmt.Sprintf("# LAVA device dictionary: %s on this machine, for a standalone lava-run\n"+
		"# (a LAVA server renders its own from the qemu device type).\n", strings.Join(slices.Concat([]string{j.Machine.Binary}, options), " "))
	return append([]byte(head), out...), nil
}
