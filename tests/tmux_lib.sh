# tmux_lib.sh: what the full-screen inspector's tmux tests share (sourced, not run): they skip
# without an inspector or without tmux, drive kgate in a private tmux server (removed on exit
# with the scratch folder $t), read its screen and count failed checks in $fails.
if "$KGATE" --repl < /dev/null 2>&1 | grep -q "has no inspector"; then
    echo "SKIP: kgate was configured with --disable-tui"
    exit 77
fi
command -v tmux > /dev/null 2>&1 || { echo "SKIP: tmux is not installed"; exit 77; }
unset TMUX # a private server even when make check runs inside tmux
t=${TMPDIR:-/tmp}/kgate-tui-tmux-$$
S=kgate-test-$$
mkdir -p "$t"
trap 'tmux -L "$S" kill-server > /dev/null 2>&1; rm -rf "$t"' EXIT
fails=0
check() { # check DESCRIPTION COMMAND...: the command must succeed
    d=$1
    shift
    if "$@"; then echo "ok: $d"; else echo "FAIL: $d"; fails=$((fails + 1)); fi
}
td=$top_srcdir/testdata

. "$top_srcdir/tests/tmux_screen.sh"
start() { # start ENV FILE [W H]: kgate FILE in a new session (80x24); its exit status goes to $t/exit
    rm -f "$t/exit"
    cat > "$t/run.sh" << EOF2
#!/bin/sh
HOME='$t' KGATE_CACHE_DIR='$KGATE_CACHE_DIR' $1 '$KGATE' '$2'
echo "EXIT=\$?" > '$t/exit'
EOF2
    tmux -L "$S" -f /dev/null new-session -d -s kg -x "${3:-80}" -y "${4:-24}" "sh '$t/run.sh'"
}
wait_exit() { # the exit status of kgate, waiting at most 10 s for it
    n=100
    while [ ! -s "$t/exit" ] && [ $n -gt 0 ]; do
        sleep 0.1
        n=$((n - 1))
    done
    sed -n 's/^EXIT=//p' "$t/exit" 2> /dev/null
}
