// SPDX-License-Identifier: GPL-2.0-only

// Package dumpcheck runs a kernel tree's own stack_map_bin decoder
// (tools/tracing/stackmap_dump.py, which the series adds) on a binary
// export the guest captured, and compares what it reads with the suite's
// decode of the same file and with the text export read at the same moment.
// A decoder that still expects another posting's header, or misreads a
// record, is a defect of the series the ABI specs cannot see.
package dumpcheck

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	fmtx "github.com/ftrace-stackmap/conformance/internal/stackmapfmt"
)

// Tool is where a tree keeps the decoder.
const Tool = "tools/tracing/stackmap_dump.py"

// Check is the outcome of one comparison.
type Check struct {
	Tool     string   `json:"tool"`     // the decoder run
	Stacks   int      `json:"stacks"`   // records in the captured export
	Problems []string `json:"problems"` // disagreements; none when it agrees
	Output   string   `json:"output"`   // what the decoder printed on stderr, or its failure
}

// Agrees says whether the decoder read the export as the kernel wrote it.
func (c *Check) Agrees() bool { return len(c.Problems) == 0 }

// Find returns the tree's decoder, "" when it has none.
func Find(tree string) string {
	p := filepath.Join(tree, Tool)
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
		return p
	}
	return ""
}

// Run decodes bin (the captured stack_map_bin) with the tool (--json) and
// compares it with the suite's own decode and with text (the stack_map
// read at the same moment). order is the guest's byte order.
func Run(tool, bin, text string, order binary.ByteOrder) (*Check, error) {
	c := &Check{Tool: tool}
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	want, err := fmtx.ParseBin(data, order)
	if err != nil {
		return nil, fmt.Errorf("the suite cannot decode %s itself: %v", bin, err)
	}
	c.Stacks = len(want.Records)
	if textData, err := os.ReadFile(text); err == nil {
		blocks, err := fmtx.ParseText(string(textData))
		if err != nil || len(blocks) != len(want.Records) {
			return nil, fmt.Errorf("the captured stack_map does not match the captured stack_map_bin (%d records): %v", len(want.Records), err)
		}
	}
	cmd := exec.Command("python3", tool, bin, "--json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("running %s: %v", tool, err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		err = fmt.Errorf("no answer within a minute")
	}
	c.Output = strings.TrimSpace(stderr.String())
	if err != nil {
		c.Problems = append(c.Problems, fmt.Sprintf("the decoder failed on the kernel's export (%v): %s", err, lastLine(c.Output)))
		return c, nil
	}
	got, err := parseJSON(stdout.Bytes())
	if err != nil {
		c.Problems = append(c.Problems, "the decoder's --json output: "+err.Error())
		return c, nil
	}
	c.Problems = compare(want.Records, got)
	return c, nil
}

// stack is one record as the decoder prints it.
type stack struct {
	ID  uint32   `json:"stack_id"`
	Ref uint32   `json:"ref_count"`
	IPs []string `json:"ips"`
}

func parseJSON(data []byte) ([]stack, error) {
	var out []stack
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("not a JSON list of stacks: %v", err)
	}
	return out, nil
}

// compare lists where the decoder's stacks differ from the records.
func compare(want []fmtx.Record, got []stack) []string {
	var problems []string
	if len(got) != len(want) {
		problems = append(problems, fmt.Sprintf("the decoder read %d stacks, the export holds %d", len(got), len(want)))
	}
	for i := 0; i < min(len(got), len(want)); i++ {
		w, g := want[i], got[i]
		switch {
		case g.ID != w.ID:
			problems = append(problems, fmt.Sprintf("stack %d: the decoder says id %d, the export %d", i, g.ID, w.ID))
		case g.Ref != w.Ref:
			problems = append(problems, fmt.Sprintf("stack id %d: the decoder says ref %d, the export %d", w.ID, g.Ref, w.Ref))
		case len(g.IPs) != len(w.Addrs):
			problems = append(problems, fmt.Sprintf("stack id %d: the decoder says depth %d, the export %d", w.ID, len(g.IPs), len(w.Addrs)))
		default:
			for f, ip := range g.IPs {
				v, err := strconv.ParseUint(strings.TrimPrefix(ip, "0x"), 16, 64)
				if err != nil || v != w.Addrs[f] {
					problems = append(problems, fmt.Sprintf("stack id %d frame [%d]: the decoder says %s, the export %#x", w.ID, f, ip, w.Addrs[f]))
					break
				}
			}
		}
		if len(problems) >= 5 {
			problems = append(problems, "(the comparison stops at five disagreements)")
			break
		}
	}
	return problems
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
