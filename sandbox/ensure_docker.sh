#!/bin/sh
# Make sure a Docker daemon answers on this machine; quiet when it already does.
#
# On a fresh Debian machine without systemd (containers, CI runners) this installs
# docker.io with apt-get when `dockerd` is missing, starts `dockerd` in the background
# and waits for its socket. Idempotent: run it as often as you like.
set -eu

LOG=${SYNTHORG_DOCKERD_LOG:-/var/log/synthorg-dockerd.log}
WAIT_S=${SYNTHORG_DOCKERD_WAIT_S:-30}

die() { echo "ensure_docker: $*" >&2; exit 1; }

docker_answers() { command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; }

docker_answers && exit 0

[ "$(id -u)" = 0 ] || die "no Docker daemon answers and starting one needs root (or start it yourself)"

if ! command -v dockerd >/dev/null 2>&1; then
    command -v apt-get >/dev/null 2>&1 || die "dockerd is missing and this is not a Debian-like system: install Docker"
    echo "ensure_docker: installing docker.io with apt-get ..." >&2
    export DEBIAN_FRONTEND=noninteractive
    apt_log=$(mktemp)
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends docker.io iptables; } \
        >"$apt_log" 2>&1 || { tail -n 20 "$apt_log" >&2; die "apt-get install docker.io failed"; }
    rm -f "$apt_log"
fi

if [ -S /var/run/docker.sock ] && ! pgrep -x dockerd >/dev/null 2>&1; then
    rm -f /var/run/docker.sock   # stale socket of a daemon that died
fi
if ! pgrep -x dockerd >/dev/null 2>&1; then
    echo "ensure_docker: starting dockerd (log: $LOG) ..." >&2
    mkdir -p "$(dirname "$LOG")"
    nohup dockerd >>"$LOG" 2>&1 </dev/null &
fi

i=0
while [ "$i" -lt "$WAIT_S" ]; do
    docker_answers && exit 0
    sleep 1
    i=$((i + 1))
done
die "dockerd did not answer within ${WAIT_S}s; see the last lines of $LOG:
$(tail -n 15 "$LOG" 2>/dev/null)"
