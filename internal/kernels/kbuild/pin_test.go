// SPDX-License-Identifier: GPL-2.0-only

package kbuild

import (
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/kernels/images"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kchoice"
)

// TestKernelDirIsWhatImagesLockPins hashes kernel/ as `make kernel PIN=1`
// does, without a build, and holds it to images.lock: a patch or a config
// fragment changed without a new pin would leave "kernels pinned by hash"
// untrue for the default kernel.
func TestKernelDirIsWhatImagesLockPins(t *testing.T) {
	l, err := images.Read("../../../images.lock")
	if err != nil {
		t.Fatal(err)
	}
	pinned := 0
	for _, e := range l.Entries {
		if e.Kind != images.KindBuild {
			continue
		}
		for arch, pin := range e.Arches {
			files, err := KernelFiles("../../../kernel", arch, kchoice.Plain)
			if err != nil {
				t.Fatal(err)
			}
			if got := FilesSHA256(files); got != pin.KernelSHA256 {
				t.Errorf("kernel/ is not what images.lock pins for %s/%s (kernel_sha256 %s, pinned %s): `make kernel ARCH=%s PIN=1` builds it and pins it",
					e.Name, arch, got, pin.KernelSHA256, arch)
			}
			pinned++
		}
	}
	if pinned == 0 {
		t.Fatal("images.lock pins no kernel built from kernel/")
	}
}
