// Package clauses audits the contract clause by clause: every clause of
// CONTRACT.md is judged by a spec (a harness.Clause call that a spec of
// suites/ reaches), every such call names a clause that exists and belongs
// to its spec's own requirement, every fault switch names a clause, and
// CLAUSES.md, the table of all three, is up to date.
package clauses

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/mutants"
)

var update = flag.Bool("update", false, "write CLAUSES.md again")

const root = "../.."

// open are the clauses no spec checks yet, and why: each one is a known
// gap, listed in CLAUSES.md. A clause that gains a spec must leave it.
var open = map[string]string{}

var clauseRE = regexp.MustCompile(`^- \[((?:SM|BASE)-[A-Z]+-\d+\.\d+)\] (.*)$`)

type clause struct {
	ID, Text string
	Specs    []string // the specs that judge it: requirement IDs and file
	Faults   []string
}

// readContract returns CONTRACT.md's clauses in order, each with the
// first line of its sentence.
func readContract(t *testing.T) []*clause {
	f, err := os.Open(filepath.Join(root, "CONTRACT.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var list []*clause
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := clauseRE.FindStringSubmatch(sc.Text()); m != nil {
			list = append(list, &clause{ID: m[1], Text: m[2]})
		}
	}
	return list
}

// A spec is one harness.ReqIt of suites/, named as CLAUSES.md names it:
// its requirement IDs and its file, never a line, so an edit above it
// changes nothing.
// checkpointSpec names, among a clause's specs, the checkpoint after
// every stackmap spec.
const (
	checkpointSpec = "every checkpoint"
	checkpointFile = "checkpoint.go"
)

type spec struct {
	IDs  []string
	File string
}

func (s spec) String() string { return strings.Join(s.IDs, " ") + ", " + s.File }

// A mark is one harness.Clause call.
type mark struct {
	ID  string
	Pos token.Position
}

// pkg is one package of suites/, parsed: its functions by name (methods
// by method name), so that a call in a spec leads to the helper's marks.
type pkg struct {
	fset    *token.FileSet
	files   map[string]*ast.File // by path relative to the module
	funcs   map[string]*ast.FuncDecl
	methods map[string][]*ast.FuncDecl
}

// readSuites parses every package under dir (suites/), test files left out.
func readSuites(t *testing.T, dir string) []*pkg {
	dirs := map[string]*pkg{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		p := dirs[filepath.Dir(path)]
		if p == nil {
			p = &pkg{fset: fset, files: map[string]*ast.File{}, funcs: map[string]*ast.FuncDecl{}, methods: map[string][]*ast.FuncDecl{}}
			dirs[filepath.Dir(path)] = p
		}
		p.files[rel] = f
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Body != nil {
				if fn.Recv == nil {
					p.funcs[fn.Name.Name] = fn
				} else {
					p.methods[fn.Name.Name] = append(p.methods[fn.Name.Name], fn)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []*pkg
	for _, p := range dirs {
		out = append(out, p)
	}
	return out
}

// harnessCall says whether call is harness.<name>(...).
func harnessCall(call *ast.CallExpr, name string) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == "harness"
}

// literal is a string literal's value, or false.
func literal(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// marks returns the Clause calls in n and in every function of the
// package that n names, called or passed on, and so on: a helper's mark
// counts for every spec that reaches it. Calls are found by name, so a
// method counts wherever a method of that name is called.
func (p *pkg) marks(n ast.Node, seen map[*ast.FuncDecl]bool, problems *[]string) []mark {
	var out []mark
	var visit func(ast.Node) bool
	into := func(fn *ast.FuncDecl) {
		if !seen[fn] {
			seen[fn] = true
			out = append(out, p.marks(fn.Body, seen, problems)...)
		}
	}
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if harnessCall(n, "Clause") {
				id, ok := "", len(n.Args) > 0
				if ok {
					id, ok = literal(n.Args[0])
				}
				if !ok {
					*problems = append(*problems, fmt.Sprintf("%s: harness.Clause's first argument is not a string literal", p.fset.Position(n.Pos())))
					break
				}
				out = append(out, mark{ID: id, Pos: p.fset.Position(n.Pos())})
			}
		case *ast.SelectorExpr:
			for _, fn := range p.methods[n.Sel.Name] {
				into(fn)
			}
			ast.Inspect(n.X, visit) // the selected name is no function of the package
			return false
		case *ast.Ident:
			if fn := p.funcs[n.Name]; fn != nil {
				into(fn)
			}
		}
		return true
	}
	ast.Inspect(n, visit)
	return out
}

// readMarks returns, by clause, the specs that judge it, and what is wrong
// with the marks: a Clause no spec reaches, or that names another
// requirement's clause than its spec's, and a spec that judges no clause
// of one of its requirements.
func readMarks(t *testing.T, dir string) (map[string][]spec, []string) {
	bySpec := map[string][]spec{}
	var problems []string
	for _, p := range readSuites(t, dir) {
		all := map[token.Position]bool{} // every Clause call that names a clause, reached or not
		// The marks of always-true clauses, judged in whatever state the
		// spec that reaches them is in: every Clause of checkpoint.go, and
		// one given to broken(). They count for every checkpoint, not for
		// the spec.
		invariant := map[token.Position]bool{}
		for file, f := range p.files {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if harnessCall(call, "Clause") && len(call.Args) > 0 {
					if _, ok := literal(call.Args[0]); ok {
						all[p.fset.Position(call.Pos())] = false
						if filepath.Base(file) == checkpointFile {
							invariant[p.fset.Position(call.Pos())] = true
						}
					}
				}
				if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "broken" {
					for _, a := range call.Args {
						if c, ok := a.(*ast.CallExpr); ok && harnessCall(c, "Clause") {
							invariant[p.fset.Position(c.Pos())] = true
						}
					}
				}
				return true
			})
		}
		for file, f := range p.files {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || !harnessCall(call, "ReqIt") || len(call.Args) < 3 {
					return true
				}
				ids, ok := literal(call.Args[0])
				if !ok {
					problems = append(problems, fmt.Sprintf("%s: harness.ReqIt's requirement IDs are not a string literal", p.fset.Position(call.Pos())))
					return true
				}
				sp := spec{IDs: strings.Fields(ids), File: file}
				judged := map[string]bool{}
				for _, arg := range call.Args[2:] {
					for _, m := range p.marks(arg, map[*ast.FuncDecl]bool{}, &problems) {
						all[m.Pos] = true
						req := contract.RequirementOf(m.ID)
						if invariant[m.Pos] {
							cp := spec{IDs: []string{checkpointSpec}, File: m.Pos.Filename[strings.LastIndex(m.Pos.Filename, "suites/"):]}
							if !slices.ContainsFunc(bySpec[m.ID], func(o spec) bool { return o.String() == cp.String() }) {
								bySpec[m.ID] = append(bySpec[m.ID], cp)
							}
							continue
						}
						if !slices.Contains(sp.IDs, req) {
							problems = append(problems, fmt.Sprintf("%s: the spec of %s at %s reaches harness.Clause(%q), a clause of no requirement of its own",
								m.Pos, ids, p.fset.Position(call.Pos()), m.ID))
							continue
						}
						judged[req] = true
						if !slices.ContainsFunc(bySpec[m.ID], func(o spec) bool { return o.String() == sp.String() }) {
							bySpec[m.ID] = append(bySpec[m.ID], sp)
						}
					}
				}
				for _, id := range sp.IDs {
					if !judged[id] {
						problems = append(problems, fmt.Sprintf("%s: the spec of %s judges no clause of %s (no harness.Clause of it)", p.fset.Position(call.Pos()), ids, id))
					}
				}
				return true
			})
		}
		// The checkpoint after every stackmap spec (an AfterEach) judges
		// the always-true clauses of any requirement, in every state a
		// spec leaves.
		for file, f := range p.files {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if id, isIdent := call.Fun.(*ast.Ident); !isIdent || id.Name != "AfterEach" {
					return true
				}
				sp := spec{IDs: []string{checkpointSpec}, File: file}
				for _, arg := range call.Args {
					for _, m := range p.marks(arg, map[*ast.FuncDecl]bool{}, &problems) {
						all[m.Pos] = true
						if !slices.ContainsFunc(bySpec[m.ID], func(o spec) bool { return o.String() == sp.String() }) {
							bySpec[m.ID] = append(bySpec[m.ID], sp)
						}
					}
				}
				return true
			})
		}
		for pos, reached := range all {
			if !reached {
				problems = append(problems, fmt.Sprintf("%s: harness.Clause outside every spec and every helper a spec calls", pos))
			}
		}
	}
	for _, specs := range bySpec {
		sort.Slice(specs, func(i, j int) bool { return specs[i].String() < specs[j].String() })
	}
	sort.Strings(problems)
	return bySpec, problems
}

func TestClauses(t *testing.T) {
	list := readContract(t)
	if len(list) == 0 {
		t.Fatal("CONTRACT.md has no clauses")
	}
	byID := map[string]*clause{}
	for _, c := range list {
		if byID[c.ID] != nil {
			t.Errorf("clause %s appears twice in CONTRACT.md", c.ID)
		}
		byID[c.ID] = c
		if contract.RequirementOf(c.ID) == "" {
			t.Errorf("clause %s: no requirement %s", c.ID, strings.Split(c.ID, ".")[0])
		}
	}
	for req := range contract.Requirements {
		if byID[req+".1"] == nil {
			t.Errorf("requirement %s has no clauses in CONTRACT.md", req)
		}
	}
	bySpec, problems := readMarks(t, "suites")
	for _, p := range problems {
		t.Error(p)
	}
	for id, specs := range bySpec {
		c := byID[id]
		if c == nil {
			t.Errorf("the spec of %s judges clause %s, which CONTRACT.md does not have", specs[0], id)
			continue
		}
		for _, sp := range specs {
			c.Specs = append(c.Specs, sp.String())
		}
	}
	for _, f := range mutants.Faults() {
		c := byID[f.Clause]
		switch {
		case f.Clause == "":
			t.Errorf("fault %s names no clause", f.Name)
		case c == nil:
			t.Errorf("fault %s breaks clause %s, which CONTRACT.md does not have", f.Name, f.Clause)
		default:
			c.Faults = append(c.Faults, f.Name)
		}
	}
	for _, c := range list {
		why, isOpen := open[c.ID]
		switch {
		case len(c.Specs) == 0 && !isOpen:
			t.Errorf("clause %s is judged by no spec (a harness.Clause(%q, ...) that a spec of suites/ reaches): %s", c.ID, c.ID, c.Text)
		case len(c.Specs) > 0 && isOpen:
			t.Errorf("clause %s is judged by %s: take it out of the open list (%s)", c.ID, strings.Join(c.Specs, "; "), why)
		}
	}
	for id := range open {
		if byID[id] == nil {
			t.Errorf("the open list names clause %s, which CONTRACT.md does not have", id)
		}
	}

	table := render(list)
	path := filepath.Join(root, "CLAUSES.md")
	if *update {
		if err := os.WriteFile(path, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := os.ReadFile(path)
	if err != nil || string(old) != table {
		t.Errorf("CLAUSES.md is not the table of CONTRACT.md, suites/ and the fault switches: go test ./test/clauses -update")
	}
}

// render writes the table: one row per clause.
func render(list []*clause) string {
	var b strings.Builder
	covered, faulted, faults := 0, 0, 0
	for _, c := range list {
		if len(c.Specs) > 0 {
			covered++
		}
		if len(c.Faults) > 0 {
			faulted++
		}
		faults += len(c.Faults)
	}
	b.WriteString("# Clauses, the specs that judge them, the faults that break them\n\n")
	b.WriteString("Written by `go test ./test/clauses -update` from CONTRACT.md, the\n")
	b.WriteString("`harness.Clause` calls of the specs in suites/ and the fault table of\n")
	b.WriteString("internal/mutants. A spec is named by its requirement IDs and its file; a\n")
	b.WriteString("call in a helper counts for every spec that reaches it. Do not edit.\n\n")
	fmt.Fprintf(&b, "%d clauses; %d judged by a spec, %d broken by at least one of %d fault switches.\n\n",
		len(list), covered, faulted, faults)
	b.WriteString("| clause | specs | faults |\n|---|---|---|\n")
	for _, c := range list {
		specs := strings.Join(c.Specs, "<br>")
		if why, ok := open[c.ID]; ok {
			specs = "none: " + why
		}
		sort.Strings(c.Faults)
		faults := strings.Join(slices.Compact(c.Faults), ", ")
		if faults == "" {
			faults = "-"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", c.ID, specs, faults)
	}
	return b.String()
}

// TestMarkRules holds the rules to a package made to break each: a mark
// counts for the specs that reach it, through helpers and methods, and
// for no other.
func TestMarkRules(t *testing.T) {
	bySpec, problems := readMarks(t, "test/clauses/testdata/suites")
	const file = "test/clauses/testdata/suites/rules/rules.go"
	got := map[string]string{}
	for id, specs := range bySpec {
		var names []string
		for _, sp := range specs {
			names = append(names, sp.String())
		}
		got[id] = strings.Join(names, "; ")
	}
	want := map[string]string{
		"SM-STAT-03.4": "SM-STAT-03, " + file,                                     // in the spec's body
		"SM-STAT-03.2": "SM-STAT-03 SM-BIN-03, " + file + "; SM-STAT-03, " + file, // in a helper two specs call
		"SM-STAT-03.3": "SM-STAT-03 SM-BIN-03, " + file,                           // in a method, passed on as a value
		"SM-BIN-03.1":  "SM-STAT-03 SM-BIN-03, " + file,
	}
	if !maps.Equal(got, want) {
		t.Errorf("clauses judged: %v, want %v", got, want)
	}
	for _, want := range []string{
		"a clause of no requirement of its own",
		"judges no clause of SM-TEXT-01",
		"harness.Clause's first argument is not a string literal",
		"harness.Clause outside every spec and every helper a spec calls",
	} {
		if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, want) }) {
			t.Errorf("no problem says %q: %q", want, problems)
		}
	}
	if len(problems) != 4 {
		t.Errorf("%d problems, want 4: %q", len(problems), problems)
	}
}
