// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/kernels/korigin"
)

// KCIDBFile is a run's results as KCIDB I/O data (schema v5.3,
// kernelci/kcidb-io): what KernelCI's database takes from every lab. The
// run writes it; it submits nothing.
const KCIDBFile = "kcidb.json"

// KCIDBOriginEnv names the CI system that submits kcidb.json: KCIDB
// prefixes every id with it, and the KernelCI team gives each lab its own.
const (
	KCIDBOriginEnv     = "KCIDB_ORIGIN"
	DefaultKCIDBOrigin = "smct"
)

var (
	kcidbOrigin = regexp.MustCompile(`^[a-z0-9_]+$`) // the schema's origin
	kcidbArch   = regexp.MustCompile(`^[a-z0-9_]*$`) // the schema's architecture
	fullCommit  = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

// KCIDBOrigin is the origin kcidb.json is written for: KCIDB_ORIGIN=, else
// DefaultKCIDBOrigin. One KCIDB refuses is an error, which smct gives
// before a run begins.
func KCIDBOrigin() (string, error) {
	origin := os.Getenv(KCIDBOriginEnv)
	if origin == "" {
		return DefaultKCIDBOrigin, nil
	}
	return origin, CheckKCIDBOrigin(origin)
}

// CheckKCIDBOrigin refuses an origin that KCIDB's schema does not allow.
func CheckKCIDBOrigin(origin string) error {
	if !kcidbOrigin.MatchString(origin) {
		return fmt.Errorf("%s=%q: KCIDB takes an origin of lower-case letters, digits and _ only (^[a-z0-9_]+$)", KCIDBOriginEnv, origin)
	}
	return nil
}

// The I/O data: the objects and the fields of them this suite knows, named
// as the schema names them. Empty fields are left out: the schema says
// that a missing field is unknown, and it allows no nulls.
type (
	kcidbData struct {
		Version   kcidbVersion    `json:"version"`
		Checkouts []kcidbCheckout `json:"checkouts"`
		Builds    []kcidbBuild    `json:"builds"`
		Tests     []kcidbTest     `json:"tests"`
	}
	kcidbVersion struct {
		Major int `json:"major"`
		Minor int `json:"minor"`
	}
	kcidbCheckout struct {
		ID               string `json:"id"`
		Origin           string `json:"origin"`
		GitRepositoryURL string `json:"git_repository_url,omitempty"`
		GitCommitHash    string `json:"git_commit_hash,omitempty"`
		GitCommitName    string `json:"git_commit_name,omitempty"`
		// PatchsetHash is "" for a tree known to have no patches on top,
		// and left out when that is not known.
		PatchsetHash *string `json:"patchset_hash,omitempty"`
		MessageID    string  `json:"message_id,omitempty"`
		Comment      string  `json:"comment,omitempty"`
		Valid        *bool   `json:"valid,omitempty"`
		Misc         misc    `json:"misc,omitempty"`
	}
	kcidbBuild struct {
		CheckoutID   string `json:"checkout_id"`
		ID           string `json:"id"`
		Origin       string `json:"origin"`
		Comment      string `json:"comment,omitempty"`
		Architecture string `json:"architecture,omitempty"`
		ConfigName   string `json:"config_name,omitempty"`
		Compiler     string `json:"compiler,omitempty"`
		Status       string `json:"status,omitempty"`
		Misc         misc   `json:"misc,omitempty"`
	}
	kcidbTest struct {
		BuildID     string            `json:"build_id"`
		ID          string            `json:"id"`
		Origin      string            `json:"origin"`
		Path        string            `json:"path"`
		Comment     string            `json:"comment,omitempty"`
		Status      string            `json:"status"`
		StartTime   string            `json:"start_time,omitempty"`
		Duration    float64           `json:"duration,omitempty"`
		LogExcerpt  string            `json:"log_excerpt,omitempty"`
		Environment *kcidbEnvironment `json:"environment,omitempty"`
		Misc        misc              `json:"misc,omitempty"`
		Number      *kcidbNumber      `json:"number,omitempty"`
	}
	// kcidbNumber is a test's numeric output: a measurement, not a verdict.
	kcidbNumber struct {
		Value  float64 `json:"value"`
		Unit   string  `json:"unit,omitempty"`
		Prefix string  `json:"prefix,omitempty"`
	}
	kcidbEnvironment struct {
		Comment string `json:"comment"`
	}
)

// misc is an object's free-form data, without the values not known.
type misc map[string]any

func (m misc) set(key string, v any) {
	switch x := v.(type) {
	case string:
		if x == "" {
			return
		}
	case int64:
		if x == 0 {
			return
		}
	case []string:
		if len(x) == 0 {
			return
		}
	case []korigin.Patch:
		if len(x) == 0 {
			return
		}
	}
	m[key] = v
}

// KCIDB is runs as one KCIDB I/O document: a checkout, a build and tests
// for each run; a checkout or build that runs share (one source on two
// arches, one kernel run twice) is written once.
func KCIDB(origin string, runs ...*Result) ([]byte, error) {
	if err := CheckKCIDBOrigin(origin); err != nil {
		return nil, err
	}
	data := kcidbData{Version: kcidbVersion{5, 3}, Checkouts: []kcidbCheckout{}, Builds: []kcidbBuild{}, Tests: []kcidbTest{}}
	seen := map[string]bool{}
	for _, res := range runs {
		c := kcidbCheckoutOf(origin, res)
		b := kcidbBuildOf(origin, c.ID, res)
		if !seen[c.ID] {
			data.Checkouts = append(data.Checkouts, c)
		}
		if !seen[b.ID] {
			data.Builds = append(data.Builds, b)
		}
		seen[c.ID], seen[b.ID] = true, true
		data.Tests = append(data.Tests, kcidbTests(origin, b.ID, res)...)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // "<bool>" reads better than "\u003cbool\u003e"
	enc.SetIndent("", "  ")
	err := enc.Encode(data)
	return buf.Bytes(), err
}

// WriteKCIDB writes the runs' KCIDB document into dir, as kcidb.json.
func WriteKCIDB(dir, origin string, runs ...*Result) error {
	js, err := KCIDB(origin, runs...)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, KCIDBFile), js, 0o644)
}

// kcidbCheckoutOf is the source the run's kernel was made from. Its id is
// made of what it says, so that the runs of one source share it.
func kcidbCheckoutOf(origin string, res *Result) kcidbCheckout {
	o := res.Origin
	c := kcidbCheckout{Origin: origin, Misc: misc{}}
	if strings.HasPrefix(o.Tree, "https://") { // the only URLs the schema takes
		c.GitRepositoryURL = o.Tree
	} else {
		c.Misc.set("tree", o.Tree)
	}
	if fullCommit.MatchString(o.Commit) {
		c.GitCommitHash, c.GitCommitName = o.Commit, o.Describe
	}
	if strings.Contains(o.Series, "@") && !strings.Contains(o.Series, "/") {
		c.MessageID = o.Series
	} else {
		c.Misc.set("series", o.Series)
	}
	// The hash is known when the patches are, or when there are none: a
	// clean tree without a series.
	if hash := korigin.PatchsetHash(o.Patches); hash != "" || c.GitCommitHash != "" && o.Series == "" && o.Changes == "" {
		c.PatchsetHash = &hash
	}
	c.Misc.set("patches", o.Patches)
	c.Misc.set("package", o.Package)
	c.Misc.set("uncommitted_changes_sha256", o.Changes)
	c.Comment = sourceLine(res)
	if res.KernelSHA != "" { // the kernel was made from it
		valid := true
		c.Valid = &valid
	}
	c.ID = origin + ":" + digest(o.Tree, o.Commit, o.Describe, o.Changes, o.Series, korigin.PatchsetHash(o.Patches), o.Package, unknownSource(res))
	return c
}

// unknownSource tells the checkouts of kernels whose source is not known
// apart: by the kernel, or by the run when it never got one.
func unknownSource(res *Result) string {
	o := res.Origin
	switch {
	case o.Tree != "" || o.Commit != "" || o.Package != "":
		return ""
	case res.KernelSHA != "":
		return res.KernelSHA
	}
	return runKey(res)
}

// sourceLine says what the source is, in words.
func sourceLine(res *Result) string {
	o := res.Origin
	var s string
	switch {
	case o.Package != "":
		s = o.Package
	case o.Tree != "":
		s = o.Tree
		if v := o.Describe; v != "" || len(o.Commit) >= 12 {
			if v == "" {
				v = o.Commit[:12]
			}
			s += " at " + v
		}
	default:
		return res.Source // KERNEL=: only its path is known
	}
	if o.Series != "" {
		s += " with the series " + o.Series
	} else if len(o.Patches) > 0 {
		s += fmt.Sprintf(" with %d patches", len(o.Patches))
	}
	if o.Changes != "" {
		s += ", with uncommitted changes"
	}
	return s
}

// kcidbBuildOf is the kernel the run booted. Its id is made of the
// checkout, the arch, the config, the compiler and the image, so that
// runs of one kernel share it.
func kcidbBuildOf(origin, checkoutID string, res *Result) kcidbBuild {
	o := res.Origin
	b := kcidbBuild{CheckoutID: checkoutID, Origin: origin, Comment: res.Source, ConfigName: o.Config, Compiler: o.Compiler, Misc: misc{}}
	if arch := res.Request.Arch.Name; kcidbArch.MatchString(arch) {
		b.Architecture = arch
	} else {
		b.Misc.set("arch", arch) // a run refused for its arch
	}
	if res.KernelSHA != "" {
		b.Status = "PASS" // the kernel was built, or fetched as built
	}
	b.Misc.set("kernel_sha256", res.KernelSHA)
	b.Misc.set("images_lock_entry", res.Entry)
	// The config's name says a sanitized build's fragments; a user's
	// kernel has none, and its lane is said here.
	b.Misc.set("sanitized", res.Sanitized)
	key := res.KernelSHA
	if key == "" {
		key = runKey(res)
	}
	b.ID = origin + ":" + digest(checkoutID, res.Request.Arch.Name, o.Config, o.Compiler, key)
	return b
}

// runKey tells one run from another: its directory and its start.
func runKey(res *Result) string {
	return digest(res.Dir, res.Started.UTC().Format(time.RFC3339Nano))
}

// digest is a short hash of the parts, each ended by a NUL.
func digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p + "\x00"))
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}
