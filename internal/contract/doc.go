// SPDX-License-Identifier: GPL-2.0-only

// Package contract is the one vocabulary the guest's suite, the host's
// runner and live mode share: the result classes, the requirement table of
// CONTRACT.md, the names of report entries, profiles and labels. It is a
// leaf: it imports neither Ginkgo's DSL nor the harness, so the host
// command links neither.
package contract
