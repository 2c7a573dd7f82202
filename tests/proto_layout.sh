#!/bin/sh
# proto_layout.sh: the torch runner's ctypes mirror of the protocol structs has exactly the C
# compiler's sizes and offsets (a mismatch would silently scramble every request).
py=${KGATE_PYTHON:-python3}
command -v "$py" >/dev/null 2>&1 || { echo "SKIP: no $py"; exit 77; }
c=$("$KGATE" __layout) || { echo "FAIL: kgate __layout"; exit 1; }
p=$("$py" "$top_srcdir/src/runners/torch/torch_runner.py" --layout) || { echo "FAIL: torch_runner.py --layout"; exit 1; }
echo "C:      $c"
echo "Python: $p"
[ "$c" = "$p" ] || { echo "FAIL: layouts differ"; exit 1; }
echo "PASS"
