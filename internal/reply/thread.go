// SPDX-License-Identifier: GPL-2.0-only

package reply

import (
	"bytes"
	"fmt"
	"mime"
	"net/mail"
	"regexp"
	"strings"
)

// Head is the message a reply answers: the series' cover letter, or its
// first patch when it has none.
type Head struct {
	MessageID  string // without <>
	References []string
	Subject    string
	From       *mail.Address
	To, Cc     []*mail.Address
}

var (
	// mboxFrom starts a message in an mbox (git format-patch's, b4's).
	mboxFrom = regexp.MustCompile(`(?m)^From \S+ .*\d{4}\n`)
	cover    = regexp.MustCompile(`\[[^\]]*\b0+/\d+\]`)
	first    = regexp.MustCompile(`\[[^\]]*\b0*1/\d+\]`)
)

// Messages reads the messages of an mbox.
func Messages(mbox []byte) ([]*mail.Message, error) {
	var out []*mail.Message
	starts := mboxFrom.FindAllIndex(mbox, -1)
	for i, at := range starts {
		end := len(mbox)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		m, err := mail.ReadMessage(bytes.NewReader(mbox[at[1]:end]))
		if err != nil {
			return nil, fmt.Errorf("message %d of the mbox: %v", i+1, err)
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no message in the mbox")
	}
	return out, nil
}

// FindHead picks the message to answer in a series' mbox: the one named by
// msgid when it is there, else the cover letter ([PATCH 0/N]), else the
// first patch. A message without a Message-ID cannot be answered.
func FindHead(mbox []byte, msgid string) (Head, error) {
	msgs, err := Messages(mbox)
	if err != nil {
		return Head{}, err
	}
	pick := func(ok func(*mail.Message) bool) *mail.Message {
		for _, m := range msgs {
			if ok(m) {
				return m
			}
		}
		return nil
	}
	m := pick(func(m *mail.Message) bool { return msgid != "" && bareID(m.Header.Get("Message-ID")) == bareID(msgid) })
	if m == nil {
		m = pick(func(m *mail.Message) bool { return cover.MatchString(subject(m)) })
	}
	if m == nil {
		m = pick(func(m *mail.Message) bool { return first.MatchString(subject(m)) })
	}
	if m == nil {
		m = msgs[0]
	}
	return head(m)
}

func head(m *mail.Message) (Head, error) {
	h := Head{MessageID: bareID(m.Header.Get("Message-ID")), Subject: subject(m)}
	if h.MessageID == "" {
		return h, fmt.Errorf("%q has no Message-ID: not a posted series", h.Subject)
	}
	from, err := m.Header.AddressList("From")
	if err != nil || len(from) == 0 {
		return h, fmt.Errorf("%q: no sender: %v", h.Subject, err)
	}
	h.From = from[0]
	// A missing To or Cc is no error; a malformed one leaves it out.
	h.To, _ = m.Header.AddressList("To")
	h.Cc, _ = m.Header.AddressList("Cc")
	refs := strings.Fields(m.Header.Get("References"))
	if len(refs) == 0 {
		refs = strings.Fields(m.Header.Get("In-Reply-To"))
	}
	for _, r := range refs {
		h.References = append(h.References, bareID(r))
	}
	return h, nil
}

// subject is a message's subject, decoded and unfolded.
func subject(m *mail.Message) string {
	s := m.Header.Get("Subject")
	if d, err := new(mime.WordDecoder).DecodeHeader(s); err == nil {
		s = d
	}
	return strings.Join(strings.Fields(s), " ")
}

func bareID(id string) string { return strings.Trim(strings.TrimSpace(id), "<>") }
