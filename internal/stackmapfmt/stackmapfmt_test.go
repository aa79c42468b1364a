// SPDX-License-Identifier: GPL-2.0-only

package stackmapfmt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/contract"
)

const goodText = `stack_id 3 [ref 2, depth 2]
  [0] __ftrace_trace_stack+0x6c/0x1a0
  [1] do_sys_openat2+0x8c/0xe0 [some_mod]

stack_id 17 [ref 1, depth 1]
  [0] [FTRACE TRAMPOLINE]

`

func TestParseTextGood(t *testing.T) {
	blocks, err := ParseText(goodText)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 || blocks[0].ID != 3 || blocks[0].Ref != 2 || blocks[1].Frames[0] != "[FTRACE TRAMPOLINE]" ||
		blocks[0].Frames[1] != "do_sys_openat2+0x8c/0xe0 [some_mod]" {
		t.Fatalf("ParseText() = %+v", blocks)
	}
	if err := errors.Join(CheckOrder(blocks), CheckUnique(blocks)); err != nil {
		t.Fatalf("CheckOrder/CheckUnique = %v", err)
	}
	if b, err := ParseText(""); b != nil || err != nil {
		t.Fatalf("ParseText(empty) = %v, %v; want an empty map", b, err)
	}
}

func TestParseTextBad(t *testing.T) {
	for name, tc := range map[string]struct{ text, want string }{
		"a frame line missing":   {strings.Replace(goodText, "  [1] do_sys_openat2+0x8c/0xe0 [some_mod]\n", "", 1), `"" is not frame [1]`},
		"frame index skipped":    {strings.Replace(goodText, "  [1]", "  [2]", 1), "frame index [2], want [1]"},
		"no blank line":          {strings.Replace(goodText, "[some_mod]\n\n", "[some_mod]\n", 1), "want a blank line"},
		"depth 0":                {"stack_id 1 [ref 1, depth 0]\n\n", "out of range"},
		"depth 65":               {"stack_id 1 [ref 1, depth 65]\n", "out of range"},
		"ref 0":                  {"stack_id 1 [ref 0, depth 1]\n  [0] x\n\n", "out of range"},
		"bad header":             {"stack_id 1 [refs 1, depth 1]\n  [0] x\n\n", "not a block header"},
		"one-space frame indent": {"stack_id 1 [ref 1, depth 1]\n [0] x\n\n", "is not frame [0]"},
		"cut short":              {"stack_id 1 [ref 1, depth 2]\n  [0] x\n", "file ends after 1 of 2 frames"},
		"no final blank line":    {strings.TrimSuffix(goodText, "\n"), "want a blank line after the 1 frames of block 17, got end of file"},
		"no final newline":       {strings.TrimSuffix(goodText, "\n\n"), "newline"},
	} {
		if _, err := ParseText(tc.text); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: ParseText() = %v, want error containing %q", name, err, tc.want)
		}
	}
	swapped, _ := ParseText("stack_id 9 [ref 1, depth 1]\n  [0] a\n\nstack_id 4 [ref 1, depth 1]\n  [0] b\n\nstack_id 4 [ref 1, depth 1]\n  [0] c\n\n")
	var order *OrderError
	if err := CheckOrder(swapped); !errors.As(err, &order) || *order != (OrderError{Line: 4, ID: 4, Prev: 9}) ||
		err.Error() != "stack_map line 4: id 4 after id 9: blocks not in ascending id order" {
		t.Errorf("CheckOrder() = %v, want an *OrderError at line 4", err)
	}
	var dup *DuplicateError
	if err := CheckUnique(swapped); !errors.As(err, &dup) || *dup != (DuplicateError{ID: 4, First: 4, Line: 7}) ||
		err.Error() != "stack_map lines 4 and 7: id 4 heads two blocks" {
		t.Errorf("CheckUnique() = %v, want a *DuplicateError for id 4", err)
	}
}

func TestParseStat(t *testing.T) {
	st, err := ParseStat("entries: 5 / 16384\ntable_size: 32768\nsuccesses: 9\ndrops: 1\nsuccess_rate: 90%\n")
	if err != nil {
		t.Fatal(err)
	}
	if st.Entries != 5 || st.Capacity != 16384 || st.TableSize != 32768 || st.SuccessRate != 90 || !st.HasSuccessRate {
		t.Fatalf("ParseStat() = %+v", st)
	}
	if err := errors.Join(st.CheckRate(), st.CheckCapacity()); err != nil {
		t.Fatalf("checks of a good stat = %v", err)
	}
	for name, tc := range map[string]struct{ text, want string }{
		"misspelled key":  {"entry: 0 / 1024\ntable_size: 2048\nsuccesses: 0\ndrops: 0\n", "is not one of"},
		"colon spacing":   {"entries : 0 / 1024\ntable_size: 2048\nsuccesses: 0\ndrops: 0\n", "is not one of"},
		"missing drops":   {"entries: 0 / 1024\ntable_size: 2048\nsuccesses: 0\n", "no drops line"},
		"repeated key":    {"entries: 0 / 1024\nentries: 0 / 1024\n", "repeated"},
		"rate without %":  {"entries: 0 / 1024\ntable_size: 2048\nsuccesses: 1\ndrops: 0\nsuccess_rate: 100\n", "is not one of"},
		"negative":        {"entries: -1 / 1024\ntable_size: 2048\nsuccesses: 0\ndrops: 0\n", "non-negative"},
		"hex value":       {"entries: 0 / 0x400\ntable_size: 2048\nsuccesses: 0\ndrops: 0\n", "non-negative decimal"},
		"no last newline": {"entries: 0 / 1024\ntable_size: 2048\nsuccesses: 0\ndrops: 0", "newline"},
	} {
		if _, err := ParseStat(tc.text); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: ParseStat() = %v, want error containing %q", name, err, tc.want)
		}
	}
	for _, tc := range []struct {
		st   Stat
		want string
	}{
		{Stat{HasSuccessRate: true}, "present with successes 0"},
		{Stat{Successes: 1}, "no success_rate"},
		{Stat{Successes: 2, Drops: 1, SuccessRate: 67, HasSuccessRate: true}, "want 66%"},
	} {
		var rate *RateError
		if err := tc.st.CheckRate(); !errors.As(err, &rate) || rate.Stat != tc.st || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckRate(%+v) = %v, want a *RateError saying %q", tc.st, err, tc.want)
		}
	}
	for _, tc := range []struct {
		st   Stat
		want string
	}{
		{Stat{Capacity: 3000, TableSize: 6000}, "not a power of two"},
		{Stat{Capacity: 1 << 19, TableSize: 1 << 20}, "not a power of two between"},
		{Stat{Capacity: 1024, TableSize: 1024}, "want 2 x 1024"},
		{Stat{Capacity: 1024, TableSize: 2048, Entries: 1025}, "exceed"},
	} {
		var capacity *CapacityError
		if err := tc.st.CheckCapacity(); !errors.As(err, &capacity) || capacity.Stat != tc.st || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckCapacity(%+v) = %v, want a *CapacityError saying %q", tc.st, err, tc.want)
		}
	}
	// One check per clause: each finds its own problem and no other's.
	bad := Stat{Entries: 1025, Capacity: 1024, TableSize: 1024, Successes: 2, Drops: 1, SuccessRate: 67, HasSuccessRate: true}
	for name, tc := range map[string]struct {
		err  error
		want string
	}{
		"CheckRateShown": {bad.CheckRateShown(), ""},
		"CheckRateValue": {bad.CheckRateValue(), "want 66%"},
		"CheckBounds":    {bad.CheckBounds(), ""},
		"CheckTableSize": {bad.CheckTableSize(), "want 2 x 1024"},
		"CheckEntries":   {bad.CheckEntries(), "exceed"},
	} {
		if got := fmt.Sprint(tc.err); tc.want == "" && tc.err != nil || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s(%+v) = %v, want %q", name, bad, tc.err, tc.want)
		}
	}
	if err := (Stat{Successes: 1}).CheckRateValue(); err != nil {
		t.Errorf("CheckRateValue() of a stat without success_rate = %v, want nil: its absence is CheckRateShown's", err)
	}
	if n := RefSum([]Block{{Ref: 2}, {Ref: 3}}); n != 5 {
		t.Errorf("RefSum() = %d, want 5", n)
	}
}

// binFile builds a stack_map_bin image.
func binFile(order binary.AppendByteOrder, magic, version uint32, recs ...Record) []byte {
	b := order.AppendUint32(nil, magic)
	b = order.AppendUint32(b, version)
	b = order.AppendUint32(b, uint32(len(recs)))
	b = order.AppendUint32(b, 0)
	for _, r := range recs {
		b = order.AppendUint32(b, r.ID)
		b = order.AppendUint32(b, uint32(len(r.Addrs)))
		b = order.AppendUint32(b, r.Ref)
		b = order.AppendUint32(b, r.Reserved)
		for _, a := range r.Addrs {
			b = order.AppendUint64(b, a)
		}
	}
	return b
}

func TestParseBin(t *testing.T) {
	le := binary.LittleEndian
	recs := []Record{{ID: 3, Ref: 2, Addrs: []uint64{0xffff800080001000, TrampolineMarker}}, {ID: 17, Ref: 1, Addrs: []uint64{0xffff800080002000}}}
	good := binFile(le, MagicV4, VersionV4, recs...)
	bin, err := ParseBin(good, le)
	if err != nil {
		t.Fatal(err)
	}
	if len(bin.Records) != 2 || bin.Records[0].Nr != 2 || bin.Records[1].ID != 17 || bin.Records[0].Addrs[1] != TrampolineMarker {
		t.Fatalf("ParseBin() = %+v", bin)
	}
	// Records are read whatever the magic and version: the header is
	// CheckHeader's question.
	for name, data := range map[string][]byte{
		"v3 header":     binFile(le, MagicV3, VersionV3, recs...),
		"unknown magic": binFile(le, 0x12345678, 1, recs...),
		"wrong version": binFile(le, MagicV4, 7, recs...),
	} {
		if b, err := ParseBin(data, le); err != nil || len(b.Records) != 2 {
			t.Errorf("ParseBin(%s) = %d records, %v; want 2, nil", name, len(b.Records), err)
		}
	}
	if b, err := ParseBin(binFile(le, MagicV4, VersionV4), le); err != nil || len(b.Records) != 0 {
		t.Fatalf("ParseBin(empty map) = %+v, %v", b, err)
	}
	var he *HeaderError
	for name, data := range map[string][]byte{
		"byte-swapped v4": binFile(binary.BigEndian, MagicV4, VersionV4, recs...),
		"byte-swapped v3": binFile(binary.BigEndian, MagicV3, VersionV3, recs...),
		"short header":    good[:10],
	} {
		if _, err := ParseBin(data, le); !errors.As(err, &he) {
			t.Errorf("ParseBin(%s) = %v, want a *HeaderError", name, err)
		}
	}
	for name, tc := range map[string]struct {
		data []byte
		want string
	}{
		"truncated record":    {good[:len(good)-3], "address bytes left"},
		"cut in a head":       {good[:16+32+8], "into its 16-byte head"},
		"cut between records": {good[:16+32], "ends at a record boundary after 1 of 2"},
		"trailing bytes":      {append(append([]byte{}, good...), 0, 0, 0, 0), "bytes after the 2 records"},
		"ids not ascending":   {binFile(le, MagicV4, VersionV4, recs[1], recs[0]), "want ascending"},
		"record reserved":     {binFile(le, MagicV4, VersionV4, Record{ID: 1, Ref: 1, Reserved: 7, Addrs: []uint64{1}}), "reserved field 7"},
		"nr 0":                {binFile(le, MagicV4, VersionV4, Record{ID: 1, Ref: 1}), "nr 0"},
	} {
		_, err := ParseBin(tc.data, le)
		if err == nil || !strings.Contains(err.Error(), tc.want) || errors.As(err, &he) {
			t.Errorf("%s: ParseBin() = %v, want a record error containing %q", name, err, tc.want)
		}
	}
}

func TestCheckHeader(t *testing.T) {
	le := binary.LittleEndian
	rec := Record{ID: 3, Ref: 2, Addrs: []uint64{1}}
	if _, err := CheckHeader(binFile(le, MagicV4, VersionV4, rec), "v4", le); err != nil {
		t.Fatalf("CheckHeader(v4 file, v4) = %v", err)
	}
	if _, err := CheckHeader(binFile(le, MagicV3, VersionV3, rec), "v3", le); err != nil {
		t.Fatalf("CheckHeader(v3 file, v3) = %v", err)
	}
	// The header alone: a file cut in its records still has a good header.
	good := binFile(le, MagicV4, VersionV4, rec)
	if _, err := CheckHeader(good[:len(good)-4], "v4", le); err != nil {
		t.Fatalf("CheckHeader(truncated records) = %v", err)
	}
	for name, tc := range map[string]struct {
		data    []byte
		profile contract.Profile
		want    string
	}{
		"byte-swapped header": {binFile(binary.BigEndian, MagicV4, VersionV4, rec), "v4", "byte-swapped"},
		"v3 under v4":         {binFile(le, MagicV3, VersionV3, rec), "v4", "v3 format"},
		"v4 under v3":         {binFile(le, MagicV4, VersionV4, rec), "v3", "v4 format"},
		"wrong magic":         {binFile(le, 0x12345678, 1), "v4", "magic 0x12345678"},
		"wrong version":       {binFile(le, MagicV4, 2, rec), "v4", "version 2, want 1"},
		"short header":        {good[:10], "v4", "shorter than the 16-byte header"},
	} {
		_, err := CheckHeader(tc.data, tc.profile, le)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: CheckHeader() = %v, want error containing %q", name, err, tc.want)
		}
		// Another format's header is SM-BIN-01.2's, any other problem SM-BIN-01.1's.
		other := strings.Contains(name, " under ") || strings.HasPrefix(name, "byte-swapped")
		if errors.As(err, new(*OtherFormatError)) != other {
			t.Errorf("%s: CheckHeader() = %T, an *OtherFormatError: %v", name, err, other)
		}
	}
}

func TestParseTrace(t *testing.T) {
	text := `# tracer: nop
#
      suites.test-95      [000] .....    12.000001: sched_process_exec: filename=/proc/self/exe pid=95 old_pid=95
      suites.test-95      [000] .....    12.000002: <stack_id 4711>
      suites.test-96      [000] .....    12.000003: <stack trace>
 => __ftrace_trace_stack+0x6c/0x1a0
 => bprm_execve+0x1c/0x30
      suites.test-97      [000] .....    12.000004: <stack_id 12>
`
	ts := ParseTrace(text)
	if len(ts.IDs) != 2 || ts.IDs[0] != 4711 || ts.IDs[1] != 12 || ts.FullStacks != 1 || ts.Deepest() != 2 {
		t.Fatalf("ParseTrace() = %+v", ts)
	}
	if n := Events(text); n != 4 {
		t.Fatalf("Events() = %d, want 4", n)
	}
	if n := Events("# tracer: nop\n#\n"); n != 0 {
		t.Fatalf("Events(empty trace) = %d", n)
	}
}

func FuzzParseText(f *testing.F) {
	f.Add(goodText)
	f.Add("stack_id 1 [ref 1, depth 1]\n  [0] x\n\n")
	f.Fuzz(func(t *testing.T, s string) {
		blocks, err := ParseText(s)
		if err == nil {
			for _, b := range blocks {
				if len(b.Frames) != b.Depth || b.Depth < 1 || b.Depth > MaxDepth || b.Ref < 1 {
					t.Fatalf("ParseText accepted an inconsistent block %+v", b)
				}
			}
			CheckOrder(blocks)
			CheckUnique(blocks)
		}
	})
}

func FuzzParseStat(f *testing.F) {
	f.Add("entries: 5 / 16384\ntable_size: 32768\nsuccesses: 9\ndrops: 1\nsuccess_rate: 90%\n")
	f.Fuzz(func(t *testing.T, s string) {
		if st, err := ParseStat(s); err == nil {
			st.CheckRate()
			st.CheckCapacity()
		}
	})
}

func FuzzParseBin(f *testing.F) {
	le := binary.LittleEndian
	f.Add(binFile(le, MagicV4, VersionV4, Record{ID: 3, Ref: 2, Addrs: []uint64{1, 2}}))
	f.Add(binFile(le, MagicV3, VersionV3, Record{ID: 3, Ref: 2, Addrs: []uint64{1}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		CheckHeader(data, "v4", le)
		bin, err := ParseBin(data, le)
		if err == nil && len(bin.Records) != int(bin.Header.NrStacks) {
			t.Fatalf("ParseBin accepted %d records for a header of %d", len(bin.Records), bin.Header.NrStacks)
		}
	})
}

func FuzzParseTrace(f *testing.F) {
	f.Add("x-1 [000] ..... 1.0: <stack_id 12>\n")
	f.Fuzz(func(t *testing.T, s string) {
		for _, id := range ParseTrace(s).IDs {
			if id < -1 {
				t.Fatalf("ParseTrace produced id %d", id)
			}
		}
		Events(s)
	})
}

// A rate separates rounding down from rounding to nearest when its
// fraction is at least one half.
func TestRateSeparates(t *testing.T) {
	for _, c := range []struct {
		s, d int64
		want bool
	}{{12828, 122, false}, {199, 1, true}, {1, 1, false}, {2, 1, true}, {1, 2, false}, {0, 0, false}, {0, 5, false}} {
		st := Stat{Successes: c.s, Drops: c.d}
		if got := st.RateSeparates(); got != c.want {
			t.Errorf("S=%d D=%d: %v, want %v", c.s, c.d, got, c.want)
		}
	}
}
