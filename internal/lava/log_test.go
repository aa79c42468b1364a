// SPDX-License-Identifier: GPL-2.0-only

package lava

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/initramfs/guest"
	"github.com/ftrace-stackmap/conformance/internal/consoleframe"
	"github.com/ftrace-stackmap/conformance/internal/contract"
)

// fakeSpec is one spec a fake boot reports: its requirement and how it
// ended in Ginkgo's terms, with the entry that marks UNSUPPORTED or
// UNRESOLVED.
type fakeSpec struct {
	id    string
	state types.SpecState
	class contract.Class
}

// fakeBoot is a boot as a LAVA log records it.
type fakeBoot struct {
	name  string
	specs []fakeSpec
	dmesg string
	// panic: the kernel dies before the init; hang: the suite never
	// ends and the test block times out; late: the end of the guest's
	// status line comes after LAVA's monitor stopped, and LAVA reads it as
	// it closes the console; noDmesg: the kernel log's frame is lost;
	// kvm: the server's QEMU ran it under KVM.
	panic, hang, late, noDmesg, kvm bool
}

// logWriter writes a LAVA log as lava-run does: a flow mapping a line.
type logWriter struct {
	b  bytes.Buffer
	at time.Time
}

func (w *logWriter) rec(lvl string, msg any) { w.recNS(lvl, msg, "") }

// recNS writes a line of LAVA's log, of namespace ns when it is a
// console's feedback.
func (w *logWriter) recNS(lvl string, msg any, ns string) {
	w.at = w.at.Add(100 * time.Millisecond)
	if s, ok := msg.(string); ok && (lvl == "target" || lvl == "feedback") {
		msg = strings.ReplaceAll(s, `"`, `\"`) // as LAVA's ShellLogger does
	}
	rec := map[string]any{"dt": w.at.Format("2006-01-02T15:04:05.000000"), "lvl": lvl, "msg": msg}
	if ns != "" {
		rec["ns"] = ns
	}
	js, _ := json.Marshal(rec)
	w.b.Write(js)
	w.b.WriteByte('\n')
}

// console is what the guest of a fake boot prints.
func (fb fakeBoot) console(t *testing.T, desc []byte) string {
	var b bytes.Buffer
	b.WriteString("[    0.000000] Linux version 6.12.0-stackmap (build) #1 SMP\n")
	if fb.panic {
		b.WriteString("[    0.412000] BUG: kernel NULL pointer dereference, address: 0000000000000008\n")
		b.WriteString("[    0.413000] RIP: 0010:stackmap_init+0x1c/0x80\n")
		b.WriteString("[    0.420000] Kernel panic - not syncing: Fatal exception\n")
		return b.String()
	}
	consoleframe.Write(&b, guest.JobFile, desc)
	fmt.Fprintf(&b, "%s /suites.test [\"-ginkgo.v\"]\n", guest.StartMarker)
	r := types.Report{SuiteDescription: "ftrace stackmap conformance", SuiteSucceeded: true}
	for _, s := range fb.specs {
		sr := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[" + s.id + "] does it", LeafNodeLabels: []string{s.id},
			State: s.state, RunTime: time.Second}
		if s.state != types.SpecStatePassed {
			sr.Failure = types.Failure{Message: "what went wrong"}
		}
		if s.class == contract.Unsupported || s.class == contract.Unresolved {
			sr.ReportEntries = types.ReportEntries{contract.Mark(s.class)}
		}
		if s.state == types.SpecStateFailed {
			r.SuiteSucceeded = false
		}
		r.SpecReports = append(r.SpecReports, sr)
		fmt.Fprintf(&b, "%s %s.%s %s\n", consoleframe.CaseTag, fb.name, s.id, s.class)
	}
	if fb.hang {
		return b.String()
	}
	js, err := json.Marshal([]types.Report{r})
	if err != nil {
		t.Fatal(err)
	}
	consoleframe.Write(&b, "report.json", js)
	if !fb.noDmesg {
		consoleframe.Write(&b, guest.KernelLogFile, []byte(fb.dmesg))
	}
	code := 0
	if !r.SuiteSucceeded {
		code = 1
	}
	consoleframe.WriteExit(&b, code, nil)
	return b.String()
}

// fakeLog is LAVA's log of a job of boots: end is how the job ends,
// "pass", "infra" (LAVA ends it with an infrastructure error) or "cut"
// (the log stops before the job's end).
func fakeLog(t *testing.T, desc Description, boots []fakeBoot, end string) []byte {
	js, _ := json.Marshal(desc)
	w := &logWriter{at: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
	w.rec("info", "lava-dispatcher, installed at version: 2023.01")
	w.rec("info", "start: 0 validate")
	w.rec("info", "qemu-system-x86, installed at version: 1:7.2+dfsg-7+deb12u18+b3, host architecture: amd64")
	w.rec("results", map[string]any{"definition": "lava", "case": "validate", "result": "pass"})
	for i, fb := range boots {
		ns := fb.name
		w.rec("info", fmt.Sprintf("start: %d deployimages (timeout 00:05:00) [%s]", 3*i+1, ns))
		w.rec("info", fmt.Sprintf("end: %d deployimages (duration 00:00:01) [%s]", 3*i+1, ns))
		w.rec("info", fmt.Sprintf("start: %d boot-image-retry (timeout 00:02:00) [%s]", 3*i+2, ns))
		w.rec("debug", fmt.Sprintf("start: %d.1.1 execute-qemu (timeout 00:02:00) [%s]", 3*i+2, ns))
		accel := "-M q35 -cpu qemu64 -accel tcg"
		if fb.kvm {
			accel = "-cpu host -enable-kvm"
		}
		w.rec("info", "Boot command: /usr/bin/qemu-system-x86_64 "+accel+" -m 512 -nographic -nic none -kernel /var/lib/lava/dispatcher/tmp/1/deployimages-x/kernel/kernel -append \"console=ttyS0\" -no-reboot -initrd /var/lib/lava/dispatcher/tmp/1/deployimages-x/ramdisk/initrd-default.cpio")
		w.rec("info", fmt.Sprintf("end: %d boot-image-retry (duration 00:00:00) [%s]", 3*i+2, ns))
		w.rec("info", fmt.Sprintf("start: %d lava-test-monitor-retry (timeout 00:05:00) [%s]", 3*i+3, ns))
		for _, line := range strings.Split(strings.TrimSuffix(fb.console(t, js), "\n"), "\n") {
			if fb.late && strings.HasPrefix(line, consoleframe.ExitTag) {
				continue
			}
			w.rec("target", line)
			if strings.HasPrefix(line, consoleframe.CaseTag) {
				f := strings.Fields(line)
				w.rec("results", map[string]any{"definition": Suite(ns), "case": strings.ToLower(strings.NewReplacer(".", "_", "-", "_").Replace(f[1])),
					"level": fmt.Sprintf("%d.1.1", 3*i+3), "result": fixup[f[2]], "extra": map[string]string{"test_case_id": f[1]}})
			}
		}
		if fb.hang {
			w.rec("exception", "lava-test-monitor timed out after 300 seconds")
			w.rec("results", map[string]any{"definition": "lava", "namespace": ns, "case": "lava-test-monitor-retry", "level": fmt.Sprint(3*i + 3),
				"result": "fail", "extra": map[string]string{"fail": "lava-test-monitor timed out after 300 seconds"}})
			w.rec("warning", "skip_timeout is set for lava-test-monitor-retry - continuing to next action block.")
		} else {
			w.rec("info", "ok: end string found, lava test monitoring stopped")
		}
		w.rec("info", fmt.Sprintf("end: %d lava-test-monitor-retry (duration 00:00:05) [%s]", 3*i+3, ns))
	}
	// LAVA reads what is left of each console as it closes them.
	for _, fb := range boots {
		if fb.late {
			w.recNS("feedback", consoleframe.ExitTag+" code=0", fb.name)
		}
		if !fb.panic && !fb.hang {
			w.recNS("feedback", "[    3.1] reboot: Power down", fb.name)
		}
		w.rec("feedback", "poweroff")
	}
	switch end {
	case "pass":
		w.rec("info", "Job finished correctly")
		w.rec("results", map[string]any{"definition": "lava", "case": "job", "result": "pass"})
	case "infra":
		w.rec("error", "lava test monitoring reached end of file")
		w.rec("results", map[string]any{"definition": "lava", "case": "job", "result": "fail",
			"error_type": "Infrastructure", "error_msg": "Connection closed"})
	}
	return w.b.Bytes()
}

// The log's parts: each namespace's console, how LAVA's reading of it
// ended, the cases LAVA recorded and the job's end.
func TestParseLog(t *testing.T) {
	boots := []fakeBoot{
		{name: "default", specs: []fakeSpec{{"SM-RESET-01", types.SpecStatePassed, contract.Pass}}},
		{name: "bits-30", panic: true},
		{name: "bits-3", hang: true, specs: []fakeSpec{{"SM-BOOT-02", types.SpecStateFailed, contract.Fail}}},
	}
	l, err := ParseLog(bytes.NewReader(fakeLog(t, Description{Request: testRequest()}, boots, "pass")))
	if err != nil {
		t.Fatal(err)
	}
	if l.Dispatcher != "2023.01" || l.QEMU != "1:7.2+dfsg-7+deb12u18+b3" || l.Failed() != "" {
		t.Errorf("dispatcher %q, QEMU %q, failed %q", l.Dispatcher, l.QEMU, l.Failed())
	}
	if strings.Join(l.Order, " ") != "default bits-30 bits-3" {
		t.Errorf("namespaces %v", l.Order)
	}
	d := l.Boots["default"]
	if !d.Ended || d.TimedOut || !strings.HasPrefix(d.Command, "/usr/bin/qemu-system-x86_64 -M q35") || d.End.Sub(d.Start) <= 0 {
		t.Errorf("default boot %+v", d)
	}
	if !strings.HasSuffix(strings.Join(d.Console, "\n"), "reboot: Power down") {
		t.Errorf("the console's rest, read as LAVA closed it, is not the boot's: %q", d.Console[len(d.Console)-1])
	}
	if !strings.Contains(strings.Join(d.Console, "\n"), `["-ginkgo.v"]`) {
		t.Errorf("the console's quotes are not the guest's: %q", d.Console)
	}
	if b := l.Boots["bits-3"]; !b.TimedOut || b.Ended {
		t.Errorf("bits-3 %+v, want timed out", b)
	}
	want := []Case{{"default", "stackmap_default", "default_sm_reset_01", "default.SM-RESET-01", "pass"},
		{"bits-3", "stackmap_bits-3", "bits_3_sm_boot_02", "bits-3.SM-BOOT-02", "fail"}}
	if fmt.Sprint(l.Cases) != fmt.Sprint(want) {
		t.Errorf("cases %v\nwant %v", l.Cases, want)
	}
}

// The logs of jobs written before the suites were named stackmap_<boot>
// (stackmap-<boot>) give the same cases.
func TestParseLogOfOldSuiteNames(t *testing.T) {
	boots := []fakeBoot{{name: "default", specs: []fakeSpec{pass("SM-RESET-01")}}}
	log := fakeLog(t, Description{}, boots, "pass")
	old := bytes.ReplaceAll(log, []byte(`"definition":"stackmap_`), []byte(`"definition":"stackmap-`))
	if bytes.Equal(old, log) {
		t.Fatal("no suite renamed in the fake log")
	}
	l, err := ParseLog(bytes.NewReader(old))
	if err != nil || len(l.Cases) != 1 || l.Cases[0].Suite != "stackmap-default" || l.Cases[0].ID != "default.SM-RESET-01" {
		t.Fatalf("ParseLog: %v, %+v", err, l)
	}
}

// A log that stops early, or a job LAVA ended with an error, has no
// verdict to give, and says why.
func TestFailedJobs(t *testing.T) {
	boots := []fakeBoot{{name: "default", specs: []fakeSpec{{"SM-RESET-01", types.SpecStatePassed, contract.Pass}}}}
	for end, want := range map[string]string{
		"cut":   "LAVA's log ends before the job did",
		"infra": "the LAVA job ended in Infrastructure error: Connection closed",
	} {
		l, err := ParseLog(bytes.NewReader(fakeLog(t, Description{}, boots, end)))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(l.Failed(), want) {
			t.Errorf("%s: Failed() = %q, want %q", end, l.Failed(), want)
		}
	}
}

// What is not LAVA's log is refused, and LAVA's results export is named.
func TestNotALog(t *testing.T) {
	for name, tc := range map[string]struct{ data, want string }{
		"console": {"[    0.000000] Linux version 6.12\nSMCT-EXIT code=0\n", "no line of LAVA's YAML log"},
		"empty":   {"", "no line of LAVA's YAML log"},
		"export": {"- suite: stackmap_default\n  name: default_sm_reset_01\n  result: pass\n  job: '12'\n",
			"LAVA's results export"},
	} {
		_, err := ParseLog(strings.NewReader(tc.data))
		if !errors.Is(err, ErrNotLAVA) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

// What a LAVA server posts to a job's notify callback holds the log as a
// YAML list, and the job's id.
func TestCallbackData(t *testing.T) {
	boots := []fakeBoot{{name: "default", specs: []fakeSpec{pass("SM-RESET-01")}}}
	var list strings.Builder
	for _, line := range strings.SplitAfter(string(fakeLog(t, Description{}, boots, "pass")), "\n") {
		if line != "" {
			list.WriteString("- " + line)
		}
	}
	js, _ := json.Marshal(map[string]any{"id": 4711, "status_string": "complete", "definition": "job_name: x\n",
		"log": list.String(), "results": map[string]string{"lava": "- {name: job, result: pass}\n"}})
	l, err := ParseLog(bytes.NewReader(js))
	if err != nil || l.JobID != "4711" || l.Failed() != "" || len(l.Cases) != 1 {
		t.Fatalf("ParseLog: %v, %+v", err, l)
	}
	js, _ = json.Marshal(map[string]any{"id": 4711, "results": map[string]string{"lava": "- {name: job, result: pass}\n"}})
	if _, err := ParseLog(bytes.NewReader(js)); !errors.Is(err, ErrNotLAVA) || !strings.Contains(err.Error(), "dataset") {
		t.Errorf("callback data without the log: %v", err)
	}
}

// A LAVA server keeps the same lines as a YAML list.
func TestServerLog(t *testing.T) {
	boots := []fakeBoot{{name: "default", specs: []fakeSpec{{"SM-RESET-01", types.SpecStatePassed, contract.Pass}}}}
	var server bytes.Buffer
	for _, line := range strings.SplitAfter(string(fakeLog(t, Description{}, boots, "pass")), "\n") {
		if line != "" {
			server.WriteString("- " + line)
		}
	}
	l, err := ParseLog(&server)
	if err != nil || l.Failed() != "" || len(l.Cases) != 1 {
		t.Fatalf("ParseLog: %v, %+v", err, l)
	}
}
