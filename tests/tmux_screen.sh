# tmux_screen.sh: reading and driving a kgate in the private tmux server $S (session kg),
# shared by the tmux tests (sourced; the caller sets $t, its scratch folder, and $S).
screen() { # the pane as text
    tmux -L "$S" capture-pane -p -t kg > "$t/screen" 2> /dev/null
    cat "$t/screen"
}
wait_for() { # wait_for ERE [TENTHS]: until the screen matches (at most TENTHS / 10 s, default 10 s)
    n=${2:-100}
    while [ "$n" -gt 0 ]; do
        screen | grep -qE -- "$1" && return 0
        sleep 0.1
        n=$((n - 1))
    done
    echo "  (waited for '$1'; the screen was:)"
    sed 's/^/  | /' "$t/screen"
    return 1
}
keys() {
    tmux -L "$S" send-keys -t kg "$@"
}
