// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"testing"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kchoice"
	"github.com/ftrace-stackmap/conformance/internal/labels"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

func TestReproduce(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Request
		want string
	}{
		{"lock's default named", Request{Arch: arch.MustLookup("arm64"), Profile: "v4"},
			"make qemu-test ARCH=arm64 IMAGE=reference PROFILE=v4"},
		{"image", Request{Arch: arch.MustLookup("x86_64"), Choice: kchoice.Choice{Image: "debian-6.12"}, Profile: "v3", Timeout: 5 * time.Minute},
			"make qemu-test ARCH=x86_64 IMAGE=debian-6.12 PROFILE=v3"},
		{"kernel path with a space, labels, timeout", Request{Arch: arch.MustLookup("x86_64"), Choice: kchoice.Choice{Kernel: "/tmp/my kernel/bzImage"}, Profile: "v4", Labels: labels.MustParse("stress"), Timeout: 10 * time.Minute},
			"make qemu-test ARCH=x86_64 KERNEL='/tmp/my kernel/bzImage' PROFILE=v4 LABELS=stress TIMEOUT=10m0s"},
		{"boot arguments need smct", Request{Arch: arch.MustLookup("arm64"), Choice: kchoice.Choice{Image: "debian-6.1"}, Profile: "v4", Labels: labels.MustParse("baseline"), BootArgs: []string{"nokaslr", "loglevel=7"}},
			"go run ./cmd/smct qemu-test -arch arm64 -image debian-6.1 -profile v4 -labels baseline -append 'nokaslr loglevel=7'"},
		{"seed and a forced requirement", Request{Arch: arch.MustLookup("arm64"), Choice: kchoice.Choice{Image: "debian-6.12"}, Profile: "v4", Seed: 77, Require: report.RequireStackmap},
			"make qemu-test ARCH=arm64 IMAGE=debian-6.12 PROFILE=v4 SEED=77 REQUIRE=stackmap"},
		{"sanitized tree", Request{Arch: arch.MustLookup("x86_64"), Choice: kchoice.Choice{Tree: "/src/linux", Lane: kchoice.Sanitized}, Profile: "v4"},
			"make qemu-test ARCH=x86_64 TREE=/src/linux SANITIZE=1 PROFILE=v4"},
		{"sanitized, with boot arguments", Request{Arch: arch.MustLookup("arm64"), Choice: kchoice.Choice{Lane: kchoice.Sanitized}, Profile: "v4", BootArgs: []string{"nokaslr"}},
			"go run ./cmd/smct qemu-test -arch arm64 -image reference -sanitize 1 -profile v4 -append nokaslr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Reproduce(withRequest(result(), tc.o)); got != tc.want {
				t.Errorf("Reproduce() = %q, want %q", got, tc.want)
			}
		})
	}
}
