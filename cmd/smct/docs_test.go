// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The documentation is held to the code: the front page lists every make
// target and smct command with its page, every page is reached from it,
// the flag reference is the flag groups as smct prints them, and a flag,
// make variable, file or command line a page shows exists and parses.

var updateDocs = flag.Bool("update", false, "write docs/flags.md again")

const frontPageLines = 250

// docs are the front page and every page of docs/.
func docs(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	files, _ := filepath.Glob("../../docs/*.md")
	for _, f := range append(files, "../../README.md") {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel("../..", f)
		out[rel] = string(b)
	}
	return out
}

// makefile is the Makefile's targets and variables.
func makefile(t *testing.T) (targets, vars []string) {
	b, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^([a-z][a-z-]*):`).FindAllStringSubmatch(string(b), -1) {
		targets = append(targets, m[1])
	}
	for _, m := range regexp.MustCompile(`(?m)^([A-Z][A-Z0-9_]*)\s*[?:]?=`).FindAllStringSubmatch(string(b), -1) {
		vars = append(vars, m[1])
	}
	return targets, vars
}

// commandRowRE is a row of the front page's table of commands: make
// targets, smct commands, what, page.
var commandRowRE = regexp.MustCompile("^\\| (.*?) \\|\\s*(.*?)\\s*\\| .+ \\| \\[[a-z]+\\]\\(([^)]+)\\) \\|$")

func TestFrontPageListsEveryCommandWithItsPage(t *testing.T) {
	readme := docs(t)["README.md"]
	if n := strings.Count(readme, "\n"); n > frontPageLines {
		t.Errorf("README.md has %d lines, more than the front page's %d: move a topic to docs/", n, frontPageLines)
	}
	targets, _ := makefile(t)
	rows := map[string]string{} // a target or "smct <command>" -> its page
	for _, line := range strings.Split(readme, "\n") {
		m := commandRowRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if _, err := os.Stat(filepath.Join("../..", m[3])); err != nil {
			t.Errorf("README.md: the row %q links %s, which does not exist", line, m[3])
		}
		for _, name := range regexp.MustCompile("`([a-z-]+)`").FindAllStringSubmatch(m[1], -1) {
			rows[name[1]] = m[3]
		}
		if c := regexp.MustCompile("^`([a-z-]+)`$").FindStringSubmatch(m[2]); c != nil {
			rows["smct "+c[1]] = m[3]
		}
	}
	for _, target := range targets {
		if _, ok := rows[target]; !ok {
			t.Errorf("README.md: the make target %s has no row in the table of commands", target)
		}
	}
	for _, c := range commands {
		page, ok := rows["smct "+c.name]
		switch {
		case !ok:
			t.Errorf("README.md: the smct command %s has no row in the table of commands", c.name)
		case c.page == "":
			t.Errorf("smct %s names no page (command.page)", c.name)
		case page != c.page:
			t.Errorf("smct %s: its row links %s, smct help names %s", c.name, page, c.page)
		}
		if _, err := os.Stat(filepath.Join("../..", c.page)); c.page != "" && err != nil {
			t.Errorf("smct %s: its page %s does not exist", c.name, c.page)
		}
	}
}

// linkRE is a Markdown link to a file of the project.
var linkRE = regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`)

func TestEveryPageIsReachedAndEveryLinkResolves(t *testing.T) {
	all := docs(t)
	linked := map[string]bool{}
	for name, text := range all {
		for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
			target := filepath.Clean(filepath.Join(filepath.Dir(name), m[1]))
			if _, err := os.Stat(filepath.Join("../..", target)); err != nil {
				t.Errorf("%s links %s, which does not exist", name, m[1])
			}
			if name == "README.md" {
				linked[target] = true
			}
		}
	}
	for name := range all {
		if name != "README.md" && !linked[name] {
			t.Errorf("%s: no link from README.md reaches it", name)
		}
	}
}

var (
	// codeSpanRE is an inline code span.
	codeSpanRE = regexp.MustCompile("`([^`\n]+)`")
	// flagRE is a flag of smct in a code span: "-labels", "-arch arm64".
	flagRE = regexp.MustCompile(`^-([a-z][a-z0-9-]*)(?:[ =]|$)`)
	// makeVarRE is a make variable in a code span: "LABELS=", "ARCH=arm64".
	makeVarRE = regexp.MustCompile(`^([A-Z][A-Z0-9_]+)=`)
	// pathRE is a path of the project in a code span.
	pathRE = regexp.MustCompile(`^(?:cmd|internal|suites|harness|initramfs|qemu|kernel|lava|test|docs)/[A-Za-z0-9_./-]*$`)
)

// environment are the variables the pages may name that are not the
// Makefile's own: read from the environment by smct and the tests, and
// set for the lab's script and the boards' test definition. Each must
// still be read somewhere (TestEnvironmentIsRead).
var environment = []string{
	"SMCT_E2E", "SMCT_LIVE", "SMCT_CACHE", "CACHE_LIMIT", "KEEP_RUNS", "KCIDB_ORIGIN",
	"LAB_PORT", "LAB_TOKEN", "SUITE", "SUITE_URL", "FORCE", "KMSG", "SHELL",
}

// placeholders stand for a name in a page's pattern (CACHE_LIMIT=AREA=SIZE).
var placeholders = []string{"AREA"}

// foreignFlags are other programs' flags the pages name: QEMU's, git's,
// go test's.
var foreignFlags = []string{"machine", "enable-kvm", "m", "dirty", "update"}

func TestPagesNameFlagsVariablesAndFilesThatExist(t *testing.T) {
	_, vars := makefile(t)
	flags := map[string]bool{}
	for _, c := range commands {
		fs, _ := c.flagSet(new(request))
		fs.VisitAll(func(f *flag.Flag) { flags[f.Name] = true })
	}
	for name, text := range docs(t) {
		for _, m := range codeSpanRE.FindAllStringSubmatch(text, -1) {
			span := m[1]
			if f := flagRE.FindStringSubmatch(span); f != nil && len(f[1]) > 1 && !flags[f[1]] && !slices.Contains(foreignFlags, f[1]) && !strings.Contains(span, ".") {
				t.Errorf("%s names the flag -%s, which no smct command has", name, f[1])
			}
			if v := makeVarRE.FindStringSubmatch(span); v != nil && !slices.Contains(vars, v[1]) && !slices.Contains(environment, v[1]) && !slices.Contains(placeholders, v[1]) && !strings.HasPrefix(v[1], "CONFIG_") {
				t.Errorf("%s names the make variable %s=, which the Makefile does not have", name, v[1])
			}
			// kernel/configs/ is a kernel tree's, not the project's kernel/.
			if pathRE.MatchString(span) && !strings.ContainsAny(span, "<*{") && !strings.HasPrefix(span, "kernel/configs/") {
				if _, err := os.Stat(filepath.Join("../..", strings.TrimSuffix(span, "/"))); err != nil {
					t.Errorf("%s names %s, which the project does not have", name, span)
				}
			}
		}
	}
}

// TestEnvironmentIsRead keeps the list of environment variables true:
// each is still read by the code, the Makefile or the lab's scripts.
func TestEnvironmentIsRead(t *testing.T) {
	var code strings.Builder
	for _, pattern := range []string{"../../*/*.go", "../../*/*/*.go", "../../*/*/*/*.go", "../../lava/*", "../../Makefile", "../../test/*/*.go"} {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil && !strings.HasSuffix(f, "docs_test.go") {
				code.Write(b)
			}
		}
	}
	for _, v := range environment {
		if !strings.Contains(code.String(), `"`+v+`"`) && !strings.Contains(code.String(), v+"=") && !strings.Contains(code.String(), "$"+v) && !strings.Contains(code.String(), v+":") {
			t.Errorf("%s is listed as read from the environment, but nothing reads it any more", v)
		}
	}
}

func TestCommandLinesOfThePagesParse(t *testing.T) {
	targets, vars := makefile(t)
	for name, text := range docs(t) {
		for _, line := range codeLines(text) {
			words, err := shellWords(line)
			if err != nil || len(words) == 0 {
				continue
			}
			switch {
			case words[0] == "make":
				for _, w := range words[1:] {
					if k, _, isVar := strings.Cut(w, "="); isVar {
						if !slices.Contains(vars, k) && !slices.Contains(environment, k) {
							t.Errorf("%s: %q sets %s, which the Makefile does not have", name, line, k)
						}
					} else if !slices.Contains(targets, w) {
						t.Errorf("%s: %q asks for the target %s, which the Makefile does not have", name, line, w)
					}
				}
			case words[0] == "./bin/smct" || words[0] == "smct":
				args := words[1:]
				if len(args) >= 2 && args[0] == "-C" {
					args = args[2:]
				}
				if len(args) == 0 || args[0] == "help" {
					continue
				}
				c, ok := lookup(args[0])
				if !ok {
					t.Errorf("%s: %q: smct has no command %s", name, line, args[0])
					continue
				}
				fs, _ := c.flagSet(new(request))
				fs.SetOutput(new(bytes.Buffer))
				if err := fs.Parse(args[1:]); err != nil {
					t.Errorf("%s: %q does not parse: %v", name, line, err)
				}
			}
		}
	}
}

// codeLines are the lines of a page's code blocks that are commands: the
// prompt and comments taken off, a backslash's continuation joined.
func codeLines(text string) []string {
	var out []string
	in, joined := false, ""
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			in = !in
			continue
		}
		if !in {
			continue
		}
		line = strings.TrimPrefix(strings.TrimSpace(line), "$ ")
		if i := strings.Index(line, "  #"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if cont, ok := strings.CutSuffix(line, "\\"); ok {
			joined += cont
			continue
		}
		out = append(out, joined+line)
		joined = ""
	}
	return out
}

// shellWords splits a command line as sh would, quotes and all; a line
// with what the split cannot follow (a substitution, a pipe or a
// placeholder) is not a command to parse.
func shellWords(line string) ([]string, error) {
	if strings.ContainsAny(line, "$|;&<>(`") || strings.Contains(line, "...") || strings.Contains(line, "[") {
		return nil, fmt.Errorf("not a plain command")
	}
	var words []string
	var cur strings.Builder
	quote, started := rune(0), false
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, started = r, true
		case r == ' ' || r == '\t':
			if started || cur.Len() > 0 {
				words = append(words, cur.String())
				cur.Reset()
				started = false
			}
		default:
			cur.WriteRune(r)
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote")
	}
	if started || cur.Len() > 0 {
		words = append(words, cur.String())
	}
	return words, nil
}

// flagReference is docs/flags.md as the flag groups make it: what
// smct help prints, command by command.
func flagReference() string {
	var b strings.Builder
	b.WriteString("# smct's flags\n\nWritten by `go test ./cmd/smct -run TestFlagReference -update` from the\n" +
		"flag groups, as `smct help COMMAND` prints them; the make variables pass\n" +
		"to these flags (`Makefile`). Do not edit.\n\n```\n")
	b.WriteString(usage())
	b.WriteString("```\n")
	for _, c := range commands {
		fs, _ := c.flagSet(new(request))
		var h bytes.Buffer
		fs.SetOutput(&h)
		saved := c.page
		c.page = "" // the page's absolute path is this machine's
		c.help(fs)
		c.page = saved
		fmt.Fprintf(&b, "\n## smct %s\n\nMore: [%s](%s).\n\n```\n%s```\n", c.name, filepath.Base(c.page), filepath.Base(c.page), h.String())
	}
	return b.String()
}

func TestFlagReference(t *testing.T) {
	want := flagReference()
	if *updateDocs {
		if err := os.WriteFile("../../docs/flags.md", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("../../docs/flags.md")
	if err != nil || string(got) != want {
		t.Errorf("docs/flags.md is not the flag groups as smct prints them (%v): go test ./cmd/smct -run TestFlagReference -update", err)
	}
}
