// SPDX-License-Identifier: GPL-2.0-only

package stackmap

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	. "github.com/onsi/gomega"
	"golang.org/x/sys/unix"

	"github.com/ftrace-stackmap/conformance/harness"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	fmtx "github.com/ftrace-stackmap/conformance/internal/stackmapfmt"
)

var _ = describe("the binary export", func() {
	harness.ReqIt("SM-BIN-01", "starts with the profile's magic and version, the record count and a zero, in native byte order", func() {
		tfs := harness.Root()
		record(tfs, workloadRuns)
		h, err := fmtx.CheckHeader(readBinFile(tfs), harness.Profile(), binary.NativeEndian)
		if errors.As(err, new(*fmtx.OtherFormatError)) {
			harness.FailOn(err, harness.Clause("SM-BIN-01.2", ""))
		}
		harness.FailOn(err, harness.Clause("SM-BIN-01.1", ""))
		entries := readStat(tfs).Entries
		Expect(int64(h.NrStacks)).To(Equal(entries), harness.Clause("SM-BIN-01.1", "nr_stacks %d, stack_map_stat entries %d", h.NrStacks, entries))
	})

	harness.ReqIt("SM-BIN-02", "holds exactly nr_stacks records in ascending id order that fill the file, and reports size 0", func() {
		tfs := harness.Root()
		record(tfs, workloadRuns)
		size := statExport(tfs, binNode).Size
		Expect(size).To(BeZero(), harness.Clause("SM-BIN-02.2", "stack_map_bin reports size %d, want 0", size))
		data, err := binData(tfs)
		harness.FailOn(err, harness.Clause("SM-BIN-02.1", ""))
		bin, err := binRecords(data)
		harness.FailOn(err, harness.Clause("SM-BIN-02.1", "")) // count, order, padding and that the records fill the file
		Expect(bin.Records).NotTo(BeEmpty(), harness.Clause("SM-BIN-02.1", "no records after a traced workload"))
	})

	harness.ReqIt("SM-BIN-03", "agrees with stack_map on ids, depths, ref counts and symbols", harness.Case("workload"), func() {
		tfs := harness.Root()
		record(tfs, workloadRuns)
		if harness.Capturing() {
			// Both exports of one map, tracing off: the host decodes the
			// binary again with the kernel tree's own tool, if it has one.
			harness.Capture("stack_map_bin", readBinFile(tfs))
			text, err := tfs.Read(mapNode)
			harness.Prerequisite("SM-TEXT-01", wrap(err, "reading stack_map"))
			harness.Capture("stack_map", []byte(text))
		}
		compareExports(readBlocks(tfs), readBin(tfs))
	})

	harness.ReqIt("SM-BIN-04", "takes its snapshot at open: an open file keeps the old records across a reset", func() {
		tfs := harness.Root()
		record(tfs, workloadRuns)
		statExport(tfs, binNode) // a missing export is SM-NODE-02's
		f, err := os.Open(tfs.Path(binNode))
		if harness.Errno(err) == unix.ENOMEM {
			harness.Unsupported("stack_map_bin open() gave ENOMEM: the snapshot of a map this large does not fit")
		}
		Expect(err).NotTo(HaveOccurred(), harness.Clause("SM-BIN-04.1", "opening stack_map_bin"))
		defer f.Close()
		whole := readBinFile(tfs)
		before := parseBin(whole)
		Expect(before.Records).NotTo(BeEmpty(), harness.Clause("SM-BIN-04.2", "no records to keep"))
		// A second reader has read half of its copy when the reset comes.
		half, err := os.Open(tfs.Path(binNode))
		Expect(err).NotTo(HaveOccurred(), harness.Clause("SM-BIN-04.1", "opening stack_map_bin"))
		defer half.Close()
		head := make([]byte, len(whole)/2)
		_, err = io.ReadFull(half, head)
		Expect(err).NotTo(HaveOccurred(), harness.Clause("SM-BIN-04.1", "reading the first %d bytes of stack_map_bin", len(head)))
		resetAsSetup(tfs, "0")
		if st := readStat(tfs); st.Entries != 0 {
			harness.Prerequisite("SM-RESET-04", fmt.Errorf("stack_map_stat shows entries %d after a reset", st.Entries))
		}
		data, err := io.ReadAll(f)
		Expect(err).NotTo(HaveOccurred(), harness.Clause("SM-BIN-04.1", "reading the file opened before the reset"))
		old := parseBin(data)
		Expect(old.Records).To(HaveLen(len(before.Records)), harness.Clause("SM-BIN-04.1", "a file opened before the reset lost records"))
		rest, err := io.ReadAll(half)
		Expect(err).NotTo(HaveOccurred(), harness.Clause("SM-BIN-04.1", "reading the rest of a file read in part before the reset"))
		Expect(bytes.Equal(append(head, rest...), whole)).To(BeTrue(), harness.Clause("SM-BIN-04.1",
			"a file read in part (%d bytes) before a reset and to its end after it gave %d bytes in all, its copy at open %d", len(head), len(head)+len(rest), len(whole)))
		Expect(readBin(tfs).Records).To(BeEmpty(), harness.Clause("SM-BIN-04.2", "a file opened after the reset still has records"))
	})
})

// compareExports is SM-BIN-03's check: the binary's records match the
// text's blocks one for one, and each address lies in its frame's symbol.
func compareExports(blocks []fmtx.Block, bin fmtx.Bin) {
	// The records' ids, depths and ref counts, as every checkpoint holds them.
	harness.FailOn(agree(bin, blocks), harness.Clause("SM-BIN-03.1", "stack_map_bin against stack_map"))
	syms := harness.LoadKallsyms()
	if syms == nil {
		harness.Note("symbols not compared: /proc/kallsyms shows no addresses (kptr_restrict?); ids, depths, ref counts and raw addresses were")
	}
	for i, r := range bin.Records {
		b := blocks[i]
		for f, addr := range r.Addrs {
			Expect(frameMatches(b.Frames[f], addr, syms)).To(Succeed(), harness.Clause("SM-BIN-03.2", "stack %d frame [%d]", b.ID, f))
		}
	}
}

// frameMatches checks a text frame against the binary's address for it.
// A frame is the trampoline marker, a bare address, or a symbol as the
// kernel prints one for an address ("sym", "sym+0x10", "sym+0x10/0x40",
// with or without " [mod]"): the symbol is judged by its address range,
// the address or the address less one lying within a symbol of that name
// (any alias), and an offset, when printed, must be the address's.
func frameMatches(text string, addr uint64, syms *harness.Kallsyms) error {
	text, _, _ = strings.Cut(text, " [") // drop a module name
	switch {
	case text == "[FTRACE TRAMPOLINE]":
		if harness.Profile() == contract.ProfileV4 && addr != fmtx.TrampolineMarker {
			return fmt.Errorf("text says [FTRACE TRAMPOLINE], binary has %#x, want the marker %#x", addr, fmtx.TrampolineMarker)
		}
		return nil
	case strings.HasPrefix(text, "0x"):
		if v, err := strconv.ParseUint(text[2:], 16, 64); err != nil || v != addr {
			return fmt.Errorf("text has raw address %s, binary %#x", text, addr)
		}
		return nil
	}
	if syms == nil {
		return nil
	}
	name, rest, hasOffset := strings.Cut(text, "+")
	var off uint64
	if hasOffset {
		offText, _, _ := strings.Cut(rest, "/")
		var err error
		if off, err = strconv.ParseUint(strings.TrimPrefix(offText, "0x"), 16, 64); err != nil {
			return fmt.Errorf("text frame %q: the offset after + is not a number", text)
		}
	}
	// A return address may be printed against the symbol before it (%pB
	// looks up addr-1), so both readings are accepted.
	for _, probe := range []uint64{addr, addr - 1} {
		base, names := syms.Lookup(probe)
		if slices.Contains(names, name) && (!hasOffset || addr-base == off) {
			return nil
		}
	}
	base, names := syms.Lookup(addr)
	return fmt.Errorf("text says %s, binary %#x is %v+%#x", text, addr, names, addr-base)
}
