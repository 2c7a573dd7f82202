#!/bin/sh
# tui_tmux_keys.sh: moving around the full-screen inspector (a private tmux server): Up/Down and
# j/k on an empty line select a gate and its verdict shows, a gate id typed alone selects it,
# explain text is wrapped once (at the pane's width, not also at the width it is stored at),
# PgDn and PgUp page by the pane less one line so every line is seen, the heatmap labels its
# rows and columns, a list of completions goes when the line changes, and one `next:` hint
# shows at a time (on the screen after `load`; in the REPL after a run with many failures).
# Skips (77) without tmux.
set -u
. "$top_srcdir/tests/tmux_lib.sh"

# the REPL: seven failing gates, one next: line (the selected gate's: the heatmap runs its case)
printf 'run all\n' | "$KGATE" --repl "$td/bugs/relu_skips_last.c" > "$t/repl" 2>&1
check "repl: relu_skips_last fails several gates" grep -qE '^verdict so far: fail \(2 pass, [2-9] fail' "$t/repl"
check "repl: after run all, one next: line" test "$(sed -n '/^verdict so far/,$p' "$t/repl" | grep -c '^next:')" = 1

printf 'accuracy\nstructure now\n' | "$KGATE" --repl "$td/bugs/relu_fmaxf.c" > "$t/repl" 2>&1
check "repl: a gate id typed alone shows its verdict" grep -q '^accuracy: not run yet (run accuracy)' "$t/repl"
check "repl: a gate id with words after it says how to run it" \
    grep -q '^a gate id alone selects the gate; it takes no arguments (run structure runs it)' "$t/repl"

# ---- 80x24: one next: hint, selection, completions, paging, heatmap labels ----------------------
start "" "$td/bugs/relu_fmaxf.c"
check "the load is shown" wait_for 'loaded relu_fmaxf'
screen > /dev/null
check "after load: one next: hint on the screen" test "$(grep -c 'next:' "$t/screen")" = 1

keys Down
check "Down on an empty line selects the first gate" wait_for '^>structure +- +│'
check "  and its verdict shows" wait_for 'DETAIL: gate structure'
check "  (not run yet)" wait_for '│ structure: not run yet \(run structure\)'
keys j
check "j selects the next gate" wait_for '^>accuracy +- +│'
check "  and its verdict shows" wait_for 'DETAIL: gate accuracy'
keys Down
check "Down again: the next one" wait_for '^>nonfinite +- +│'
keys k
check "k goes back up" wait_for '^>accuracy +- +│'
keys Up
check "Up goes back up" wait_for '^>structure +- +│'
check "  the command line stays empty" wait_for '^kgate> ?$'

keys 'shapes' Enter
check "a gate id typed alone selects it" wait_for '^>shapes +- +│'
check "  and its verdict shows" wait_for 'DETAIL: gate shapes'
check "  not an unknown command" sh -c "! grep -q 'unknown command' '$t/screen'"
keys 'sh' Up
check "Up on a line with text recalls history" wait_for '^kgate> shapes$'
keys C-u

keys s Tab Tab
check "Tab Tab lists the completions" wait_for '^save seed set .*sweep'
keys h
check "typing clears the list" wait_for '^Tab: complete'
check "  and the line has the text" wait_for '^kgate> sh$'
keys C-u

# every line of a long text is seen when paging down, and again paging up
keys 'help' Enter
wait_for 'DETAIL: help +\[1-[0-9]+ of [0-9]+' > /dev/null
seen=$t/seen
: > "$seen"
page() { # the detail pane's range "A B N" and its text lines into $seen
    sed -n 's/.*DETAIL: help  \[\([0-9]*\)-\([0-9]*\) of \([0-9]*\),.*/\1 \2 \3/p' "$t/screen"
    sed -n 's/^.*│ //p' "$t/screen" >> "$seen"
}
ranges() { # ranges KEY: pages with KEY until the range stops changing; prints one range a line
    screen > /dev/null
    r=$(page)
    for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
        echo "$r"
        keys "$1"
        n=20 # the next page, waiting at most 2 s for it
        while [ $n -gt 0 ]; do
            screen > /dev/null
            now=$(page)
            [ "$now" != "$r" ] && break
            sleep 0.1
            n=$((n - 1))
        done
        [ "$now" = "$r" ] && break
        r=$now
    done
}
ranges NPage > "$t/down"
check "PgDn: the pages reach the last line" awk 'END { exit !($2 == $3) }' "$t/down"
check "PgDn: no line is skipped (each page starts at or before the line after the last)" \
    awk 'NR > 1 && !($1 <= b + 1 && $1 > a) { bad = 1 } { a = $1; b = $2 } END { exit bad || NR < 3 }' "$t/down"
check "PgDn: the quit line of help was seen" grep -q '^  quit  *leave' "$seen"
ranges PPage > "$t/up"
check "PgUp: the pages reach the first line" awk 'END { exit !($1 == 1) }' "$t/up"
check "PgUp: no line is skipped" \
    awk 'NR > 1 && !($2 >= a - 1 && $2 < b) { bad = 1 } { a = $1; b = $2 } END { exit bad || NR < 3 }' "$t/up"

# the heatmap's row labels are first indices (flat: y is a vector), its column labels offsets
keys 'run nonfinite' Enter
wait_for '^>nonfinite +fail' > /dev/null
keys 'heatmap y' Enter
check "heatmap: the pane renders" wait_for '│ HEATMAP y \[100000\]  1 cell = 1x[0-9]+'
bw=$(sed -n 's/.*│ HEATMAP y \[100000\]  1 cell = 1x\([0-9]*\).*/\1/p' "$t/screen")
worst=$(sed -n 's/.*│ y\[\([0-9]*\)\] got 0, expected nan: NaN lost.*/\1/p' "$t/screen" | head -n 1)
sed -n '/│ HEATMAP y/,$p' "$t/screen" | sed -n 's/^.*│ //p' | sed -n '3,$p' > "$t/map"
check "heatmap: the column axis counts 0, 10 cells, 20 cells" \
    awk -v bw="$bw" 'NR == 1 { exit !($1 == 0 && $2 == 10 * bw && $3 == 20 * bw) }' "$t/map"
check "heatmap: the rows are labelled 0, C, 2C ... (C a whole number of cells)" \
    awk -v bw="$bw" 'NR == 2 { if ($1 != 0) bad = 1 } NR == 3 { c = $1 } NR > 2 && $1 != (NR - 2) * c { bad = 1 }
        END { exit bad || NR < 5 || c <= 0 || c % bw }' "$t/map"
check "heatmap: the lost NaN y[$worst] is on the row whose label covers it" \
    awk -v w="$worst" 'NR == 3 { c = $1 } NR >= 2 { l[NR] = $1; s[NR] = $0 }
        END { for (i = 2; i <= NR; i++) if (l[i] <= w && w < l[i] + c) exit !(s[i] ~ /N/); exit 1 }' "$t/map"
keys 'quit' Enter
check "quit exits 0" test "$(wait_exit)" = 0

# ---- 120x40: explain text wrapped once --------------------------------------------------------
tmux -L "$S" kill-server > /dev/null 2>&1
start "" "$td/bugs/relu_fmaxf.c" 120 40
wait_for 'loaded relu_fmaxf' > /dev/null
keys 'explain shapes' Enter
check "explain shapes shows the whole text" wait_for '│ .*deterministic\.$'
sed -n '/DETAIL: explain shapes/,/deterministic\.$/p' "$t/screen" | sed -n 's/^.*│ //p' | sed -n '3,$p' > "$t/para"
# the detail pane is 120 - 26 (gate list) - 1 (rule) wide, its text 2 less: 91 columns
check "explain shapes: no line ends where the next line's first word would have fitted" \
    awk 'NR > 1 && length(prev) + 1 + length($1) <= 91 { print "  short: " prev; bad = 1 } { prev = $0 }
        END { exit bad || NR < 4 }' "$t/para"
check "explain shapes: one paragraph (its continuation lines indented 2, as any wrapped line)" \
    awk 'NR > 1 && !/^  [^ ]/ { bad = 1 } END { exit bad || NR < 4 }' "$t/para"
keys 'quit' Enter
check "quit exits 0" test "$(wait_exit)" = 0

echo "$fails failed"
test $fails -eq 0
