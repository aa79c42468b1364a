// SPDX-License-Identifier: GPL-2.0-only

package review

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kbuild"
	"github.com/ftrace-stackmap/conformance/internal/page"
	"github.com/ftrace-stackmap/conformance/internal/reply"
)

// Review is a series walked, and the other version it was compared with.
type Review struct {
	Dir     string
	Series  *Walk
	Against *Walk // nil when no other version was asked for
	// Versions is versions.txt: the two versions side by side.
	Versions string
	// ReplyNote says why the review has no reply.eml though its series
	// came from a thread; "" when it has one or needs none.
	ReplyNote string
}

// VersionsFile holds the comparison of two versions of a series.
const VersionsFile = "versions.txt"

// Review walks series, and against when given, under dir (against's walk
// in dir/against), and writes every report: each walk's, versions.txt, and
// the reply to the series' thread when it came from one. A walk that could
// not go on returns its error, the reports made so far written.
func (w Walker) Review(ctx context.Context, series Series, against *Series, tree, dir string) (*Review, error) {
	r := &Review{Dir: dir}
	var err error
	if r.Series, err = w.walkAndWrite(ctx, series, tree, dir); err != nil {
		return r, err
	}
	if s := series; s.Thread != nil {
		if _, err := reply.Write(dir, s.Thread, s.MessageID, r.Series.Reply(w.Options.Profile), ""); err != nil {
			r.ReplyNote = fmt.Sprintf("no %s: %v", reply.File, err)
		}
	}
	if against == nil {
		return r, nil
	}
	if r.Against, err = w.walkAndWrite(ctx, *against, tree, filepath.Join(dir, "against")); err != nil {
		return r, err
	}
	r.Versions = Compare(r.Against, r.Series)
	if c := CompareClaims(r.Against, r.Series); c != "" {
		r.Versions += "\n" + c
	}
	if err := os.WriteFile(filepath.Join(dir, VersionsFile), []byte(r.Versions), 0o644); err != nil {
		return r, fmt.Errorf("writing the reports: %w", err)
	}
	return r, nil
}

// walkAndWrite walks one series into dir and writes its reports.
func (w Walker) walkAndWrite(ctx context.Context, s Series, tree, dir string) (*Walk, error) {
	walk, err := w.Walk(ctx, s, tree, dir)
	if err != nil {
		if walk != nil {
			if werr := walk.Write(); werr != nil {
				err = fmt.Errorf("%w (and writing its reports: %v)", err, werr)
			}
		}
		return walk, fmt.Errorf("walking %s: %w (reports so far in %s)", s.Name, err, dir)
	}
	if err := walk.Write(); err != nil {
		return walk, fmt.Errorf("writing the reports: %w", err)
	}
	return walk, nil
}

// Read checks a review's input before anything is built, in the order a
// user fixes it: both given, the tree for every arch, each series read
// (against only when given).
func Read(series, against, tree, base string, arches arch.List) (Series, *Series, error) {
	if series == "" || tree == "" {
		return Series{}, nil, errors.New("give -series (SERIES=) and -tree (TREE=)")
	}
	for _, a := range arches {
		if err := kbuild.CheckTree(tree, a); err != nil {
			return Series{}, nil, err
		}
	}
	s, err := ReadSeries(series, tree, base)
	if err != nil || against == "" {
		return s, nil, err
	}
	other, err := ReadSeries(against, tree, base)
	return s, &other, err
}

// Text is what make review prints: the series' table, the comparison
// with the other version, and where the reports are.
func (rv *Review) Text(claims bool) string {
	var b strings.Builder
	b.WriteString(rv.Series.Text())
	if rv.Against != nil {
		b.WriteString("\n" + rv.Versions)
		// The other version is what the series is compared with: its own
		// failures are expected, and its walk has its table and status.
		fmt.Fprintf(&b, "%s: walk %s (its table: %s)\n", rv.Against.Series.Name, rv.Against.Verdict(), filepath.Join(rv.Dir, "against", "series.txt"))
	}
	if claims {
		fmt.Fprintf(&b, "claims of the whole series: %s\n", filepath.Join(rv.Dir, ClaimsFile))
	}
	fmt.Fprintf(&b, "results: %s\npage:    %s\n", rv.Dir, filepath.Join(rv.Dir, page.File))
	return b.String()
}

// NoVerdict names the prefixes of a walk that gave no verdict.
func (w *Walk) NoVerdict() string {
	var none []string
	for _, a := range w.Arches {
		for k, st := range w.Steps[a] {
			if st.Infra != "" {
				none = append(none, fmt.Sprintf("%d/%d on %s (%s)", k, len(w.Series.Patches), a, st.Infra))
			}
		}
	}
	return "no verdict for " + strings.Join(none, ", ")
}
