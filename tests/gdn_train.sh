#!/bin/sh
# gdn_train.sh: gdn/train.py end to end on the CPU, tiny (20 steps, T 32, batch 4, hidden 32, 2
# heads): all five members on both tasks, each through libgdn twice and through the PyTorch
# reference (kgate_gdn.chunked; and once both references for one member). The two libgdn runs
# must give bitwise identical loss curves, libgdn and the reference (both fp32) must end within
# 0.5% of each other, the chunked and recurrent references agree, the CSVs, table and SVGs must be
# there; and the report must say NO when one loss of one run differs by one ulp. SKIP (77)
# without a python3 that has torch.
set -u
. "${top_srcdir:-.}/tests/torch_python.sh"
need_torch_python
KGATE_GDN_LIBDIR=${top_builddir:-.}/gdn
export KGATE_GDN_LIBDIR
src=${top_srcdir:-.}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fails=0
check() { if "$@"; then :; else echo "FAIL: $*"; fails=$((fails + 1)); fi; }

"$py" "$src/gdn/train.py" --steps 20 --device cpu --seq 32 --batch 4 --hidden 32 --heads 2 --final-window 5 \
    --out "$t/out" > "$t/log" 2>&1
rc=$?
cat "$t/log"
check test "$rc" -eq 0
check grep -q "^libgdn runs bitwise identical: all$" "$t/log"
check test "$(ls "$t/out"/*.csv | wc -l)" -eq 30
for f in "$t/out"/*.csv; do check test "$(wc -l < "$f")" -eq 21; done
check test "$(grep -c '^| m' "$t/out/table.md")" -eq 10
check test "$(grep -c 'yes (2 runs)' "$t/out/table.md")" -eq 10
# the reference is kgate_gdn.chunked unless --reference says otherwise, and its name says so
check test "$(ls "$t/out"/*_reference-chunked.csv | wc -l)" -eq 10
check test "$(grep -c '^| m.* | chunked |$' "$t/out/table.md")" -eq 10
# libgdn (fp32, chunked) and the reference (fp32, step by step) train the same model the same way
check "$py" -c "
import sys
rows = [l.split('|') for l in open('$t/out/table.md') if l.startswith('| m')]
bad = [r[1:3] for r in rows if not abs(float(r[5].strip().rstrip('%'))) < 0.5]
if bad:
    print('libgdn vs reference beyond 0.5%:', bad)
sys.exit(1 if bad or not rows else 0)"
for task in mqar markov; do
    check "$py" -c "import xml.etree.ElementTree as E; E.parse('$t/out/$task.svg')"
done
# the direct SVG writer (no gnuplot) gives a well-formed file too
"$py" "$src/gdn/train_report.py" "$t/out" --plot direct --final-window 5 > /dev/null
check "$py" -c "import xml.etree.ElementTree as E; r = E.parse('$t/out/mqar.svg').getroot(); assert len(r.findall('{http://www.w3.org/2000/svg}polyline')) == 10"
# the identity check can fail: one loss of one libgdn run one ulp off
"$py" -c "
import math
p = '$t/out/mqar_gdn_libgdn2.csv'
rows = open(p).read().split('\n')
s, l, a, ms = rows[5].split(',')
rows[5] = ','.join([s, repr(math.nextafter(float(l), math.inf)), a, ms])
open(p, 'w').write('\n'.join(rows))"
"$py" "$src/gdn/train_report.py" "$t/out" --final-window 5 > "$t/bad.log" 2>&1
check test $? -eq 1
check grep -q "| mqar | gdn .*\*\*NO\*\*" "$t/bad.log"
check grep -q "^libgdn runs bitwise identical: NOT ALL$" "$t/bad.log"
# --deadline stops a run where it is and keeps what it has
"$py" "$src/gdn/train.py" --steps 5 --members linear --tasks mqar --impls libgdn --repeat 1 --deadline 0.001 \
    --device cpu --seq 32 --batch 4 --hidden 32 --heads 2 --out "$t/dl" > "$t/dl.log" 2>&1
check test $? -eq 0
check grep -q "deadline reached, stopped after 0 steps" "$t/dl.log"
check test "$(wc -l < "$t/dl/mqar_linear_libgdn.csv")" -eq 1
# both references at once: one table row each, and the two (fp32 both) train the model alike
"$py" "$src/gdn/train.py" --steps 8 --members kda --tasks markov --impls reference --reference chunked,recurrent \
    --device cpu --seq 40 --batch 2 --hidden 32 --heads 2 --final-window 4 --out "$t/both" > "$t/both.log" 2>&1
check test $? -eq 0
check test -f "$t/both/markov_kda_reference-chunked.csv"
check test -f "$t/both/markov_kda_reference-recurrent.csv"
check grep -q '^| markov | kda .* | chunked |$' "$t/both/table.md"
check grep -q '^| markov | kda .* | recurrent |$' "$t/both/table.md"
check "$py" -c "
import csv, sys
a, b = ([float(r['loss']) for r in csv.DictReader(open('$t/both/markov_kda_reference-%s.csv' % n))]
        for n in ('chunked', 'recurrent'))
d = max(abs(x - y) / abs(y) for x, y in zip(a, b))
print('chunked vs recurrent reference, kda markov, 8 steps: worst relative loss difference %.1e' % d)
sys.exit(0 if len(a) == len(b) == 8 and d < 1e-4 else 1)"
# bad options are refused with a message
"$py" "$src/gdn/train.py" --members gdn,foo --out "$t/x" > "$t/opt.log" 2>&1
check test $? -eq 2
check grep -q "unknown member 'foo'" "$t/opt.log"
"$py" "$src/gdn/train.py" --reference chunky --out "$t/x" > "$t/opt.log" 2>&1
check test $? -eq 2
check grep -q "unknown reference 'chunky'" "$t/opt.log"
echo "$fails failed"
[ "$fails" -eq 0 ]
