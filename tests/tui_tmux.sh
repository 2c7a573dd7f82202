#!/bin/sh
# tui_tmux.sh: the full-screen inspector in a real terminal (a private tmux server): the gate
# list shows a failing gate as gates run, the detail pane shows its evidence and the next
# command, the heatmap renders and its cursor moves and zooms, a resize redraws without a
# crash, NO_COLOR removes colour, and `quit` exits 0. Skips (77) without tmux.
set -u
. "$top_srcdir/tests/tmux_lib.sh"

start "" "$td/bugs/relu_fmaxf.c"
check "the screen opens with the gate list" wait_for '^ GATES +│ DETAIL'
check "the title names the kernel" wait_for '^ kgate \| relu_fmaxf \(host\)'
check "the load is shown" wait_for 'loaded relu_fmaxf'

keys 'run all' Enter
check "run all: the gate list shows nonfinite failing" wait_for '^>nonfinite +fail +│'
check "run all: and structure passing" wait_for '^ structure +pass +│'
check "run all: the title counts" wait_for '12/12 run: 9 pass, 1 fail, 2 skip'
check "the detail pane shows the failing gate" wait_for 'DETAIL: gate nonfinite'
check "the detail pane shows the evidence" wait_for '│ evidence: y\[[0-9]+\] got 0, expected nan'
check "the detail pane suggests the next command" wait_for '│ next: heatmap y'

keys 'heatmap y' Enter
check "heatmap: the pane renders" wait_for '│ HEATMAP y \[100000\]  1 cell = 1x[0-9]+ \(\+ zooms\)'
check "heatmap: the cursor is on the lost NaN" wait_for '│ y\[[0-9]+\] got 0, expected nan: NaN lost'
check "heatmap: the lost NaN is marked" wait_for '│ +[0-9]+ +N'
check "heatmap: the legend" wait_for '^ N NaN lost I Inf lost'

keys Tab
for i in 1 2 3 4 5 6 7 8 9 10; do keys +; done
check "heatmap: zoom in to single elements" wait_for '1 cell = 1x1 +│?$|1 cell = 1x1$'
at=$(sed -n 's/.*│ y\[\([0-9]*\)\] got 0, expected nan.*/\1/p' "$t/screen" | head -n 1)
keys Right
check "heatmap: the cursor moves right (from y[$at])" wait_for "│ y\\[$((at + 1))\\] got "
keys w
check "heatmap: w goes back to the worst" wait_for "│ y\\[$at\\] got 0, expected nan"
for i in 1 2 3 4 5 6 7 8 9 10; do keys -; done
check "heatmap: zoom out again" wait_for '1 cell = 1x[0-9]+ \(\+ zooms\)'
keys Tab

tmux -L "$S" resize-window -t kg -x 120 -y 40
check "resize to 120x40 redraws" wait_for '^ GATES {20}│ DETAIL: heatmap y'
check "  with the detail text on wider lines" wait_for '│ heatmap of y: one run of N=100000 dtype=f32 seed=1 dist=special \(the case nonfinite failed\)$'
check "  and kgate is still running" test ! -e "$t/exit"
tmux -L "$S" resize-window -t kg -x 80 -y 24
check "resize back to 80x24 redraws" wait_for '^ GATES {18}│ DETAIL: heatmap y'
check "  and kgate is still running" test ! -e "$t/exit"

keys 'replay 1 2' Enter
check "replay: the map pane shows two runs" wait_for '│ REPLAY run 1 vs 2: y, 0 differ'
check "replay: the detail pane counts" wait_for '│   y: bit-identical \(0 of 100000 positions differ\)'
keys 'resources' Enter
check "resources: N/A on the host runner" wait_for 'registers/thread +N/A on the host runner'
keys 'frobnicate' Enter
check "an unknown command says so" wait_for "^unknown command 'frobnicate' \\(help lists them\\)"
keys 'quit' Enter
check "quit exits 0" test "$(wait_exit)" = 0

# colour, and NO_COLOR
tmux -L "$S" kill-server > /dev/null 2>&1
start "" "$td/bugs/relu_fmaxf.c"
wait_for '^ GATES' > /dev/null
keys 'run nonfinite' Enter
wait_for '^>nonfinite +fail' > /dev/null
check "colour: the failing status is red" sh -c "tmux -L '$S' capture-pane -e -p -t kg | grep -q '31m'"
keys 'quit' Enter
check "colour run: quit exits 0" test "$(wait_exit)" = 0
tmux -L "$S" kill-server > /dev/null 2>&1
start "NO_COLOR=1" "$td/bugs/relu_fmaxf.c"
wait_for '^ GATES' > /dev/null
keys 'run nonfinite' Enter
check "NO_COLOR: the gate still shows failing" wait_for '^>nonfinite +fail'
keys 'replay 1 2' Enter
check "replay before determinism: a clear error" wait_for '^no recorded runs: run the determinism gate first'
check "NO_COLOR: no colour codes" sh -c "! tmux -L '$S' capture-pane -e -p -t kg | grep -qE '\[([0-9;]*;)?(3[0-7]|4[0-7]|38|48)(;[0-9;]*)?m'"
keys C-d
check "Ctrl-D on an empty line exits 0" test "$(wait_exit)" = 0

echo "$fails failed"
test $fails -eq 0
