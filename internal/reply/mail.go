// SPDX-License-Identifier: GPL-2.0-only

package reply

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"mime"
	"net/mail"
	"strings"
	"time"
)

// Compose is the reply to h from sender, with body, as a message file
// git send-email reads.
func Compose(h Head, sender *mail.Address, body string, now time.Time) []byte {
	subj := h.Subject
	if !strings.HasPrefix(strings.ToLower(subj), "re:") {
		subj = "Re: " + subj
	}
	// The sender is not copied on their own mail, nor anyone twice.
	seen := map[string]bool{strings.ToLower(sender.Address): true, strings.ToLower(h.From.Address): true}
	var cc []*mail.Address
	for _, a := range append(append([]*mail.Address{}, h.To...), h.Cc...) {
		if k := strings.ToLower(a.Address); !seen[k] {
			seen[k] = true
			cc = append(cc, a)
		}
	}
	refs := append(append([]string{}, h.References...), h.MessageID)

	var b strings.Builder
	field := func(name, value string) { fmt.Fprintf(&b, "%s: %s\n", name, value) }
	field("From", sender.String())
	field("To", h.From.String())
	if len(cc) > 0 {
		field("Cc", addresses(cc))
	}
	field("Subject", mime.QEncoding.Encode("UTF-8", subj))
	field("Date", now.Format(time.RFC1123Z))
	field("Message-ID", "<"+messageID(now, sender.Address)+">")
	field("In-Reply-To", "<"+h.MessageID+">")
	field("References", "<"+strings.Join(refs, ">\n <")+">")
	field("MIME-Version", "1.0")
	field("Content-Type", "text/plain; charset=UTF-8")
	field("Content-Transfer-Encoding", "8bit")
	b.WriteString("\n" + body)
	return []byte(b.String())
}

// addresses is an address list, one address a line: net/mail encodes
// each, a long list stays within the line length mail wants.
func addresses(list []*mail.Address) string {
	s := make([]string, len(list))
	for i, a := range list {
		s[i] = a.String()
	}
	return strings.Join(s, ",\n ")
}

// messageID is a new Message-ID on the sender's domain.
func messageID(now time.Time, sender string) string {
	r := make([]byte, 8)
	rand.Read(r)
	_, domain, _ := strings.Cut(sender, "@")
	if domain == "" {
		domain = "localhost"
	}
	return fmt.Sprintf("%s.%s@%s", now.UTC().Format("20060102150405"), hex.EncodeToString(r), domain)
}
