# repl_lib.sh: what the inspector's REPL tests share (sourced, not run): they skip where kgate
# has no inspector, and count failed checks in $fails.
if "$KGATE" --repl < /dev/null 2>&1 | grep -q "has no inspector"; then
    echo "SKIP: kgate was configured with --disable-tui"
    exit 77
fi
fails=0
check() { # check DESCRIPTION COMMAND...: the command must succeed
    d=$1
    shift
    if "$@"; then echo "ok: $d"; else echo "FAIL: $d"; fails=$((fails + 1)); fi
}
has() { # has FILE TEXT: FILE contains TEXT (fixed string)
    grep -qF -- "$2" "$1"
}
