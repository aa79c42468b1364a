// SPDX-License-Identifier: GPL-2.0-only

// Command smct is the suite's command: the Makefile's targets call it.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/ftrace-stackmap/conformance/internal/results"
)

const (
	exitFailed    = 1
	exitNoVerdict = 2
)

func main() {
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: smct [-C PROJECT-DIR] COMMAND ...
  smct qemu-test -arch arm64|x86_64 [-kernel PATH | -tree DIR | -image ENTRY] [-profile v4|v3] [-labels FILTER] [-claims]
  smct claims -arch arm64|x86_64 [-kernel PATH | -tree DIR | -image ENTRY]
  smct kernel -arch arm64|x86_64 [-pin]
  smct mutants -arch arm64|x86_64 [-kernel PATH | -image ENTRY] [-faults a,b]
  smct matrix [-images a,b] [-arches arm64,x86_64] [-parallel 2]
  smct bench [-image ENTRY] [-reps 3] [-matrix-images a,b]
  smct review -series MBOX|MSGID|BASE..HEAD -tree DIR [-base REV] [-arches a,b] [-against SERIES]
  smct reply [-run DIR]
  smct lava -arch arm64|x86_64 [-kernel PATH | -tree DIR | -image ENTRY] [-profile v4|v3] [-labels FILTER] [-url URL]
  smct lava-results -log LAVA-LOG
  smct help`

// commands are smct's subcommands; each parses its own flags.
var commands = map[string]func(args []string, stdout, stderr io.Writer) int{
	"qemu-test":    qemuTestMain,
	"kernel":       kernelMain,
	"claims":       claimsMain,
	"mutants":      mutantsMain,
	"matrix":       matrixMain,
	"review":       reviewMain,
	"bench":        benchMain,
	"reply":        replyMain,
	"lava":         lavaMain,
	"lava-results": lavaResultsMain,
}

func realMain(args []string, stdout, stderr io.Writer) int {
	if len(args) >= 2 && args[0] == "-C" {
		projectDir, args = args[1], args[2:]
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return exitNoVerdict
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		fmt.Fprintln(stdout, usage)
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "smct: unknown command %q\n%s\n", args[0], usage)
		return exitNoVerdict
	}
	// Every run directory gets kcidb.json: an origin KCIDB would refuse
	// stops the command before it builds or boots anything.
	if _, err := results.KCIDBOrigin(); err != nil {
		fmt.Fprintf(stderr, "smct: %v\n", err)
		printNoVerdict(stdout, err.Error())
		return exitNoVerdict
	}
	return cmd(args[1:], stdout, stderr)
}
