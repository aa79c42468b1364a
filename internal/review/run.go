// SPDX-License-Identifier: GPL-2.0-only

package review

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

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
