#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Runs the ftrace stackmap conformance suite in live mode on this machine's
# running kernel: the step of the test definition stackmap-conformance.yaml,
# and a command of its own outside LAVA (as root).
#
# It writes OUTDIR/result.txt in the form of Linaro's test-definitions, one
# "<case> <pass|fail|skip>" line per spec, which send-to-lava.sh turns into
# LAVA test cases. The cases are the specs of the suite's KTAP, named as it
# names them (default.SM-RESET-01): "ok" pass, "ok ... # SKIP" skip
# (UNSUPPORTED), "not ok" fail, UNRESOLVED ("# ERROR", "# TIMEOUT")
# included. A run without a verdict, or one that failed outside its specs,
# adds the failed case stackmap-run. It prints the lines, and exits 0 when
# no spec failed, 1 when one did, 2 without a verdict.
#
# KMSG (-k true) writes its progress and result lines to /dev/kmsg as well,
# for a board whose console is shared with the kernel's messages.
#
# usage: stackmap-conformance.sh [-s SUITE] [-u URL] [-l LABELS] [-p PROFILE] [-r REQUIRE]
#                                [-f true|false] [-e SEED] [-k true|false] [-o OUTDIR]
set -u

SUITE=/usr/local/bin/stackmap-conformance.test
URL=
LABELS='!needs-boot && !stress && !torture'
PROFILE=v4
REQUIRE=stackmap
FORCE=false
SEED=
KMSG=
OUT=./output

usage() {
	echo "usage: $0 [-s SUITE] [-u URL] [-l LABELS] [-p PROFILE] [-r REQUIRE] [-f true|false] [-e SEED] [-k true|false] [-o OUTDIR]" >&2
	exit 2
}

while getopts "s:u:l:p:r:f:e:k:o:" opt; do
	case "$opt" in
	s) SUITE=$OPTARG ;;
	u) URL=$OPTARG ;;
	l) LABELS=$OPTARG ;;
	p) PROFILE=$OPTARG ;;
	r) REQUIRE=$OPTARG ;;
	f) FORCE=$OPTARG ;;
	e) SEED=$OPTARG ;;
	k) KMSG=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) usage ;;
	esac
done
case "$KMSG" in
'' | false) KMSG= ;;
esac

RESULT_FILE=$OUT/result.txt

# say prints a line, and with KMSG writes it to the kernel's log too, at
# the level LAVA's own signals use there, so that the console shows it.
say() {
	printf '%s\n' "$1"
	if [ -n "$KMSG" ]; then
		if ! printf '<0>stackmap-conformance: %s\n' "$1" 2>/dev/null >/dev/kmsg; then
			echo "stackmap-conformance: cannot write to /dev/kmsg: KMSG off" >&2
			KMSG=
		fi
	fi
}

npass=0
nfail=0
nskip=0

# result records a case in result.txt and prints it.
result() {
	printf '%s %s\n' "$1" "$2" >>"$RESULT_FILE"
	say "$1 $2"
	case "$2" in
	pass) npass=$((npass + 1)) ;;
	skip) nskip=$((nskip + 1)) ;;
	*) nfail=$((nfail + 1)) ;;
	esac
}

# finish prints the totals and exits with status $1.
finish() {
	say "pass:$npass fail:$nfail skip:$nskip, exit status $1"
	exit "$1"
}

# no_verdict fails the run's own case, says why, and exits 2.
no_verdict() {
	say "NO VERDICT: $1"
	result stackmap-run fail
	finish 2
}

if ! mkdir -p "$OUT" || ! : >"$RESULT_FILE"; then
	echo "stackmap-conformance: cannot write $RESULT_FILE" >&2
	exit 2
fi
rm -f "$OUT/ktap.txt" "$OUT/junit.xml" "$OUT/status"

if [ -n "$URL" ]; then
	SUITE=$OUT/suites.test
	say "fetching the suite from $URL"
	if command -v wget >/dev/null 2>&1; then
		wget -q -O "$SUITE" "$URL" || no_verdict "cannot fetch $URL"
	else
		curl -fsSL -o "$SUITE" "$URL" || no_verdict "cannot fetch $URL"
	fi
	chmod +x "$SUITE"
fi
[ -x "$SUITE" ] || no_verdict "no suite binary at $SUITE (-s SUITE, or -u URL)"

# The suite exits with kselftest's statuses here, which tell a run
# without a verdict (5) from a failed one (1).
set -- "-ginkgo.label-filter=$LABELS" "-smct.profile=$PROFILE" "-smct.ktap=$OUT/ktap.txt" \
	"-smct.junit=$OUT/junit.xml" -smct.exit-codes=kselftest
if [ -n "$REQUIRE" ]; then
	set -- "$@" "-smct.require=$REQUIRE"
fi
if [ "$FORCE" = true ]; then
	set -- "$@" -smct.force
fi
if [ -n "$SEED" ]; then
	set -- "$@" "-ginkgo.seed=$SEED"
fi

say "running $SUITE, labels '$LABELS', profile $PROFILE, require '$REQUIRE', output in $OUT"
{
	st=0
	"$SUITE" "$@" 2>&1 || st=$?
	echo "$st" >"$OUT/status"
} | tee "$OUT/stackmap-conformance.txt"
status=$(cat "$OUT/status" 2>/dev/null) || status=unknown
say "the suite exited $status"

if [ -f "$OUT/ktap.txt" ]; then
	# Top-level results only: a subtest's lines are indented.
	while IFS= read -r line; do
		case "$line" in
		"ok "* | "not ok "*) ;;
		*) continue ;;
		esac
		rest=${line#not ok }
		rest=${rest#ok }
		rest=${rest#* }
		name=${rest%% *}
		case "$line" in
		"not ok "*) result "$name" fail ;;
		*" # SKIP"*) result "$name" skip ;;
		*) result "$name" pass ;;
		esac
	done <"$OUT/ktap.txt"
fi

# kselftest's statuses: 0 pass, 1 fail, 4 every spec skipped; anything
# else (5, a crash) is no verdict.
why=
if [ -f "$OUT/ktap.txt" ]; then
	why=$(sed -n 's/^# NO VERDICT: /: /p' "$OUT/ktap.txt" | head -n 1)
fi
case "$status" in
0 | 1 | 4) ;;
*) no_verdict "the suite exited $status$why" ;;
esac
if [ $((npass + nfail + nskip)) -eq 0 ]; then
	no_verdict "the suite reported no spec (status $status)"
fi
if [ "$status" = 1 ] && [ "$nfail" -eq 0 ]; then
	say "the suite failed outside its specs: see $OUT/stackmap-conformance.txt"
	result stackmap-run fail
fi
if [ "$nfail" -gt 0 ]; then
	finish 1
fi
finish 0
