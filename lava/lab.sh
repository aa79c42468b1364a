#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# A one-machine LAVA lab from Debian's packages: PostgreSQL, lava-server
# (gunicorn and the scheduler) on the loopback only, a lava-worker, and two
# devices of LAVA's stock qemu device type. For a user it is a lab
# to try the suite's jobs on; for `make test` it is the server the LAVA
# tests submit to.
#
#   lava/lab.sh start    install what is missing, start, print URL and token
#   lava/lab.sh stop     stop the lab's processes (and PostgreSQL if it started it)
#   lava/lab.sh status   say what runs, and the lab's URL and token
#
# Needs root (lava-server, PostgreSQL and QEMU's device files). The lab's
# state (token, pids, logs) is in $LAB_DIR; its port is $LAB_PORT.
set -eu

LAB_DIR=${LAB_DIR:-${SMCT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/stackmap-conformance}/lab}
LAB_PORT=${LAB_PORT:-8000}
URL="http://127.0.0.1:$LAB_PORT"
USER_NAME=smct
WORKER=smct-lab
# Two devices, two jobs at a time: LAVA's qemu device type takes its arch
# from each job (context: arch), so a device pinned to one arch would
# take jobs of the other and boot them with the wrong QEMU.
DEVICES="smct-qemu-01 smct-qemu-02"
DEVICES_DIR=/etc/lava-server/dispatcher-config/devices
# lava-server's commands need Debian's python3 with Django: a python3 of
# another install earlier on PATH has not.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH

say() { printf '%s\n' "lab: $*" >&2; }
die() { say "$*"; exit 2; }
manage() { lava-server manage "$@"; }

need_root() {
	[ "$(id -u)" = 0 ] || die "run as root: lava-server, PostgreSQL and the worker's QEMU need it"
}

# install adds the Debian packages the lab runs on, when missing.
install() {
	missing=
	for p in postgresql lava-server lava-dispatcher lavacli qemu-system-arm qemu-system-x86 curl; do
		dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	say "installing$missing (Debian packages, a few minutes the first time)"
	apt-get update -qq || die "apt-get update failed"
	# shellcheck disable=SC2086 # one word per package
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >"$LAB_DIR/apt.log" 2>&1 ||
		die "installing$missing failed: see $LAB_DIR/apt.log"
}

# database starts PostgreSQL and, the first time, makes lava-server's
# database: its package skips that when PostgreSQL is not running, as on a
# machine without systemd.
database() {
	version=$(pg_lsclusters -h | awk 'NR == 1 { print $1 }')
	cluster=$(pg_lsclusters -h | awk 'NR == 1 { print $2 }')
	[ -n "$version" ] || die "no PostgreSQL cluster (pg_lsclusters shows none)"
	if ! pg_lsclusters -h | awk 'NR == 1 { exit $4 != "online" }'; then
		say "starting PostgreSQL $version/$cluster"
		pg_ctlcluster "$version" "$cluster" start || die "PostgreSQL $version/$cluster did not start"
		touch "$LAB_DIR/postgresql.started"
	fi
	if ! manage showmigrations lava_scheduler_app >/dev/null 2>&1 || manage showmigrations lava_scheduler_app 2>/dev/null | grep -q '\[ \]'; then
		say "creating lava-server's database"
		DEBIAN_FRONTEND=noninteractive dpkg-reconfigure lava-server >"$LAB_DIR/reconfigure.log" 2>&1 ||
			die "dpkg-reconfigure lava-server failed: see $LAB_DIR/reconfigure.log"
	fi
}

# kvm_setting is the devices' line on KVM. Without a writable /dev/kvm on
# an x86_64 host no job can use it: the dictionary says so. Where it opens,
# only a kernel booted under it tells whether it runs kernels (a nested
# host may run the firmware and hang every kernel), so the dictionary
# leaves no_kvm to each job's context: smct's jobs state the answer of the
# probe that booted their own kernel, and a job that states nothing gets
# the template's default, KVM.
kvm_setting() {
	if [ -w /dev/kvm ] && [ "$(uname -m)" = x86_64 ]; then
		kvm="/dev/kvm opens: each job's no_kvm decides"
		kvm_line="{# no_kvm: each job's context decides #}"
	else
		kvm="no writable /dev/kvm on an x86_64 host: no_kvm = True"
		kvm_line="{% set no_kvm = True %}"
	fi
}

# objects makes the lab's user, token, device type, worker and devices,
# each once.
objects() {
	if ! manage users list 2>/dev/null | grep -qw "$USER_NAME"; then
		DJANGO_SUPERUSER_PASSWORD=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n') \
			manage createsuperuser --noinput --username "$USER_NAME" --email "$USER_NAME@localhost" >/dev/null
	fi
	if [ ! -s "$LAB_DIR/token" ]; then
		manage tokens add --user "$USER_NAME" --description "stackmap conformance lab" >"$LAB_DIR/token"
	fi
	manage device-types list 2>/dev/null | grep -qw qemu || manage device-types add qemu
	# A new worker is active; 2023.01's "workers update --health" fails.
	manage workers list 2>/dev/null | grep -qw "$WORKER" || manage workers add "$WORKER" >/dev/null
	manage workers details "$WORKER" | awk '$1 == "token" { print $3 }' >"$LAB_DIR/worker-token"
	[ -s "$LAB_DIR/worker-token" ] || die "the worker $WORKER has no token (lava-server manage workers details $WORKER)"
	kvm_setting
	for name in $DEVICES; do
		cat >"$DEVICES_DIR/$name.jinja2" <<EOF
{# A device of the stackmap conformance lab. #}
{% extends 'qemu.jinja2' %}
$kvm_line
EOF
		manage devices list 2>/dev/null | grep -qw "$name" ||
			manage devices add --device-type qemu --worker "$WORKER" "$name"
		# No health check job is defined for the lab: the device is good as
		# its dictionary stands.
		manage devices update "$name" --health GOOD >/dev/null
	done
	say "devices: $DEVICES ($kvm)"
}

# running says whether the process of a pid file is alive.
running() { [ -s "$LAB_DIR/$1.pid" ] && kill -0 "$(cat "$LAB_DIR/$1.pid")" 2>/dev/null; }

# spawn starts a lab process in the background, its log and pid kept.
spawn() {
	name=$1
	shift
	running "$name" && return 0
	nohup "$@" >"$LAB_DIR/$name.out" 2>&1 &
	echo $! >"$LAB_DIR/$name.pid"
}

# wait_for retries a check for up to 60 s.
wait_for() {
	what=$1
	shift
	i=0
	until "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		[ "$i" -le 60 ] || die "$what not ready after 60 s: see $LAB_DIR/*.out, $LAB_DIR/worker.log and /var/log/lava-server"
		sleep 1
	done
}

api() { curl -fsS -H "Authorization: Token $(cat "$LAB_DIR/token")" "$URL/api/v0.2/$1"; }
worker_online() { api "workers/$WORKER/" | grep -q '"state": *"Online"'; }

start() {
	need_root
	mkdir -p "$LAB_DIR"
	install
	database
	objects
	spawn gunicorn gunicorn3 lava_server.wsgi -u lavaserver -g lavaserver --worker-class eventlet --workers 2 \
		--bind "127.0.0.1:$LAB_PORT" --timeout 60
	# Both drop to the lavaserver user: their logs stay in /var/log/lava-server.
	spawn scheduler lava-server manage lava-scheduler
	wait_for "lava-server on $URL" api "system/version/"
	spawn worker lava-worker --name "$WORKER" --url "$URL/" --token "$(cat "$LAB_DIR/worker-token")" \
		--worker-dir "$LAB_DIR/worker" --log-file "$LAB_DIR/worker.log"
	wait_for "the worker $WORKER" worker_online
	status
}

stop() {
	need_root
	mkdir -p "$LAB_DIR"
	for name in worker scheduler gunicorn; do
		if running "$name"; then
			pid=$(cat "$LAB_DIR/$name.pid")
			# lava-server's commands run their work in a child process.
			pkill -TERM -P "$pid" 2>/dev/null || true
			kill "$pid" && say "stopped $name"
		fi
		rm -f "$LAB_DIR/$name.pid"
	done
	if [ -e "$LAB_DIR/postgresql.started" ]; then
		pg_ctlcluster "$(pg_lsclusters -h | awk 'NR == 1 { print $1 }')" "$(pg_lsclusters -h | awk 'NR == 1 { print $2 }')" stop &&
			say "stopped PostgreSQL"
		rm -f "$LAB_DIR/postgresql.started"
	fi
}

status() {
	up=0
	for name in gunicorn scheduler worker; do
		if running "$name"; then say "$name: running (pid $(cat "$LAB_DIR/$name.pid"))"; else say "$name: not running"; up=1; fi
	done
	[ -s "$LAB_DIR/token" ] || { say "not set up: lava/lab.sh start"; return 1; }
	# The lines a program reads: where the lab is and how to reach it.
	printf 'LAB_URL=%s\nLAB_USER=%s\nLAB_TOKEN=%s\n' "$URL" "$USER_NAME" "$(cat "$LAB_DIR/token")"
	return "$up"
}

case ${1:-} in
start) start ;;
stop) stop ;;
status) status ;;
*) die "usage: lava/lab.sh start|stop|status" ;;
esac
