// SPDX-License-Identifier: GPL-2.0-only

// Package flagvalue holds the values a user types on smct's command line
// (through make's variables), each checked as the flag is read: a value
// left empty by make means the default.
package flagvalue

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Path is a path the user typed: absolute from where the user stands,
// as any command line tool reads it. Paths left at their defaults are the
// project's (the command fills them in).
type Path string

func (p *Path) String() string { return string(*p) }

func (p *Path) Set(v string) error {
	if v == "" {
		*p = "" // a make variable left empty
		return nil
	}
	abs, err := filepath.Abs(v)
	*p = Path(abs)
	return err
}

// Paths are Paths given one flag (or argument) each; empty ones are left out.
type Paths []string

func (ps *Paths) String() string { return strings.Join(*ps, " ") }

func (ps *Paths) Set(v string) error {
	var p Path
	err := p.Set(v)
	if p != "" {
		*ps = append(*ps, string(p))
	}
	return err
}

// HTTPURL is a URL a LAVA server posts to: http or https, with a host,
// checked as the flag is parsed.
type HTTPURL string

func (u *HTTPURL) String() string { return string(*u) }

func (u *HTTPURL) Set(v string) error {
	if p, err := url.Parse(v); v != "" && (err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "") {
		return fmt.Errorf("want an http:// or https:// URL")
	}
	*u = HTTPURL(v)
	return nil
}

// Series is a series as make review takes it: an mbox (a path, made
// absolute as Path does), a message-id or a git range (kept as given).
type Series string

func (s *Series) String() string { return string(*s) }

func (s *Series) Set(v string) error {
	if _, err := os.Stat(v); err == nil {
		return (*Path)(s).Set(v)
	}
	*s = Series(v)
	return nil
}

// Words is a list of words given as one string (QEMU_OPTS=, -append).
type Words []string

func (w *Words) String() string { return strings.Join(*w, " ") }

func (w *Words) Set(v string) error {
	*w = strings.Fields(v)
	return nil
}

// Seed is Ginkgo's seed: positive, or "" (SEED= left empty) to choose one.
type Seed int64

func (s *Seed) String() string { return strconv.FormatInt(int64(*s), 10) }

func (s *Seed) Set(v string) error {
	if v == "" {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return fmt.Errorf("want a positive number")
	}
	*s = Seed(n)
	return nil
}

// Duration is a duration above 0, such as 5m.
type Duration time.Duration

func (d *Duration) String() string { return time.Duration(*d).String() }

func (d *Duration) Set(v string) error {
	t, err := time.ParseDuration(v)
	if err != nil || t <= 0 {
		return fmt.Errorf("want a duration above 0, such as 5m")
	}
	*d = Duration(t)
	return nil
}

// Count is a number of things at a time: 0 lets the command choose.
type Count int

func (c *Count) String() string { return strconv.Itoa(int(*c)) }

func (c *Count) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return fmt.Errorf("want 0 (as the machine allows) or more")
	}
	*c = Count(n)
	return nil
}

// Quiet is a silence limit: a duration above 0, or "" (BOOT_QUIET=
// left empty) to let the run choose it.
type Quiet time.Duration

func (q *Quiet) String() string {
	if *q == 0 {
		return ""
	}
	return time.Duration(*q).String()
}

func (q *Quiet) Set(v string) error {
	if v == "" {
		*q = 0
		return nil
	}
	var d Duration
	if err := d.Set(v); err != nil {
		return fmt.Errorf("%w, or nothing to scale it to the accelerator and the kernel", err)
	}
	*q = Quiet(d)
	return nil
}
