#!/bin/sh
# audit_order.sh: kgate audit starts the costliest pairs first (issue 15). At real sizes the
# large pairs take minutes; started in the corpus's order they were the audit's tail. Before
# the checks, the compile slots size every pair (`kgate check --estimate`: the problem's
# tensors at its nominal constants on PyTorch's meta device, nothing allocated or run):
#   - --estimate prints the same bytes the check's record later says it judged
#     (memory.tensor_bytes), and exits 3 naming the file where the meta device cannot stand in
#     (a shape read from a value);
#   - with one check slot the store's order is the start order: largest first, a pair that
#     could not be sized at the mean of the others' sizes, and the summary says how many were
#     sized;
#   - KGATE_AUDIT_ESTIMATE=0 keeps the corpus's (sorted) order;
#   - a pair whose expected host reservation (KGATE_FAKE_HOSTMEM, KGATE_HOST_PER_BYTE) or device
#     memory (KGATE_FAKE_DEVMEM, KGATE_DEV_PER_BYTE) does not fit beside the running checks is
#     passed over for a smaller one that fits, not started to wait in its slot (the order of
#     starts, from KGATE_AUDIT_TRACE).
# Tiny CPU pairs (Debian's python3-torch): ReLUs of 4, 64, 128 and 256 rows, and one whose width
# is read from a value.
set -u
t=${TMPDIR:-/tmp}/kgate-order-$$
mkdir -p "$t"
trap 'rm -rf "$t"' EXIT
. "$top_srcdir/tests/torch_python.sh"
need_torch_python
fails=0
check() { if "$@"; then :; else echo "FAIL: $*"; fails=$((fails + 1)); fi; }

# problem NAME ROWS [value]: a ReLU of ROWS x 1024 float32 (value: its width read from a tensor)
problem() {
    width=1024
    [ "${3:-}" = value ] && width='int(torch.tensor(1024).item())'
    cat > "$t/$1.py" <<PY
import torch
import torch.nn as nn
rows = $2


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(rows, $width)]


def get_init_inputs():
    return []
PY
}
problem a_small 4
problem b_large 256
problem c_mid 64
problem d_value 32 value
cp "$top_srcdir/testdata/kernelbench/candidates/ok_torch_relu.py" "$t/cand.py"
for p in a_small b_large c_mid d_value; do
    echo "{\"id\": \"$p\", \"problem\": \"$t/$p.py\", \"candidate\": \"$t/cand.py\"}"
done > "$t/corpus.jsonl"

# ---- the estimate on its own ---------------------------------------------------------------------

"$KGATE" check --ref "$t/b_large.py" "$t/cand.py" --python "$py" --estimate > "$t/est.out" 2> "$t/est.err"
check test $? -eq 0
check grep -qx '{"in_bytes": 1048576, "out_bytes": 1048576}' "$t/est.out"
"$KGATE" check --ref "$t/d_value.py" "$t/cand.py" --python "$py" --estimate > "$t/estv.out" 2> "$t/estv.err"
rc=$?
check test $rc -eq 3
check grep -q "^$t/d_value.py: no estimate: .*meta device cannot describe" "$t/estv.err"
check test ! -s "$t/estv.out"
"$KGATE" check "$t/cand.py" --estimate > /dev/null 2> "$t/estn.err"
check test $? -eq 2
check grep -q "needs --ref" "$t/estn.err"

# ---- the audit's order ---------------------------------------------------------------------------

order() { python3 -c 'import json, sys
print(" ".join(json.loads(l)["id"] for l in open(sys.argv[1])))' "$1"; }

"$KGATE" audit --jsonl "$t/corpus.jsonl" --store "$t/s1.jsonl" --jobs 1 --compile-jobs 1 --python "$py" > "$t/a1.out" 2> "$t/a1.err"
check test $? -eq 0
o=$(order "$t/s1.jsonl")
[ "$o" = "b_large d_value c_mid a_small" ] || {
    echo "FAIL: the checks ran in the order '$o', not largest first (b_large d_value c_mid a_small)"
    fails=$((fails + 1))
}
check grep -q "started the largest first: 3 of 4 pairs sized on PyTorch's meta device beforehand (kgate check --estimate), the others at their mean" "$t/a1.err"
# the estimate and the check agree on the size judged
tb=$(python3 -c 'import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["id"] == "b_large": print(int(r["memory"]["tensor_bytes"]))' "$t/s1.jsonl")
check test "$tb" = 2097152

KGATE_AUDIT_ESTIMATE=0 "$KGATE" audit --jsonl "$t/corpus.jsonl" --store "$t/s2.jsonl" --jobs 1 --compile-jobs 1 --python "$py" \
    > "$t/a2.out" 2> "$t/a2.err"
check test $? -eq 0
o=$(order "$t/s2.jsonl")
[ "$o" = "a_small b_large c_mid d_value" ] || {
    echo "FAIL: KGATE_AUDIT_ESTIMATE=0 ran '$o', not the corpus's order"
    fails=$((fails + 1))
}
check sh -c "! grep -q 'largest first' '$t/a2.err'"

# ---- passed over for memory ---------------------------------------------------------------------

# expected at 1000 (host) or 2000 (device) bytes per byte plus 2 GiB: b_large (2 MiB of tensors)
# 3.95 / 5.91 GiB, e_mid (1 MiB) 2.98 / 3.95, c_mid (0.5 MiB) 2.49 / 2.98, a_small 2.03 / 2.06
problem e_mid 128
for p in a_small b_large c_mid e_mid; do
    echo "{\"id\": \"$p\", \"problem\": \"$t/$p.py\", \"candidate\": \"$t/cand.py\"}"
done > "$t/corpus2.jsonl"
starts() { sed -n 's/^kgate audit: [0-9.]* s: start \([a-z_]*\) .*/\1/p' "$1" | tr '\n' ' ' | sed 's/ $//'; }
# the host: a ledger of 0.9 x 7000 MiB = 6.2 GiB; beside b_large only a_small fits, then e_mid
# and c_mid together
echo "7000 32000" > "$t/host"
KGATE_AUDIT_TRACE=1 KGATE_FAKE_HOSTMEM=$t/host KGATE_HOST_PER_BYTE=1000 "$KGATE" audit --jsonl "$t/corpus2.jsonl" \
    --store "$t/s3.jsonl" --jobs 2 --compile-jobs 1 --python "$py" > "$t/a3.out" 2> "$t/a3.err"
check test $? -eq 0
o=$(starts "$t/a3.err")
[ "$o" = "b_large a_small e_mid c_mid" ] || {
    echo "FAIL: host memory: started '$o', not 'b_large a_small e_mid c_mid'"
    fails=$((fails + 1))
}
check grep -q "time.* a check waited for host memory to start" "$t/a3.err"
# the device: 8.8 GiB, all free as measured, so only the expected sizes keep b_large's partner out
echo "0 9000 9000" > "$t/dev"
KGATE_AUDIT_TRACE=1 KGATE_FAKE_DEVMEM=$t/dev CUDA_VISIBLE_DEVICES=0 KGATE_DEV_PER_BYTE=1000 "$KGATE" audit \
    --jsonl "$t/corpus2.jsonl" --store "$t/s4.jsonl" --jobs 2 --compile-jobs 1 --python "$py" > "$t/a4.out" 2> "$t/a4.err"
check test $? -eq 0
o=$(starts "$t/a4.err")
[ "$o" = "b_large a_small e_mid c_mid" ] || {
    echo "FAIL: device memory: started '$o', not 'b_large a_small e_mid c_mid'"
    fails=$((fails + 1))
}
check grep -q "time.* a check waited for device memory to start" "$t/a4.err"

[ "$fails" -eq 0 ] && echo "ok: the audit sizes its pairs and starts the largest first"
exit "$fails"
