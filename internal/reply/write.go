// SPDX-License-Identifier: GPL-2.0-only

package reply

import (
	"fmt"
	"net/mail"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/results"
)

// Write puts the reply to the series in mbox (msgid names the message to
// answer, "" for the cover letter) into dir, and returns its path.
func Write(dir string, mbox []byte, msgid string, r Report, from string) (string, error) {
	h, err := FindHead(mbox, msgid)
	if err != nil {
		return "", err
	}
	sender, err := Sender(from)
	if err != nil {
		return "", err
	}
	r.What = withSeries(r.What, h)
	path := filepath.Join(dir, File)
	return path, os.WriteFile(path, Compose(h, sender, Body(r, sender), time.Now()), 0o644)
}

var version = regexp.MustCompile(`\[[^\]]*\bv(\d+)\b[^\]]*\]`)

// withSeries adds the series, its version and Message-ID, after the tree
// and base.
func withSeries(what [][2]string, h Head) [][2]string {
	v := "v1"
	if m := version.FindStringSubmatch(h.Subject); m != nil {
		v = "v" + m[1]
	}
	at := 0
	for at < len(what) && (what[at][0] == "tree" || what[at][0] == "base") {
		at++
	}
	return slices.Insert(slices.Clone(what), at, [2]string{"series", v + ", message-id " + h.MessageID})
}

// SendCommand is the command that sends the reply at path: git send-email
// reads its threading, To and Cc from the file.
func SendCommand(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	m, err := mail.ReadMessage(f)
	if err != nil {
		return "", err
	}
	from, err := m.Header.AddressList("From")
	if err != nil || len(from) == 0 {
		return "", fmt.Errorf("no From: %v", err)
	}
	to, err := m.Header.AddressList("To")
	if err != nil || len(to) == 0 {
		return "", fmt.Errorf("no To: %v", err)
	}
	// --from: git send-email would send as git's identity otherwise.
	return results.ShellCommand([]string{"git", "send-email", "--from=" + trailerName(from[0]), "--to=" + to[0].Address, path}), nil
}
