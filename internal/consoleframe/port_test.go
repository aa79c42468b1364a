// SPDX-License-Identifier: GPL-2.0-only

package consoleframe

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// portAndConsole is what a guest that sends its frames on a port leaves:
// the frames in the port's file, the exit line with its manifest on the
// console.
func portAndConsole(t *testing.T, files [][2]string) (port []byte, console string) {
	t.Helper()
	var p, c bytes.Buffer
	s := &Sender{W: &p, Raw: true}
	for _, f := range files {
		if err := s.Write(f[0], []byte(f[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteExit(&c, 0, s.Sent); err != nil {
		t.Fatal(err)
	}
	return p.Bytes(), "[    1.0] some kernel line\n" + c.String()
}

func TestPortFramesJoinTheConsoles(t *testing.T) {
	// Raw bytes with what would end a console frame inside them.
	odd := string(payload(3000)) + "\n" + endTag + " name=report.json\n"
	port, console := portAndConsole(t, [][2]string{{"report.json", odd}, {"dmesg.txt", ""}})
	c, err := Decode(strings.NewReader(console))
	if err != nil {
		t.Fatal(err)
	}
	c.AddPort(port)
	if len(c.Problems) != 0 || len(c.Lost()) != 0 {
		t.Fatalf("problems %v, lost %v", c.Problems, c.Lost())
	}
	if string(c.Files["report.json"]) != odd || c.Files["dmesg.txt"] == nil || !c.HaveExit {
		t.Fatalf("files %d, exit %v", len(c.Files), c.HaveExit)
	}
}

func TestPortDamageIsNamed(t *testing.T) {
	port, console := portAndConsole(t, [][2]string{{"report.json", "{\"a\": 1}"}, {"dmesg.txt", "kernel log"}})
	second := bytes.Index(port, []byte(beginTag+" name=dmesg.txt"))
	for name, tc := range map[string]struct {
		port    []byte
		want    error
		damaged string
	}{
		"the file cut in a begin line":     {port[:second+80], ErrTruncated, "dmesg.txt"},
		"the file cut in the second frame": {port[:second+110], ErrTruncated, "dmesg.txt"},
		"a byte changed":                   {bytes.Replace(port, []byte("\"a\": 1"), []byte("\"a\": 2"), 1), ErrCorrupt, "report.json"},
		"a byte lost":                      {bytes.Replace(port, []byte("\"a\": 1"), []byte("\"a\":1"), 1), ErrCorrupt, "report.json"},
	} {
		t.Run(name, func(t *testing.T) {
			c, _ := Decode(strings.NewReader(console))
			c.AddPort(tc.port)
			if _, ok := c.Files[tc.damaged]; ok {
				t.Fatalf("a damaged frame was kept")
			}
			if len(c.Problems) != 1 || !errors.Is(c.Problems[0], tc.want) {
				t.Fatalf("problems %v, want one %v", c.Problems, tc.want)
			}
			if got := c.Missing(tc.damaged); !strings.HasPrefix(got, "arrived damaged") && !strings.Contains(got, "the guest sent it") {
				t.Fatalf("Missing(%s) = %q", tc.damaged, got)
			}
		})
	}
	c, _ := Decode(strings.NewReader(console))
	c.AddPort(nil)
	if got := c.Lost(); len(got) != 2 || !strings.Contains(c.Missing("report.json"), "the guest sent it") {
		t.Fatalf("an empty port: lost %v, %q", got, c.Missing("report.json"))
	}
}
