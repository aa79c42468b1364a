// SPDX-License-Identifier: GPL-2.0-only

package consoleframe

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
)

// On a channel of their own (a virtio-serial port the host writes to a
// file) frames carry a file's bytes as they are, neither compressed nor
// encoded: nothing else writes there, so no kernel line can cut them.
//
//	SMCT-FRAME-BEGIN name=report.json size=1234 sha256=<hex of the bytes> raw
//	<the 1234 bytes>
//	SMCT-FRAME-END name=report.json
//
// The status lines stay on the console, where the host watches for them.
const rawWord = "raw"

// WriteRaw writes one file as a frame on a channel of its own.
func WriteRaw(w io.Writer, name string, data []byte) error {
	if name == "" || strings.ContainsAny(name, " \t\r\n") {
		return fmt.Errorf("consoleframe.WriteRaw: bad name %q", name)
	}
	sum := sha256.Sum256(data)
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s name=%s size=%d sha256=%x %s\n", beginTag, name, len(data), sum, rawWord)
	b.Write(data)
	fmt.Fprintf(&b, "\n%s name=%s\n", endTag, name)
	_, err := w.Write(b.Bytes())
	return err
}

// AddPort reads the frames of a port's file into c, beside those the
// console carried; a frame cut or damaged on the way is named as on the
// console.
func (c *Capture) AddPort(port []byte) {
	if c.Damaged == nil {
		c.Damaged = map[string]error{}
	}
	for len(port) > 0 {
		line, rest, ok := bytes.Cut(port, []byte("\n"))
		if !ok {
			c.Problems = append(c.Problems, fmt.Errorf("%w: port: the file ends in a begin line: %q", ErrTruncated, firstBytes(port)))
			return
		}
		if !bytes.HasPrefix(line, []byte(beginTag+" ")) || !bytes.HasSuffix(line, []byte(" "+rawWord)) {
			c.Problems = append(c.Problems, fmt.Errorf("%w: port: %q where a frame should begin", ErrCorrupt, firstBytes(port)))
			return
		}
		f, err := parseBegin(string(line))
		if err != nil {
			c.Problems = append(c.Problems, fmt.Errorf("%w: port: %v", ErrCorrupt, err))
			return
		}
		end := fmt.Sprintf("\n%s name=%s\n", endTag, f.name)
		if len(rest) < f.size+len(end) {
			c.damaged(f.name, fmt.Errorf("%w: %s: the port's file ends %d bytes into it, of %d", ErrTruncated, f.name, len(rest), f.size))
			return
		}
		data, tail := rest[:f.size], rest[f.size:]
		if !bytes.HasPrefix(tail, []byte(end)) {
			c.damaged(f.name, fmt.Errorf("%w: %s: no end marker after %d bytes", ErrCorrupt, f.name, f.size))
			return
		}
		port = tail[len(end):]
		sum := sha256.Sum256(data)
		switch got := hex.EncodeToString(sum[:]); {
		case got != f.sum:
			c.damaged(f.name, fmt.Errorf("%w: %s: sha256 %s, want %s", ErrCorrupt, f.name, got, f.sum))
		case c.Files[f.name] != nil:
			c.damaged("", fmt.Errorf("%w: %s: sent twice", ErrCorrupt, f.name))
		default:
			c.Files[f.name] = bytes.Clone(data)
		}
	}
}

// damaged records a frame's problem, and the first one of each frame
// whose name was read.
func (c *Capture) damaged(name string, err error) {
	c.Problems = append(c.Problems, err)
	if _, seen := c.Damaged[name]; !seen && name != "" {
		c.Damaged[name] = err
	}
}

func firstBytes(b []byte) []byte {
	return b[:min(len(b), 60)]
}
