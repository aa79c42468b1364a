#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Reports the cases of a result file to LAVA, as utils/send-to-lava.sh of
# Linaro's test-definitions does, so that the test definition runs from
# this repository: each "<case> <pass|fail|skip|unknown> [<measurement>
# [<units>]]" line is a lava-test-case call in LAVA's test shell, and
# elsewhere LAVA's test case signal on stdout, or on /dev/kmsg when KMSG is
# set (LAVA sets KMSG=true for a definition with lava-signal: kmsg). Other
# lines are left out.
#
# usage: send-to-lava.sh RESULT_FILE
set -u

file=${1:?usage: send-to-lava.sh RESULT_FILE}
case "${KMSG:-}" in
'' | false) KMSG= ;;
esac

signal() {
	if [ -z "$KMSG" ] || ! printf '<0>%s\n' "$1" 2>/dev/null >/dev/kmsg; then
		printf '%s\n' "$1"
	fi
}

if [ ! -f "$file" ]; then
	echo "send-to-lava.sh: no result file $file" >&2
	exit 1
fi
lava=false
if command -v lava-test-case >/dev/null 2>&1; then
	lava=true
fi

while read -r name result measurement units rest; do
	case "$result" in
	pass | fail | skip | unknown) ;;
	*) continue ;;
	esac
	[ -z "${rest:-}" ] || continue
	set -- "$name" --result "$result"
	sig="TEST_CASE_ID=$name RESULT=$result"
	if [ -n "$measurement" ]; then
		set -- "$@" --measurement "$measurement"
		sig="$sig MEASUREMENT=$measurement"
		if [ -n "$units" ]; then
			set -- "$@" --units "$units"
			sig="$sig UNITS=$units"
		fi
	fi
	if [ "$lava" = true ]; then
		lava-test-case "$@"
	else
		signal "<LAVA_SIGNAL_TESTCASE $sig>"
	fi
done <"$file"
