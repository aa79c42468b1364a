// SPDX-License-Identifier: GPL-2.0-only

package reply

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Thread is the mbox of a series named as a local mbox or a message-id
// (fetched with b4 mbox, whose thread keeps the cover letter that b4 am
// leaves out), and the message-id to answer ("" for a file).
func Thread(series string) ([]byte, string, error) {
	if fi, err := os.Stat(series); err == nil && fi.Mode().IsRegular() {
		data, err := os.ReadFile(series)
		return data, "", err
	}
	if !strings.Contains(series, "@") || strings.ContainsAny(series, " /") {
		return nil, "", fmt.Errorf("series %q: not an mbox or a message-id", series)
	}
	out, err := exec.Command("b4", "mbox", "-o", "-", series).Output()
	if err != nil {
		return nil, "", fmt.Errorf("b4 mbox %s: %v", series, err)
	}
	return out, series, nil
}
