// SPDX-License-Identifier: GPL-2.0-only

package stackmapfmt

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/ftrace-stackmap/conformance/internal/contract"
)

// ErrEndsAtRecordBoundary marks a file that holds fewer records than its
// header announces but ends cleanly between two records.
var ErrEndsAtRecordBoundary = errors.New("ends at a record boundary")

// Magic numbers and versions of stack_map_bin by profile.
const (
	MagicV4   = 0x46534D42 // "FSMB"
	VersionV4 = 1
	MagicV3   = 0x464D5342
	VersionV3 = 2

	headerSize = 16
	recordHead = 16
)

// TrampolineMarker stands for an ftrace trampoline frame in v4's binary export.
const TrampolineMarker = 0x7fffffff

// Header is stack_map_bin's first 16 bytes.
type Header struct {
	Magic, Version, NrStacks, Reserved uint32
}

// Record is one stack of stack_map_bin.
type Record struct {
	ID, Nr, Ref, Reserved uint32
	Addrs                 []uint64
	Offset                int // byte offset of the record, for messages
}

// Bin is a parsed stack_map_bin.
type Bin struct {
	Header  Header
	Records []Record
}

// HeaderError is a stack_map_bin header that cannot be trusted: shorter
// than 16 bytes, or in the other byte order. Its records cannot be read.
type HeaderError struct{ Reason string }

func (e *HeaderError) Error() string { return "stack_map_bin header: " + e.Reason }

// OtherFormatError is a header of a known format that is not the
// profile's: its own magic byte-swapped, or the other profile's
// (SM-BIN-01.2).
type OtherFormatError struct{ Reason string }

func (e *OtherFormatError) Error() string { return "stack_map_bin: " + e.Reason }

// readHeader takes the first 16 bytes in the given byte order.
func readHeader(data []byte, order binary.ByteOrder) (Header, error) {
	if len(data) < headerSize {
		return Header{}, &HeaderError{fmt.Sprintf("%d bytes, shorter than the 16-byte header", len(data))}
	}
	return Header{order.Uint32(data), order.Uint32(data[4:]), order.Uint32(data[8:]), order.Uint32(data[12:])}, nil
}

// CheckHeader checks the header against a profile in the
// kernel's byte order: magic, version and the reserved field. A magic that
// matches only when byte-swapped, or that belongs to the other profile, is
// an *OtherFormatError that says so. This is the whole of SM-BIN-01's
// layout.
func CheckHeader(data []byte, profile contract.Profile, order binary.ByteOrder) (Header, error) {
	h, err := readHeader(data, order)
	if err != nil {
		return h, err
	}
	wantMagic, wantVersion, other, otherName := uint32(MagicV4), uint32(VersionV4), uint32(MagicV3), contract.ProfileV3
	if profile == contract.ProfileV3 {
		wantMagic, wantVersion, other, otherName = MagicV3, VersionV3, MagicV4, contract.ProfileV4
	}
	switch {
	case h.Magic == wantMagic:
	case h.Magic == swap32(wantMagic):
		return h, &OtherFormatError{fmt.Sprintf("magic %#08x is %#08x byte-swapped: header not in the kernel's byte order", h.Magic, wantMagic)}
	case h.Magic == other || h.Magic == swap32(other):
		return h, &OtherFormatError{fmt.Sprintf("magic %#08x is the %s format's (version %d), want %#08x for %s", h.Magic, otherName, h.Version, wantMagic, profile)}
	default:
		return h, fmt.Errorf("stack_map_bin: magic %#08x, want %#08x", h.Magic, wantMagic)
	}
	if h.Version != wantVersion {
		return h, fmt.Errorf("stack_map_bin: version %d, want %d for %s", h.Version, wantVersion, profile)
	}
	if h.Reserved != 0 {
		return h, fmt.Errorf("stack_map_bin: header reserved field %d, want 0", h.Reserved)
	}
	return h, nil
}

// ParseBin reads stack_map_bin's records, whatever the header's magic and
// version say: the record layout is the same in every profile, and whether
// the header is right is CheckHeader's question. Only a header in the other
// byte order (a known magic byte-swapped) stops it, with a *HeaderError,
// since its record count cannot be trusted then.
func ParseBin(data []byte, order binary.ByteOrder) (Bin, error) {
	var bin Bin
	h, err := readHeader(data, order)
	if err != nil {
		return bin, err
	}
	bin.Header = h
	if h.Magic == swap32(MagicV4) || h.Magic == swap32(MagicV3) {
		return bin, &HeaderError{fmt.Sprintf("magic %#08x is a known magic byte-swapped: the header is not in the kernel's byte order, so its record count cannot be used", h.Magic)}
	}
	off := headerSize
	for i := uint32(0); i < h.NrStacks; i++ {
		if len(data) == off {
			return bin, fmt.Errorf("stack_map_bin: %w after %d of %d records", ErrEndsAtRecordBoundary, i, h.NrStacks)
		}
		if len(data)-off < recordHead {
			return bin, fmt.Errorf("stack_map_bin: record %d at byte %d: file ends %d bytes into its 16-byte head (header says %d records)", i, off, len(data)-off, h.NrStacks)
		}
		r := Record{ID: order.Uint32(data[off:]), Nr: order.Uint32(data[off+4:]), Ref: order.Uint32(data[off+8:]), Reserved: order.Uint32(data[off+12:]), Offset: off}
		if r.Reserved != 0 {
			return bin, fmt.Errorf("stack_map_bin: record %d at byte %d: reserved field %d, want 0", i, off, r.Reserved)
		}
		if r.Nr < 1 || r.Nr > MaxDepth {
			return bin, fmt.Errorf("stack_map_bin: record %d at byte %d: nr %d, want 1..%d", i, off, r.Nr, MaxDepth)
		}
		off += recordHead
		if need := int(r.Nr) * 8; len(data)-off < need {
			return bin, fmt.Errorf("stack_map_bin: record %d (id %d) at byte %d: %d address bytes left, want %d", i, r.ID, r.Offset, len(data)-off, need)
		}
		for j := uint32(0); j < r.Nr; j++ {
			r.Addrs = append(r.Addrs, order.Uint64(data[off:]))
			off += 8
		}
		if n := len(bin.Records); n > 0 && r.ID <= bin.Records[n-1].ID {
			return bin, fmt.Errorf("stack_map_bin: record %d at byte %d: id %d after id %d, want ascending ids", i, r.Offset, r.ID, bin.Records[n-1].ID)
		}
		bin.Records = append(bin.Records, r)
	}
	if off != len(data) {
		return bin, fmt.Errorf("stack_map_bin: %d bytes after the %d records the header announces", len(data)-off, h.NrStacks)
	}
	return bin, nil
}

func swap32(v uint32) uint32 {
	return v>>24 | (v>>8)&0xff00 | (v<<8)&0xff0000 | v<<24
}
