// SPDX-License-Identifier: GPL-2.0-only

package lava

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Log is what a LAVA job's log says: lava-run writes it on stderr, one
// YAML mapping a line ({dt, lvl, msg}), and a LAVA server keeps the same
// lines as a YAML list.
type Log struct {
	JobID      string // the server's id of the job, when the log came with it
	Dispatcher string // lava-dispatcher's version
	QEMU       string // QEMU's package version, as LAVA found it
	Started    time.Time
	// Result is the job's own end, nil when the log ends before the job
	// did.
	Result *JobResult
	Boots  map[string]*BootLog // by namespace
	Order  []string            // the namespaces, in the order they started
	Cases  []Case              // the test cases LAVA recorded
}

// JobResult is how LAVA says the job ended.
type JobResult struct {
	Result    string // pass or fail
	ErrorType string // LAVA's class of error when it failed: Infrastructure, Job, Test, Bug, Canceled, ...
	ErrorMsg  string
}

// BootLog is one namespace's part of the log: a boot's console and how
// LAVA's reading of it ended.
type BootLog struct {
	Console    []string // the serial console's lines, as the guest wrote them
	Command    string   // the QEMU command LAVA ran
	Start, End time.Time
	// TimedOut says the block's test ran out of its time; Quiet that
	// LAVA stopped reading a console silent for longer than its boot's
	// timeout; Ended that the monitor saw its end.
	TimedOut, Quiet, Ended bool
}

// Case is a test case LAVA recorded.
type Case struct {
	Namespace string
	Suite     string // LAVA's test suite, the monitor's name
	Name      string // LAVA's normalised name
	ID        string // the name as the guest printed it
	Result    string // pass, fail, skip or unknown
}

// ErrNotLAVA says a file is not LAVA's log.
var ErrNotLAVA = fmt.Errorf("not LAVA's log")

type record struct {
	DT  string    `yaml:"dt"`
	Lvl string    `yaml:"lvl"`
	Msg yaml.Node `yaml:"msg"`
	NS  string    `yaml:"ns"` // a feedback line's namespace
}

var (
	actionStart = regexp.MustCompile(`^start: [0-9.]+ \S+ \(timeout [^)]*\) \[([^\]]+)\]$`)
	actionEnd   = regexp.MustCompile(`^end: [0-9.]+ \S+ \(duration [^)]*\) \[([^\]]+)\]$`)
	qemuVersion = regexp.MustCompile(`^qemu-system-\S+, installed at version: ([^,]+)`)
)

// callback is what a LAVA server posts when a job finishes, to the URL of
// the job's notify callback: with dataset "all" or "logs", the job's log.
type callback struct {
	ID      any               `json:"id"`
	Log     string            `json:"log"`
	Results map[string]string `json:"results"`
}

// ParseLog reads a LAVA job's log: lava-run's stderr, a LAVA server's log
// of the job, or the data a server posts to a job's notify callback. A
// file with no line of a log, or LAVA's results export (its cases without
// the console), is refused with a reason.
func ParseLog(r io.Reader) (*Log, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var cb callback
	if json.Unmarshal(data, &cb) == nil && (cb.ID != nil || cb.Log != "" || cb.Results != nil) {
		if cb.Log == "" {
			return nil, fmt.Errorf("%w: LAVA's callback data without the job's log: ask for it with the notify callback's dataset: all (or logs)", ErrNotLAVA)
		}
		l, err := ParseLog(strings.NewReader(cb.Log))
		if l != nil && cb.ID != nil {
			l.JobID = fmt.Sprint(cb.ID)
		}
		return l, err
	}
	l := &Log{Boots: map[string]*BootLog{}}
	ns := ""
	boot := func() *BootLog {
		b := l.Boots[ns]
		if b == nil {
			b = &BootLog{}
			l.Boots[ns] = b
			l.Order = append(l.Order, ns)
		}
		return b
	}
	records := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 4<<20) // LAVA cuts a line at 10^6 characters
	for sc.Scan() {
		line := strings.TrimPrefix(strings.TrimSpace(sc.Text()), "- ")
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var rec record
		if yaml.Unmarshal([]byte(line), &rec) != nil || rec.Lvl == "" || rec.DT == "" {
			continue
		}
		records++
		at, _ := time.Parse("2006-01-02T15:04:05.999999", rec.DT)
		if l.Started.IsZero() {
			l.Started = at
		}
		var text string
		if rec.Msg.Kind == yaml.ScalarNode {
			text = rec.Msg.Value
		}
		switch rec.Lvl {
		case "target", "feedback":
			// Feedback is the rest of a namespace's console, read when
			// LAVA closes its connection; without a namespace, LAVA's own.
			b := l.Boots[rec.NS]
			if rec.Lvl == "target" {
				b = boot()
			} else if b == nil {
				continue
			}
			if b.Start.IsZero() {
				b.Start = at
			}
			// LAVA escapes a double quote of the console before its own
			// quoting.
			b.Console = append(b.Console, strings.ReplaceAll(text, `\"`, `"`))
		case "results":
			l.result(&rec.Msg, ns)
		case "warning":
			if strings.Contains(text, "lava test monitoring has timed out") {
				boot().Quiet = true
			}
		case "info", "debug":
			if m := actionStart.FindStringSubmatch(text); m != nil {
				ns = m[1]
			} else if m := actionEnd.FindStringSubmatch(text); m != nil && m[1] == ns && l.Boots[ns] != nil {
				l.Boots[ns].End = at
			}
			switch {
			case strings.HasPrefix(text, "Boot command: "):
				boot().Command = strings.TrimPrefix(text, "Boot command: ")
			case strings.HasPrefix(text, "ok: end string found"):
				boot().Ended = true
			case strings.HasPrefix(text, "lava-dispatcher, installed at version: "):
				l.Dispatcher = strings.TrimPrefix(text, "lava-dispatcher, installed at version: ")
			}
			if m := qemuVersion.FindStringSubmatch(text); m != nil {
				l.QEMU = m[1]
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if records == 0 {
		if isResultsExport(data) {
			return nil, fmt.Errorf("%w: this is LAVA's results export, which holds LAVA's test cases but not the console the suite's verdict is judged from; give the job's log (lava-run's stderr, or `lavacli jobs logs --raw ID` from a LAVA server)", ErrNotLAVA)
		}
		return nil, fmt.Errorf("%w: no line of LAVA's YAML log ({dt, lvl, msg}) in it; give lava-run's stderr, or the job's log from a LAVA server", ErrNotLAVA)
	}
	return l, nil
}

// result keeps a results record: the job's end, a block that timed out,
// or a test case.
func (l *Log) result(msg *yaml.Node, ns string) {
	var r struct {
		Definition string         `yaml:"definition"`
		Case       string         `yaml:"case"`
		Result     string         `yaml:"result"`
		Namespace  string         `yaml:"namespace"`
		ErrorType  string         `yaml:"error_type"`
		ErrorMsg   string         `yaml:"error_msg"`
		Extra      map[string]any `yaml:"extra"`
	}
	if msg.Decode(&r) != nil {
		return
	}
	switch {
	case r.Definition == "lava" && r.Case == "job":
		l.Result = &JobResult{Result: r.Result, ErrorType: r.ErrorType, ErrorMsg: r.ErrorMsg}
	case r.Definition == "lava":
		if fail, _ := r.Extra["fail"].(string); r.Result == "fail" && strings.Contains(fail, "timed out") && l.Boots[r.Namespace] != nil {
			l.Boots[r.Namespace].TimedOut = true
		}
	default:
		id, _ := r.Extra["test_case_id"].(string)
		l.Cases = append(l.Cases, Case{Namespace: ns, Suite: r.Definition, Name: r.Case, ID: id, Result: r.Result})
	}
}

// isResultsExport says whether data is a LAVA server's export of a job's
// results: a YAML list of test cases, each with its suite and result.
func isResultsExport(data []byte) bool {
	var cases []map[string]any
	if yaml.Unmarshal(data, &cases) != nil || len(cases) == 0 {
		return false
	}
	_, suite := cases[0]["suite"]
	_, result := cases[0]["result"]
	return suite && result
}

// Failed says why the job did not end as LAVA's jobs end when they ran,
// or "": its log stops before its end, or LAVA ended it with an error.
func (l *Log) Failed() string {
	switch r := l.Result; {
	case r == nil:
		return "LAVA's log ends before the job did: the job is still running, or the log was cut"
	case r.Result != "pass":
		kind := r.ErrorType
		if kind == "" {
			kind = "an"
		}
		return fmt.Sprintf("the LAVA job ended in %s error: %s", kind, strings.TrimSpace(r.ErrorMsg))
	}
	return ""
}
