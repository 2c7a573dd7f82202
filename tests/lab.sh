#!/bin/sh
# lab.sh: `kgate lab`. The list has every lesson (GPU ones marked); for every lesson that runs
# here, `kgate lab N DIR` copies it without its answers and opens the inspector on it, `hint`
# three times gives three different hints, `kgate lab check N DIR` exits 1 and names the
# lesson's gate, and exits 0 once the lesson's prepared fix (tui/lab/*/fix/) is in place. Also:
# a changed contract is refused, edits survive a restart, and GPU lessons exit 3 here.
set -u
. "$top_srcdir/tests/repl_lib.sh"
t=${TMPDIR:-/tmp}/kgate-lab-$$
mkdir -p "$t"
trap 'rm -rf "$t"' EXIT
HOME=$t
export HOME
lab=$top_srcdir/tui/lab
rc() { # rc FILE COMMAND...: runs the command, output into FILE, exit status into FILE.rc
    out=$1
    shift
    "$@" > "$out" 2>&1
    echo $? > "$out.rc"
}

# ---- the list ---------------------------------------------------------------------------------
rc "$t/list" "$KGATE" lab
check "kgate lab exits 0" test "$(cat "$t/list.rc")" = 0
n=$(grep -c '^ *[0-9][0-9]*  ' "$t/list")
check "kgate lab lists every lesson folder ($n)" test "$n" = "$(ls -d "$lab"/[0-9]*/ | wc -l)"
for g in $("$KGATE" --list-gates | awk 'NF > 2 && $1 != "tf:" {print $1}'); do
    check "a lesson for the $g gate" grep -q "^ *[0-9]*  .* $g " "$t/list"
done
check "placement and limits lessons are marked GPU" sh -c "grep ' placement ' '$t/list' | grep -q GPU && grep ' limits ' '$t/list' | grep -q GPU"
check "host lessons are not marked GPU" sh -c "! grep ' nonfinite ' '$t/list' | grep -q GPU"

# ---- every lesson that runs here -----------------------------------------------------------
i=0
for ld in "$lab"/[0-9]*/; do
    i=$((i + 1))
    ld=${ld%/}
    line=$(grep "^ *$i  " "$t/list")
    # the lesson's own gate (the listing's columns shift with the GPU mark: "placement GPU runs here")
    gate=$(sed -n 's/.*"gate": *"\([a-z-]*\)".*/\1/p' "$ld/lesson.json" | head -n 1)
    case $line in *"runs here"*) ;; *)
        rc "$t/gpu$i" "$KGATE" lab check "$i" "$t/none$i"
        "$KGATE" lab "$i" "$t/gpu$i.d" < /dev/null > /dev/null 2>&1
        rc "$t/gpu$i" "$KGATE" lab check "$i" "$t/gpu$i.d"
        check "lesson $i (GPU) cannot be checked here: exit 3" test "$(cat "$t/gpu$i.rc")" = 3
        continue ;;
    esac
    w=$t/l$i
    printf 'hint\nhint\nhint\nquit\n' > "$t/in$i"
    rc "$t/start$i" "$KGATE" lab "$i" "$w" < "$t/in$i"
    check "lesson $i: kgate lab $i DIR exits 0" test "$(cat "$t/start$i.rc")" = 0
    check "lesson $i: the brief is shown" has "$t/start$i" "lesson $i: "
    check "lesson $i: its kernel is copied" test -s "$w/$(sed -n 's/.*"kernel": *"\([^"]*\)".*/\1/p' "$ld/lesson.json")"
    check "lesson $i: no answers in the copy" sh -c "! grep -il -e 'expect:' -e 'planted' -e 'bug' '$w'/*"
    check "lesson $i: no fix in the copy" test ! -e "$w/fix"
    h1=$(grep '^hint 1 of 3' "$t/start$i")
    h2=$(grep '^hint 2 of 3' "$t/start$i")
    h3=$(grep '^hint 3 of 3' "$t/start$i")
    check "lesson $i: hint three times gives three different hints" \
        sh -c "test -n '$(echo "$h1$h2$h3" | tr -d "'")' && test '$(echo "${h1#*: }" | tr -d "'")' != '$(echo "${h2#*: }" | tr -d "'")' && test '$(echo "${h2#*: }" | tr -d "'")' != '$(echo "${h3#*: }" | tr -d "'")'"
    rc "$t/before$i" "$KGATE" lab check "$i" "$w"
    check "lesson $i: kgate lab check exits 1 before the fix" test "$(cat "$t/before$i.rc")" = 1
    check "lesson $i: it says what still fails" has "$t/before$i" "not yet"
    if [ "$gate" != contract ]; then
        check "lesson $i: the $gate gate is what fails" grep -q "^  $gate  *fail" "$t/before$i" ||
            sed 's/^/    | /' "$t/before$i"
    fi
    if [ -d "$ld/fix" ]; then
        cp "$ld"/fix/* "$w"/
    else # the recurrence lesson: its fix is gdn/ as it is (plant.awk planted the bug)
        cp "$top_srcdir/gdn/chunk_host_impl.h" "$w"/
    fi
    rc "$t/after$i" "$KGATE" lab check "$i" "$w"
    check "lesson $i: kgate lab check exits 0 after the fix" test "$(cat "$t/after$i.rc")" = 0
    check "lesson $i: it says done" has "$t/after$i" "done: lesson $i"
    [ "$(cat "$t/after$i.rc")" = 0 ] || cat "$t/after$i"
done

# ---- the standard test's blind spot: KernelBench's test passes the bug of lesson 14 ----------
"$KGATE" lab 14 "$t/kb" < /dev/null > /dev/null 2>&1
rc "$t/kb.out" "$KGATE" check "$t/kb/add.c" --baseline kernelbench
check "lesson 14: kgate fails the kernel" test "$(cat "$t/kb.out.rc")" = 1
check "lesson 14: the KernelBench baseline passes it" grep -qi "kernelbench.*pass" "$t/kb.out"

# ---- the rules of the copy and the check -----------------------------------------------------
w=$t/l3
sed -i 's/^op: .*/op:      sum(dim=1)/' "$w/max_rows.c"
rc "$t/changed" "$KGATE" lab check 3 "$w"
check "a changed contract is refused (exit 1)" test "$(cat "$t/changed.rc")" = 1
check "the refusal names the contract" has "$t/changed" "contract header"
"$KGATE" lab 3 "$w" < /dev/null > "$t/again" 2>&1
check "starting again keeps the student's edit" grep -q 'sum(dim=1)' "$w/max_rows.c"
check "and says so" has "$t/again" "keeping"
"$KGATE" lab 3 "$w" --force < /dev/null > /dev/null 2>&1
check "--force copies the lesson again" grep -q 'max(dim=1)' "$w/max_rows.c"
rc "$t/nolesson" "$KGATE" lab 99
check "no lesson 99: exit 2" test "$(cat "$t/nolesson.rc")" = 2
rc "$t/nocopy" "$KGATE" lab check 1 "$t/nowhere"
check "checking a lesson never started: exit 2" test "$(cat "$t/nocopy.rc")" = 2
printf 'hint\n' | "$KGATE" --repl > "$t/nohint" 2>&1
check "hint outside a lesson says why" has "$t/nohint" "not opened by kgate lab"

# the full screen shows the lesson's brief in its detail pane (the text printed before the screen
# opened is gone once it does)
if command -v tmux > /dev/null 2>&1 && ! "$KGATE" --repl < /dev/null 2>&1 | grep -q "has no inspector"; then
    S=kgate-lab-$$
    unset TMUX # a private server even when make check runs inside tmux
    . "$top_srcdir/tests/tmux_screen.sh"
    tmux -L "$S" new-session -d -x 120 -y 40 -s kg \
        "cd '$t' && KGATE_CACHE_DIR='$KGATE_CACHE_DIR' HOME='$t' '$KGATE' lab 3 '$t/tmux3'; sleep 30"
    check "full screen: the brief is in the detail pane" wait_for "lesson 3: "
    tmux -L "$S" kill-server > /dev/null 2>&1
fi

[ "$fails" = 0 ]
