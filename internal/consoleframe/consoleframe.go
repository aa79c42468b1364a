// SPDX-License-Identifier: GPL-2.0-only

// Package consoleframe carries files from the guest to the host over a serial
// console that the kernel writes to as well.
//
// The guest writes each file as a frame:
//
//	SMCT-FRAME-BEGIN name=report.json size=1234 sha256=<hex of the gzip bytes>
//	<base64 of the gzip-compressed file, 76 characters a line>
//	SMCT-FRAME-END name=report.json
//
// and ends with one status line, "SMCT-EXIT code=N frames=a,b,c" (the
// manifest: every frame it sent, so the host can name one that did not
// arrive), or "SMCT-GUEST-ERROR msg" when it could not run the suite. A
// runner that reads results off the console as they come (a LAVA monitor)
// may also be given a line per spec, "SMCT-CASE <name> <class>"; the
// host's verdict comes from the frames. Kernel messages may land between
// lines; a body line with any character outside base64 is taken for one
// and skipped.
// A frame whose size or checksum does not match is reported, never used.
package consoleframe

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

const (
	beginTag      = "SMCT-FRAME-BEGIN"
	endTag        = "SMCT-FRAME-END"
	exitTag       = ExitTag
	guestErrorTag = GuestErrorTag
	lineWidth     = 76
)

// The words that begin the guest's status lines and case lines, for a
// reader that matches them itself (a LAVA job's patterns).
const (
	ExitTag       = "SMCT-EXIT"
	GuestErrorTag = "SMCT-GUEST-ERROR"
	CaseTag       = "SMCT-CASE"
)

// Write encodes one file as a frame on w.
func Write(w io.Writer, name string, data []byte) error {
	if name == "" || strings.ContainsAny(name, " \t\r\n") {
		return fmt.Errorf("consoleframe.Write: bad name %q", name)
	}
	var packed bytes.Buffer
	zw := gzip.NewWriter(&packed)
	if _, err := zw.Write(data); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	sum := sha256.Sum256(packed.Bytes())
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s name=%s size=%d sha256=%x\n", beginTag, name, packed.Len(), sum)
	enc := base64.StdEncoding.EncodeToString(packed.Bytes())
	for len(enc) > 0 {
		n := min(lineWidth, len(enc))
		b.WriteString(enc[:n])
		b.WriteByte('\n')
		enc = enc[n:]
	}
	fmt.Fprintf(&b, "%s name=%s\n", endTag, name)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteExit writes the status line that tells the host the suite ran to
// its end, with the names of the frames sent before it.
func WriteExit(w io.Writer, code int, sent []string) error {
	_, err := fmt.Fprintf(w, "\n%s code=%d frames=%s\n", exitTag, code, strings.Join(sent, ","))
	return err
}

// Sender writes frames and keeps their names for the exit line's manifest.
type Sender struct {
	W    io.Writer
	Raw  bool // W is a channel of its own: frames as they are (WriteRaw)
	Sent []string
}

// Write sends one file as a frame and lists it.
func (s *Sender) Write(name string, data []byte) error {
	write := Write
	if s.Raw {
		write = WriteRaw
	}
	if err := write(s.W, name, data); err != nil {
		return err
	}
	s.Sent = append(s.Sent, name)
	return nil
}

// WriteGuestError tells the host that the guest could not run the suite.
func WriteGuestError(w io.Writer, msg string) error {
	_, err := fmt.Fprintf(w, "\n%s %s\n", guestErrorTag, strings.ReplaceAll(msg, "\n", " "))
	return err
}

// WriteCase writes one spec's verdict on a line of its own: its name
// (which has no spaces) and its class.
func WriteCase(w io.Writer, name, class string) error {
	if name == "" || strings.ContainsAny(name, " \t\r\n") {
		return fmt.Errorf("consoleframe.WriteCase: bad name %q", name)
	}
	_, err := fmt.Fprintf(w, "%s %s %s\n", CaseTag, name, class)
	return err
}

// Capture is what Decode found in a console log.
type Capture struct {
	Files    map[string][]byte // complete, verified frames by name
	Exit     int               // the suite's exit code, when HaveExit
	HaveExit bool
	// Sent are the frames the exit line says the guest sent, when it
	// has a manifest (HaveManifest; a guest of an older suite gives none).
	Sent         []string
	HaveManifest bool
	GuestErrors  []string         // SMCT-GUEST-ERROR messages
	Problems     []error          // frames that were cut, corrupt or repeated
	Damaged      map[string]error // the first problem of each frame whose name was read
}

// Lost are the frames the manifest lists that did not arrive whole, in
// the order they were sent.
func (c *Capture) Lost() []string {
	var out []string
	for _, name := range c.Sent {
		if _, ok := c.Files[name]; !ok {
			out = append(out, name)
		}
	}
	return out
}

// Missing says how a frame that is not in Files went missing: damaged on
// the way (and how), sent but never arrived, or never sent.
func (c *Capture) Missing(name string) string {
	switch err := c.Damaged[name]; {
	case err != nil:
		return "arrived damaged (" + err.Error() + ")"
	case slices.Contains(c.Sent, name):
		return "did not arrive; the guest sent it (its exit line lists it)"
	case c.HaveManifest:
		return "was not sent: the guest's exit line does not list it"
	case c.HaveExit:
		return "did not arrive, and the guest's exit line has no list of what it sent"
	}
	return "did not arrive"
}

var (
	// ErrTruncated marks a frame whose end never arrived.
	ErrTruncated = errors.New("frame truncated")
	// ErrCorrupt marks a frame whose size or checksum does not match.
	ErrCorrupt = errors.New("frame corrupt")
)

type openFrame struct {
	name string
	size int
	sum  string
	body strings.Builder
}

// Decode scans a console log for frames and status lines.
func Decode(r io.Reader) (*Capture, error) {
	c := &Capture{Files: map[string][]byte{}, Damaged: map[string]error{}}
	damaged := c.damaged
	var cur *openFrame
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		switch {
		case strings.Contains(line, beginTag):
			if cur != nil {
				damaged(cur.name, fmt.Errorf("%w: %s: a new frame began before its end", ErrTruncated, cur.name))
			}
			f, err := parseBegin(line[strings.Index(line, beginTag):])
			if err != nil {
				c.Problems = append(c.Problems, fmt.Errorf("%w: %v", ErrCorrupt, err))
				cur = nil
				continue
			}
			cur = f
		case strings.Contains(line, endTag):
			if cur == nil {
				continue
			}
			data, err := cur.finish()
			switch {
			case err != nil:
				damaged(cur.name, err)
			case c.Files[cur.name] != nil:
				damaged("", fmt.Errorf("%w: %s: sent twice", ErrCorrupt, cur.name))
			default:
				c.Files[cur.name] = data
			}
			cur = nil
		case cur != nil:
			if isBase64(line) {
				cur.body.WriteString(line)
			}
		case strings.Contains(line, exitTag+" code="):
			if err := c.exitLine(line[strings.Index(line, exitTag+" code=")+len(exitTag+" "):]); err != nil {
				c.Problems = append(c.Problems, fmt.Errorf("%w: exit line %q: %v", ErrCorrupt, line, err))
			}
		case strings.Contains(line, guestErrorTag+" "):
			c.GuestErrors = append(c.GuestErrors, strings.TrimSpace(line[strings.Index(line, guestErrorTag)+len(guestErrorTag):]))
		}
	}
	if cur != nil {
		damaged(cur.name, fmt.Errorf("%w: %s: no end marker", ErrTruncated, cur.name))
	}
	return c, sc.Err()
}

// exitLine reads "code=N" and, from a guest that sends one, the manifest
// "frames=a,b".
func (c *Capture) exitLine(fields string) error {
	var code int
	var sent []string
	manifest := false
	for _, f := range strings.Fields(fields) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "code":
			n, err := strconv.Atoi(v)
			if err != nil {
				return err
			}
			code = n
		case "frames":
			manifest = true
			if v != "" {
				sent = strings.Split(v, ",")
			}
		default:
			return fmt.Errorf("unknown field %q", f)
		}
	}
	if !strings.HasPrefix(fields, "code=") {
		return fmt.Errorf("no code")
	}
	c.Exit, c.HaveExit, c.Sent, c.HaveManifest = code, true, sent, manifest
	return nil
}

func parseBegin(line string) (*openFrame, error) {
	f := &openFrame{size: -1}
	for _, field := range strings.Fields(line)[1:] {
		k, v, _ := strings.Cut(field, "=")
		switch k {
		case "name":
			f.name = v
		case "size":
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, fmt.Errorf("begin line %q: bad size", line)
			}
			f.size = n
		case "sha256":
			f.sum = v
		}
	}
	if f.name == "" || f.size < 0 || len(f.sum) != 64 {
		return nil, fmt.Errorf("begin line %q: want name, size and sha256", line)
	}
	return f, nil
}

func (f *openFrame) finish() ([]byte, error) {
	packed, err := base64.StdEncoding.DecodeString(f.body.String())
	if err != nil {
		return nil, fmt.Errorf("%w: %s: base64: %v", ErrCorrupt, f.name, err)
	}
	if len(packed) != f.size {
		return nil, fmt.Errorf("%w: %s: got %d bytes, want %d", ErrCorrupt, f.name, len(packed), f.size)
	}
	sum := sha256.Sum256(packed)
	if got := hex.EncodeToString(sum[:]); got != f.sum {
		return nil, fmt.Errorf("%w: %s: sha256 %s, want %s", ErrCorrupt, f.name, got, f.sum)
	}
	zr, err := gzip.NewReader(bytes.NewReader(packed))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, f.name, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, f.name, err)
	}
	return data, nil
}

func isBase64(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '+', r == '/', r == '=':
		default:
			return false
		}
	}
	return true
}
