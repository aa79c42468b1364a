// SPDX-License-Identifier: GPL-2.0-only

package consoleframe

import (
	"bytes"
	"errors"
	"math/rand"
	"strings"
	"testing"
)

func encode(t *testing.T, files map[string][]byte, exit int) string {
	t.Helper()
	var b bytes.Buffer
	for name, data := range files {
		if err := Write(&b, name, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteExit(&b, exit, nil); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func payload(n int) []byte {
	r := rand.New(rand.NewSource(int64(n)))
	b := make([]byte, n)
	r.Read(b) // incompressible, so the body spans many lines
	return b
}

func TestRoundTrip(t *testing.T) {
	want := payload(10000)
	log := "[    0.000000] Booting Linux\r\n" + strings.ReplaceAll(encode(t, map[string][]byte{"report.json": want}, 1), "\n", "\r\n")
	c, err := Decode(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Problems) != 0 {
		t.Fatalf("Decode problems = %v, want none", c.Problems)
	}
	if !bytes.Equal(c.Files["report.json"], want) {
		t.Fatalf("Decode file differs from what was written")
	}
	if !c.HaveExit || c.Exit != 1 {
		t.Fatalf("Decode exit = %v,%d, want true,1", c.HaveExit, c.Exit)
	}
}

func TestEmptyFile(t *testing.T) {
	c, _ := Decode(strings.NewReader(encode(t, map[string][]byte{"empty": nil}, 0)))
	if data, ok := c.Files["empty"]; !ok || len(data) != 0 || len(c.Problems) != 0 {
		t.Fatalf("Decode(empty) = %q,%v problems %v", data, ok, c.Problems)
	}
}

func TestKernelLinesBetweenBodyLinesAreSkipped(t *testing.T) {
	want := payload(5000)
	lines := strings.Split(encode(t, map[string][]byte{"r": want}, 0), "\n")
	var b strings.Builder
	for i, l := range lines {
		b.WriteString(l + "\n")
		if i == 3 || i == 20 {
			b.WriteString("[   12.345678] ------------[ cut here ]------------\n")
		}
	}
	c, _ := Decode(strings.NewReader(b.String()))
	if !bytes.Equal(c.Files["r"], want) || len(c.Problems) != 0 {
		t.Fatalf("Decode with interleaved kernel lines: problems %v", c.Problems)
	}
}

func TestDamageIsReportedNotUsed(t *testing.T) {
	good := encode(t, map[string][]byte{"r": payload(5000)}, 0)
	lines := strings.Split(good, "\n")
	for name, tc := range map[string]struct {
		log  string
		want error
	}{
		"cut before the end marker": {strings.Join(lines[:30], "\n"), ErrTruncated},
		"a body line lost":          {strings.Join(append(append([]string{}, lines[:10]...), lines[11:]...), "\n"), ErrCorrupt},
		"a kernel message split a body line": {
			strings.Replace(good, lines[12], lines[12][:30]+"[   1.2] x"+"\n"+lines[12][30:], 1), ErrCorrupt},
		"a flipped character": {
			strings.Replace(good, lines[12], flip(lines[12]), 1), ErrCorrupt},
		"a garbled begin line": {strings.Replace(good, "size=", "siz=", 1), ErrCorrupt},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := Decode(strings.NewReader(tc.log))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := c.Files["r"]; ok {
				t.Fatalf("Decode returned a damaged file as good")
			}
			if len(c.Problems) != 1 || !errors.Is(c.Problems[0], tc.want) {
				t.Fatalf("Decode problems = %v, want one %v", c.Problems, tc.want)
			}
		})
	}
}

func flip(s string) string {
	b := []byte(s)
	if b[5] == 'A' {
		b[5] = 'B'
	} else {
		b[5] = 'A'
	}
	return string(b)
}

func TestNoExitLineMeansNoExit(t *testing.T) {
	var b bytes.Buffer
	Write(&b, "r", []byte("x"))
	c, _ := Decode(&b)
	if c.HaveExit {
		t.Fatalf("Decode found an exit status in a log without one")
	}
}

func TestGuestError(t *testing.T) {
	var b bytes.Buffer
	WriteGuestError(&b, "cannot run /suites.test:\nexec format error")
	c, _ := Decode(&b)
	if len(c.GuestErrors) != 1 || c.GuestErrors[0] != "cannot run /suites.test: exec format error" {
		t.Fatalf("Decode guest errors = %q", c.GuestErrors)
	}
}

func FuzzDecode(f *testing.F) {
	var b bytes.Buffer
	Write(&b, "r", []byte("hello"))
	WriteExit(&b, 0, nil)
	f.Add(b.String())
	f.Add("SMCT-FRAME-BEGIN name=x size=3 sha256=00\nAAAA\nSMCT-FRAME-END name=x\n")
	f.Fuzz(func(t *testing.T, log string) {
		c, err := Decode(strings.NewReader(log))
		if err == nil && c == nil {
			t.Fatal("Decode returned neither capture nor error")
		}
	})
}

// Case lines are for a reader of the console; the frames around them
// decode as before.
func TestCaseLinesLeaveFramesWhole(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCase(&b, "default.SM-RESET-01", "PASS"); err != nil {
		t.Fatal(err)
	}
	if b.String() != "SMCT-CASE default.SM-RESET-01 PASS\n" {
		t.Fatalf("case line %q", b.String())
	}
	if WriteCase(&b, "two words", "PASS") == nil {
		t.Errorf("WriteCase took a name with a space")
	}
	log := b.String() + encode(t, map[string][]byte{"report.json": payload(3000)}, 0)
	c, err := Decode(strings.NewReader(log))
	if err != nil || len(c.Problems) > 0 || c.Files["report.json"] == nil || !c.HaveExit {
		t.Fatalf("Decode: %v, %+v", err, c)
	}
}
