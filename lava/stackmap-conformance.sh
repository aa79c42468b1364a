#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Runs the stackmap conformance suite in live mode and reports each spec of
# its KTAP as a LAVA test case: "ok" pass, "ok ... # SKIP" skip, "not ok"
# fail (FAIL, and UNRESOLVED: "# ERROR", "# TIMEOUT"). A run that gives no
# verdict adds a failed case, stackmap-run. Outside LAVA the cases are
# printed as LAVA's signals would be.
#
# usage: stackmap-conformance.sh [-s SUITE] [-u URL] [-l LABELS] [-p PROFILE]
#                                [-r REQUIRE] [-f true|false] [-e SEED] [-o OUTDIR]
set -u

SUITE=/usr/local/bin/stackmap-conformance.test
URL=
LABELS='!needs-boot && !stress'
PROFILE=v4
REQUIRE=stackmap
FORCE=false
SEED=
OUT=./output

while getopts "s:u:l:p:r:f:e:o:" opt; do
	case "$opt" in
	s) SUITE=$OPTARG ;;
	u) URL=$OPTARG ;;
	l) LABELS=$OPTARG ;;
	p) PROFILE=$OPTARG ;;
	r) REQUIRE=$OPTARG ;;
	f) FORCE=$OPTARG ;;
	e) SEED=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) echo "usage: $0 [-s SUITE] [-u URL] [-l LABELS] [-p PROFILE] [-r REQUIRE] [-f true|false] [-e SEED] [-o OUTDIR]" >&2; exit 2 ;;
	esac
done

case_result() {
	if command -v lava-test-case >/dev/null 2>&1; then
		lava-test-case "$1" --result "$2"
	else
		echo "<TEST_CASE_ID=$1 RESULT=$2>"
	fi
}

# no_verdict reports the run itself as failed, and why.
no_verdict() {
	echo "stackmap-conformance: no verdict: $1" >&2
	case_result stackmap-run fail
	exit 0
}

mkdir -p "$OUT" || no_verdict "cannot make $OUT"
if [ -n "$URL" ]; then
	SUITE=$OUT/suites.test
	if command -v wget >/dev/null 2>&1; then
		wget -q -O "$SUITE" "$URL" || no_verdict "cannot fetch $URL"
	else
		curl -fsSL -o "$SUITE" "$URL" || no_verdict "cannot fetch $URL"
	fi
	chmod +x "$SUITE"
fi
[ -x "$SUITE" ] || no_verdict "no suite binary at $SUITE (SUITE=, or SUITE_URL=)"

set -- "-ginkgo.label-filter=$LABELS" "-smct.profile=$PROFILE" "-smct.ktap=$OUT/ktap.txt" \
	"-smct.junit=$OUT/junit.xml" -smct.exit-codes=kselftest
[ -n "$REQUIRE" ] && set -- "$@" "-smct.require=$REQUIRE"
[ "$FORCE" = true ] && set -- "$@" -smct.force
[ -n "$SEED" ] && set -- "$@" "-ginkgo.seed=$SEED"

# LAVA runs the steps under set -e: the suite's status is kept, not
# returned, so every case is reported.
rm -f "$OUT/ktap.txt" "$OUT/status"
{
	st=0
	"$SUITE" "$@" 2>&1 || st=$?
	echo "$st" >"$OUT/status"
} | tee "$OUT/output.txt"
status=$(cat "$OUT/status" 2>/dev/null || echo 255)

cases=0
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
		"not ok "*) result=fail ;;
		*" # SKIP"*) result=skip ;;
		*) result=pass ;;
		esac
		case_result "$name" "$result"
		cases=$((cases + 1))
	done <"$OUT/ktap.txt"
fi

# kselftest's statuses: 0 pass, 1 fail, 4 every spec skipped; anything
# else (5, a crash) is no verdict.
case "$status" in
0 | 1 | 4) [ "$cases" -gt 0 ] || no_verdict "the suite wrote no KTAP results (status $status)" ;;
*) no_verdict "the suite exited $status" ;;
esac
exit 0
