#!/bin/sh
# autogen.sh: install the Debian build dependencies when run as root (a fresh machine), then
# generate configure. Safe to run again.
set -e
cd "$(dirname "$0")"

PKGS="autoconf automake libtool pkg-config make gcc libjansson-dev libffi-dev libcmocka-dev \
libncurses-dev libreadline-dev tmux"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    missing=""
    for p in $PKGS; do
        dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        echo "autogen.sh: installing$missing"
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -q $missing >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q $missing >/dev/null; }
    fi
fi
mkdir -p m4
autoreconf -fi
