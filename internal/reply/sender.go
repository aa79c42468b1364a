// SPDX-License-Identifier: GPL-2.0-only

package reply

import (
	"fmt"
	"net/mail"
	"os"
	"os/exec"
	"strings"
)

// FromEnv names the variable that overrides git's identity for the
// reply's From and Tested-by: "Name <email>".
const FromEnv = "SMCT_REPLY_FROM"

// Sender is who the reply is from: from, when given, else $SMCT_REPLY_FROM,
// else git's user.name and user.email.
func Sender(from string) (*mail.Address, error) {
	if from == "" {
		from = os.Getenv(FromEnv)
	}
	if from != "" {
		a, err := mail.ParseAddress(from)
		if err != nil {
			return nil, fmt.Errorf("sender %q: want \"Name <email>\": %v", from, err)
		}
		return a, nil
	}
	name, email := gitConfig("user.name"), gitConfig("user.email")
	if name == "" || email == "" {
		return nil, fmt.Errorf("no sender: set git's user.name and user.email, or %s=\"Name <email>\"", FromEnv)
	}
	return &mail.Address{Name: name, Address: email}, nil
}

func gitConfig(key string) string {
	out, _ := exec.Command("git", "config", "--get", key).Output()
	return strings.TrimSpace(string(out))
}
