// SPDX-License-Identifier: GPL-2.0-only

// Package project finds the suite's checkout, so that smct runs from
// anywhere, a kernel tree included.
package project

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// modulePath names the project's module in its go.mod.
const modulePath = "module github.com/ftrace-stackmap/conformance\n"

// Find returns the project's root: given (smct's -C) when set, else the
// nearest go.mod of this module above the working directory, else above
// the running program (bin/smct of a checkout).
func Find(given string) (string, error) {
	if given != "" {
		if !isProject(given) {
			return "", fmt.Errorf("-C %s: not the conformance suite's checkout (no go.mod of %s)", given, strings.TrimSpace(strings.TrimPrefix(modulePath, "module ")))
		}
		return filepath.Abs(given)
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			starts = append(starts, filepath.Dir(exe))
		}
	}
	for _, dir := range starts {
		for d := dir; ; d = filepath.Dir(d) {
			if isProject(d) {
				return d, nil
			}
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	return "", fmt.Errorf("cannot find the suite's checkout above %v: run smct from it, or give -C DIR", starts)
}

// isProject says whether dir holds this project's go.mod.
func isProject(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	return err == nil && strings.HasPrefix(string(b), modulePath)
}
