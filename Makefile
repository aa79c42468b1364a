# SPDX-License-Identifier: GPL-2.0-only
# ftrace stackmap conformance suite.
#
#   make qemu-test ARCH=arm64|x86_64 [KERNEL=path | TREE=kernel-source | IMAGE=lock-entry] [PROFILE=v4|v3] [LABELS=filter]
#                  [TIMEOUT=5m] [BOOT_QUIET=90s]  the console's longest silence before the init (default: scaled
#                                 to KVM or TCG and to a debug kernel; on the summary's machine line);
#                                 the default TIMEOUT is x4 for a debug kernel
#                  [FTRACETEST=tree/tools/testing/selftests/ftrace] [FTRACETEST_MATCH=stackmap]
#                  [REQUIRE=stackmap|none] [SEED=n] [EXIT_CODES=smct|kselftest]
#                  [CLAIMS=1]     also measure what the series claims (claims.txt; never changes the verdict)
#                  [APPEND=words] more kernel command line words (a fault switch: ftrace_stackmap.faults=name)
#                  [SANITIZE=1]   the kernel built sanitized: the tree's kernel/configs/debug.config
#                                 (KASAN, lockdep, UBSAN, kmemleak) and kernel/config/sanitize.config on
#                                 top, cached apart; a KERNEL= must have KASAN on. Every target that
#                                 builds or resolves a kernel takes it (kernel, claims, mutants, stress,
#                                 matrix, bench, review, lava-job)
#   make claims ARCH=... [KERNEL=|TREE=|IMAGE=]   what the series claims, measured: claims.txt
#   make kernel ARCH=... [PIN=1]   build the reference kernel (cached)
#   make mutants ARCH=...          every fault switch of the reference kernel must be caught
#   make stress ARCH=...           the hot path under load
#   make torture ARCH=... [DURATION=10m] [SANITIZE=1] [KERNEL=...] [APPEND=...]   the operating model for DURATION:
#                      stackmap on from boot, actors on every CPU, the invariants and kmemleak every round
#   make matrix [IMAGES=a,b]       every images.lock entry on both arches, two boots at a time
#   make bench [IMAGE=entry] [REPS=3] [IMAGES=a,b] [WALK_SERIES=s WALK_TREE=dir]
#                      time to verdict against a bare boot; a series walk against full runs
#   make review SERIES=mbox|msgid|base..head TREE=dir [BASE=rev] [ARCHES=a,b] [AGAINST=...]
#                      [CLAIMS=1]  walk a series patch by patch: build, boot and test every prefix;
#                      CLAIMS=1 measures the whole series' claims, side by side with AGAINST='s
#   make lava-job ARCH=... [KERNEL=|TREE=|IMAGE=] [PROFILE=] [LABELS=] [URL=] [NOTIFY=] [SERVER=url [TOKEN=]]
#                      a LAVA job of the run (results/<run>/lava/job.yaml) and a device for lava-run here;
#                      SERVER= submits it there, follows it and judges its log, as qemu-test would
#   make lab | make lab-stop   a LAVA server with two qemu devices on this machine (root; lava/lab.sh)
#   make lava-results LOG=<lava-run's stderr or a LAVA server's job log>...
#                      LAVA's log of a job judged as a run here: same reports, verdict and exit status
#   make matrix LAVA=1 [LAVA_URL=] [NOTIFY=]  the matrix's LAVA jobs instead of its runs
#   make test          imports checked, unit tests and end-to-end boots of both arches
#   make fuzz [FUZZTIME=2m]  the console's and LAVA log's readers under Go's fuzzer
#   make fmt           group every file's imports as the check wants them
#   make cache         each cache area's size, cap and entries, and results/'s runs
#   make clean-cache   remove the cache's entries nobody is using (the LAVA lab's state stays)
#
# Every command that builds, fetches or runs prunes when it ends: each cache
# area it used to its cap, least recently used first (CACHE_LIMIT=AREA=SIZE,...
# sets caps, e.g. kernels=2G,kbuild=0; 0 no limit), and results/ to its newest
# runs (KEEP_RUNS=50).
#
# Exit status of qemu-test: 0 no spec failed, 1 a spec failed, 2 no verdict;
# with EXIT_CODES=kselftest 0 pass, 1 fail, 4 all skipped, 5 no verdict.

ARCH    ?= arm64
KERNEL  ?=
TREE    ?=
IMAGE   ?=
PROFILE ?= v4
LABELS  ?=
TIMEOUT ?= 5m
BOOT_QUIET ?=
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
ACCEL   ?=
CPU     ?=
MEM     ?=
QEMU_OPTS ?=
KEEP    ?=
LANES   ?=
REPORTS ?=
FTRACETEST ?=
FTRACETEST_MATCH ?= stackmap
REQUIRE ?=
SEED    ?=
EXIT_CODES ?= smct
# Go lives in /usr/local/go on a fresh machine, maybe not on PATH.
GO      ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)

# SHELL=1 asks for a shell in the guest; make's own SHELL stays /bin/sh.
ifeq ($(origin SHELL),command line)
GUEST_SHELL := $(SHELL)
override SHELL := /bin/sh
endif

PIN     ?=
SERIES  ?=
AGAINST ?=
BASE    ?=
ARCHES  ?= arm64,x86_64
IMAGES  ?=
REPS    ?= 3
WALK_SERIES ?=
WALK_TREE   ?=
URL     ?=
NOTIFY  ?=
SERVER  ?=
TOKEN   ?=
LOG     ?=
LAVA    ?=
LAVA_URL ?=
CLAIMS  ?=
SANITIZE ?=
APPEND  ?=
FAULTS ?=
DURATION ?= 10m

.PHONY: go-check imports-check fmt qemu-test claims kernel mutants stress torture matrix bench review reply lava-job lava-results lab lab-stop test unit-test fuzz smct clean cache clean-cache

# Go and the version go.mod asks for, checked before anything else: a
# fresh machine may have neither, and Go's own message would not say how.
GO_WANT := $(shell sed -n 's/^go //p' go.mod)
go-check:
	@command -v $(GO) >/dev/null 2>&1 || { echo "no Go toolchain ($(GO)): install Go $(GO_WANT) or newer (https://go.dev/dl, unpacked in /usr/local/go), or pass GO=/path/to/go" >&2; exit 2; }
	@v=$$($(GO) env GOVERSION 2>/dev/null | sed 's/^go//'); \
	if [ "$$(printf '%s\n' "$(GO_WANT)" "$$v" | sort -V | head -n 1)" != "$(GO_WANT)" ]; then \
		echo "Go $$v is older than the Go $(GO_WANT) go.mod asks for: install a newer one (https://go.dev/dl) or pass GO=/path/to/go" >&2; exit 2; fi

smct: go-check
	@$(GO) build -o bin/smct ./cmd/smct

qemu-test: smct
	@./bin/smct qemu-test -arch '$(ARCH)' -kernel '$(KERNEL)' -tree '$(TREE)' -image '$(IMAGE)' \
		-profile '$(PROFILE)' -labels '$(LABELS)' -timeout '$(TIMEOUT)' -boot-quiet '$(BOOT_QUIET)' \
		-ftracetest '$(FTRACETEST)' -ftracetest-match '$(FTRACETEST_MATCH)' -jobs '$(JOBS)' -accel '$(ACCEL)' \
		-cpu '$(CPU)' -mem '$(MEM)' -qemu-opts '$(QEMU_OPTS)' $(if $(KEEP),-keep) $(if $(GUEST_SHELL),-shell) -lanes '$(or $(LANES),0)' \
		-require-feature '$(REQUIRE)' -seed '$(SEED)' -exit-codes '$(EXIT_CODES)' $(if $(CLAIMS),-claims) -sanitize '$(SANITIZE)' \
		-append '$(APPEND)' -reports '$(REPORTS)'

# What the series claims (retention, pool memory, hot-path cost,
# deduplication under contention), measured on one kernel.
claims: smct
	@./bin/smct claims -arch '$(ARCH)' -kernel '$(KERNEL)' -tree '$(TREE)' -image '$(IMAGE)' -profile '$(PROFILE)' \
		-timeout '$(TIMEOUT)' -boot-quiet '$(BOOT_QUIET)' -jobs '$(JOBS)' -accel '$(ACCEL)' -cpu '$(CPU)' -mem '$(MEM)' \
		-lanes '$(or $(LANES),0)' -sanitize '$(SANITIZE)'

# The reference kernel (kernel/), built and cached; PIN=1 records it in images.lock.
kernel: smct
	@./bin/smct kernel -arch '$(ARCH)' -jobs '$(JOBS)' $(if $(PIN),-pin) -sanitize '$(SANITIZE)'

# Boot the reference kernel once per fault switch: each must be caught.
mutants: smct
	@./bin/smct mutants -arch '$(ARCH)' -sanitize '$(SANITIZE)' -faults '$(FAULTS)'

# The stackmap hot path under load on two CPUs; fails on kernel warnings.
stress: smct
	@./bin/smct qemu-test -arch '$(ARCH)' -kernel '$(KERNEL)' -image '$(IMAGE)' -labels stress -timeout 10m \
		-boot-quiet '$(BOOT_QUIET)' -sanitize '$(SANITIZE)'

# The series' operating model for DURATION: stackmap on from boot, actors
# on every CPU, the invariants every round, then the actor table.
torture: smct
	@./bin/smct qemu-test -arch '$(ARCH)' -kernel '$(KERNEL)' -image '$(IMAGE)' -labels torture -torture '$(DURATION)' \
		-timeout '$(TIMEOUT)' -boot-quiet '$(BOOT_QUIET)' -sanitize '$(SANITIZE)' -profile '$(PROFILE)' -exit-codes '$(EXIT_CODES)' \
		-append '$(APPEND)'

# Every images.lock entry (or IMAGES=a,b) on both arches, two boots at a
# time; exits with the worst cell's status.
matrix: smct
	@./bin/smct matrix -images '$(IMAGES)' -profile '$(PROFILE)' -labels '$(LABELS)' -timeout '$(TIMEOUT)' -boot-quiet '$(BOOT_QUIET)' \
		-require-feature '$(REQUIRE)' -seed '$(SEED)' -sanitize '$(SANITIZE)' $(if $(LAVA),-lava-jobs -lava-url '$(LAVA_URL)' -notify '$(NOTIFY)') \
		-server '$(SERVER)' -token '$(TOKEN)' $(if $(SERVER),-lava-url '$(LAVA_URL)' -notify '$(NOTIFY)')

# A LAVA job of the run qemu-test would make, for LAVA's qemu device type,
# and the device dictionary that runs it here with lava-run.
lava-job: smct
	@./bin/smct lava -arch '$(ARCH)' -kernel '$(KERNEL)' -tree '$(TREE)' -image '$(IMAGE)' \
		-profile '$(PROFILE)' -labels '$(LABELS)' -timeout '$(TIMEOUT)' -jobs '$(JOBS)' -accel '$(ACCEL)' \
		-cpu '$(CPU)' -mem '$(or $(MEM),512)' -require-feature '$(REQUIRE)' -seed '$(SEED)' -url '$(URL)' \
		-notify '$(NOTIFY)' -server '$(SERVER)' -token '$(TOKEN)' -exit-codes '$(EXIT_CODES)' -sanitize '$(SANITIZE)'

# A one-machine LAVA lab from Debian's packages: make lab prints its URL
# and token (SERVER= and TOKEN= of lava-job); make lab-stop stops it.
lab:
	@sh lava/lab.sh start
lab-stop:
	@sh lava/lab.sh stop

# LAVA's log of a job (or of several: a matrix's) judged as a run here.
lava-results: smct
	@./bin/smct lava-results -exit-codes '$(EXIT_CODES)' $(LOG)

# Time to verdict of IMAGE= against a bare boot of the same kernel, and the
# throughput of a matrix (the Debian entries, or IMAGES=); medians of REPS.
bench: smct
	@./bin/smct bench -image '$(IMAGE)' -reps '$(REPS)' -matrix-images '$(IMAGES)' -timeout '$(TIMEOUT)' -boot-quiet '$(BOOT_QUIET)' \
		-walk-series '$(WALK_SERIES)' -walk-tree '$(WALK_TREE)' -sanitize '$(SANITIZE)'

# A series walked patch by patch on every arch: per-patch table and evidence.
# The reply to the series' thread a run or a walk wrote: its path and the
# git send-email command that sends it (nothing is sent).
RUN ?= results/latest
reply: smct
	@./bin/smct reply -run '$(RUN)'

review: smct
	@./bin/smct review -series '$(SERIES)' -tree '$(TREE)' -base '$(BASE)' -arches '$(ARCHES)' \
		-against '$(AGAINST)' -profile '$(PROFILE)' -labels '$(LABELS)' -timeout '$(TIMEOUT)' -boot-quiet '$(BOOT_QUIET)' -jobs '$(JOBS)' \
		-accel '$(ACCEL)' -lanes '$(or $(LANES),0)' $(if $(CLAIMS),-claims) -sanitize '$(SANITIZE)'

# `go test ./...` runs the unit tests only: the end-to-end boots (test/e2e)
# and live mode on this machine (test/live) run when SMCT_E2E=1 and
# SMCT_LIVE=1 ask for them, and the suite binary (suites) only in the guest
# or with a label filter (live mode).
test: go-check imports-check
	$(GO) vet ./...
	SMCT_E2E=1 SMCT_LIVE=1 $(GO) test -count=1 -timeout 80m ./...

# Imports in three groups, standard library, others, then this module's,
# as goimports -local writes them. goimports is go.mod's tool, pinned there:
# nothing to install.
MODULE    := github.com/ftrace-stackmap/conformance
GOIMPORTS  = $(GO) tool goimports -local $(MODULE)
imports-check: go-check
	@files=$$($(GOIMPORTS) -l .) || exit 2; \
	if [ -n "$$files" ]; then \
		echo "imports not grouped as goimports -local $(MODULE) writes them:" >&2; \
		echo "$$files" | sed 's/^/  /' >&2; \
		echo "fix: make fmt (a moved import may land in a group of its own: join it to its kind's)" >&2; exit 1; fi

fmt: go-check
	$(GOIMPORTS) -w .

unit-test:
	$(GO) test -count=1 ./...

# The readers of what comes back from a guest, under Go's fuzzer: the
# console's frames (FuzzJudge) and LAVA's log (FuzzResults), each seeded
# with a recorded failing run, FUZZTIME each; make test runs the seeds.
FUZZTIME ?= 2m
fuzz: go-check
	$(GO) test -run '^$$' -fuzz '^FuzzJudge$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 50x ./internal/qemutest
	$(GO) test -run '^$$' -fuzz '^FuzzResults$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 50x ./internal/lava

clean:
	rm -rf bin build

# The cache (SMCT_CACHE, else ~/.cache/stackmap-conformance) against its caps;
# clean-cache empties it but for what another smct is using and the lab.
cache: smct
	@./bin/smct cache
clean-cache: smct
	@./bin/smct cache -clean
