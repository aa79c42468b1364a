// SPDX-License-Identifier: GPL-2.0-only

// Command smct is the suite's command: the Makefile's targets call it.
// Each subcommand parses its flags at one door (run), checks them, and
// hands a request to the package that does the work; the command returns
// an outcome, and the door alone prints its end and sets the exit status.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/results"
)

const (
	exitFailed    = 1
	exitNoVerdict = 2
)

func main() {
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

// command is one of smct's subcommands.
type command struct {
	name, about string
	page        string // its page of documentation, from the project's top
	groups      []group
	// flags adds the command's own flags and returns what runs it, once
	// every flag is parsed and checked.
	flags func(fs *flag.FlagSet, r *request) runFunc
	// takesArgs: arguments after the flags go to request.args.
	takesArgs bool
	// prunes: the command fills the cache or results/, and when it ends
	// the door brings them within their caps (cache.go's bound).
	prunes bool
}

// runFunc runs a command; the door prints how it ended.
type runFunc func(ctx context.Context, r *request, out outputs) outcome

// outputs are where a command writes: its report on stdout, progress and
// notes on stderr.
type outputs struct {
	stdout, stderr io.Writer
	progress       *progress.Reporter
}

// commands in the order the usage lists them.
var commands = []command{qemuTestCmd, claimsCmd, kernelCmd, mutantsCmd, matrixCmd, benchCmd, reviewCmd, replyCmd, lavaCmd, lavaResultsCmd, cacheCmd}

func lookup(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func realMain(args []string, stdout, stderr io.Writer) int {
	if len(args) >= 2 && args[0] == "-C" {
		projectDir, args = args[1], args[2:]
	}
	// Refused before a command reads its flags: the line's -exit-codes,
	// if it has one, still applies.
	refused := func(reason string) int {
		return withoutVerdict("", reason).end(stdout, exitCodesIn(args))
	}
	if len(args) > 0 {
		switch args[0] {
		case "help", "-h", "-help", "--help":
			if len(args) > 1 {
				return helpOn(args[1], stdout)
			}
			fmt.Fprint(stdout, usage())
			return 0
		}
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprint(stderr, usage())
		return refused("no command: smct [-C PROJECT-DIR] COMMAND [FLAGS], flags after the command")
	}
	cmd, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "smct: unknown command %q\n%s", args[0], usage())
		return refused(fmt.Sprintf("unknown command %q", args[0]))
	}
	// Every run directory gets kcidb.json: an origin KCIDB would refuse
	// stops the command before it builds or boots anything.
	if _, err := results.KCIDBOrigin(); err != nil {
		fmt.Fprintf(stderr, "smct: %v\n", err)
		return refused(err.Error())
	}
	return cmd.run(args[1:], outputs{stdout: stdout, stderr: stderr, progress: progress.New(stderr)})
}

// run is the door: it parses and checks the command line, finds the
// project, runs the command and ends it; anything refused ends without a
// verdict.
func (c command) run(args []string, out outputs) int {
	r, run, err := c.parse(args, out.stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		// Parsing stops at a bad flag: -exit-codes may lie beyond it.
		// Refused before any work: nothing installed, built, booted or
		// written under results/.
		return withoutVerdict("", err.Error()).end(out.stdout, exitCodesIn(args))
	}
	r.run.Progress = out.progress
	ctx, stop := interruptible()
	defer stop()
	o := run(ctx, r, out)
	if c.prunes && ctx.Err() == nil {
		bound(r, out.progress)
	}
	return o.end(out.stdout, r.exitCodes)
}

// parse reads and checks a command line into a request and finds the
// project; the request holds what was read even on an error.
func (c command) parse(args []string, stderr io.Writer) (*request, runFunc, error) {
	r := new(request)
	fs, run := c.flagSet(r)
	fs.SetOutput(stderr)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return r, run, err
	}
	r.args = fs.Args()
	if err == nil && fs.NArg() > 0 && !c.takesArgs {
		err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	// The project first: the groups' checks read its files (images.lock).
	if err == nil {
		err = workplace(&r.run)
	}
	for _, g := range c.groups {
		if err == nil && g.check != nil {
			err = g.check(r)
		}
	}
	if err == nil && c.prunes {
		err = limits(r)
	}
	return r, run, err
}

// flagSet is the command's flags: its groups', then its own.
func (c command) flagSet(r *request) (*flag.FlagSet, runFunc) {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	for _, g := range c.groups {
		g.add(fs, r)
	}
	run := c.flags(fs, r)
	fs.Usage = func() { c.help(fs) }
	return fs, run
}

// help describes the command's flags, group by group, then its own.
func (c command) help(fs *flag.FlagSet) {
	w := fs.Output()
	fmt.Fprintf(w, "usage: smct %s [FLAGS]\n  %s\n", c.name, c.about)
	printFlag := func(f *flag.Flag) {
		fmt.Fprintf(w, "  -%s\n    \t%s", f.Name, f.Usage)
		if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" {
			fmt.Fprintf(w, " (default %q)", f.DefValue)
		}
		fmt.Fprintln(w)
	}
	grouped := map[string]bool{}
	for _, g := range c.groups {
		fmt.Fprintf(w, "\n[%s] flags:\n", g.name)
		g.flagSet().VisitAll(func(f *flag.Flag) {
			grouped[f.Name] = true
			printFlag(fs.Lookup(f.Name))
		})
	}
	fmt.Fprintf(w, "\n%s's own flags:\n", c.name)
	fs.VisitAll(func(f *flag.Flag) {
		if !grouped[f.Name] {
			printFlag(f)
		}
	})
	if c.page != "" {
		page := c.page
		if dir, err := moduleDir(); err == nil {
			page = filepath.Join(dir, page)
		}
		fmt.Fprintf(w, "\nmore: %s\n", page)
	}
}

// helpOn prints a command's flags and the path of its page.
func helpOn(name string, stdout io.Writer) int {
	c, ok := lookup(name)
	if !ok {
		return withoutVerdict("", fmt.Sprintf("no command %q: smct help lists them", name)).end(stdout, "")
	}
	fs, _ := c.flagSet(new(request))
	fs.SetOutput(stdout)
	fs.Usage()
	return 0
}

// usage is smct's help, made from the commands and their groups.
func usage() string {
	var b strings.Builder
	b.WriteString("usage: smct [-C PROJECT-DIR] COMMAND [FLAGS]\n\ncommands:\n")
	for _, c := range commands {
		var r request
		fs, _ := c.flagSet(&r)
		grouped := map[string]bool{}
		var words []string
		for _, g := range c.groups {
			words = append(words, "["+g.name+"]")
			g.flagSet().VisitAll(func(f *flag.Flag) { grouped[f.Name] = true })
		}
		fs.VisitAll(func(f *flag.Flag) {
			if !grouped[f.Name] {
				words = append(words, "-"+f.Name)
			}
		})
		fmt.Fprintf(&b, "  %-13s %s\n  %-13s %s\n", c.name, c.about, "", strings.Join(words, " "))
	}
	b.WriteString("\nflag groups:\n")
	seen := map[string]bool{}
	for _, c := range commands {
		for _, g := range c.groups {
			if seen[g.name] {
				continue
			}
			seen[g.name] = true
			var names []string
			g.flagSet().VisitAll(func(f *flag.Flag) { names = append(names, "-"+f.Name) })
			fmt.Fprintf(&b, "  %-10s %s\n", "["+g.name+"]", strings.Join(names, " "))
		}
	}
	b.WriteString("\nsmct help COMMAND (or smct COMMAND -h) describes each flag and names the command's page; README.md lists them all.\n")
	return b.String()
}
