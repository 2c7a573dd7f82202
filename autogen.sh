#!/bin/sh
# autogen.sh: install the Debian build dependencies when run as root on a machine with apt
# (a fresh machine), then generate configure. Safe to run again; without network or root it
# only warns, and configure then says what is missing.
cd "$(dirname "$0")" || exit 1

PKGS="autoconf automake libtool pkg-config make gcc gawk libjansson-dev libffi-dev libcmocka-dev \
libncurses-dev libreadline-dev tmux"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && command -v dpkg >/dev/null 2>&1; then
    missing=""
    for p in $PKGS; do
        dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        echo "autogen.sh: installing$missing"
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -q $missing >/dev/null 2>&1 ||
            { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q $missing >/dev/null; } ||
            echo "autogen.sh: could not install$missing (no network?); configure will say what is missing" >&2
    fi
fi
mkdir -p m4
exec autoreconf -fi
