#!/bin/sh
# lean_case.sh: precision and reduction-order judge along rows, so a nominal case over the
# per-case budget runs with its batch halved until it fits (kg_lean_case). With the budget
# lowered (KGATE_CASE_ELEMS) below KernelBench's softmax (16 x 8192, in and out):
# - a correct softmax passes both at a smaller batch, and the verdicts say which; accuracy's
#   seeds 2 and 3 run there too (its first seed stays at the nominal shape), and nonfinite's second;
# - a softmax without the max subtraction still fails precision, with the same cause, there;
# - a softmax right only at the nominal batch (zeros at any other) is the shapes gate's finding:
#   both gates run at the nominal shape and pass, and shapes fails;
# - a candidate that refuses other batches (raises) is judged at the nominal shape too;
# - aliasing's prefilled runs and freshness's four run there too: a correct softmax passes both
#   at the smaller batch, one that caches by pointer fails freshness there, and one that uses its
#   input as scratch at the nominal batch only fails aliasing (its inputs are checked in one run at
#   the nominal size);
# - within the budget (the default), nothing changes: the nominal shape;
# - host C contracts whose weights or second operand lack the batch still shrink it.
set -u
. "$top_srcdir/tests/torch_python.sh"
need_torch_python
kb=$top_srcdir/testdata/kernelbench
t=${TMPDIR:-/tmp}/kgate-lean-$$
mkdir -p "$t"
trap 'rm -rf "$t"' EXIT
fails=0
fail() { echo "FAIL: $1"; cat "$2"; fails=$((fails + 1)); }
cat > "$t/only16.py" <<'PY'
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x):
        if x.shape[0] != 16:
            return torch.zeros_like(x)  # a batch size written into the kernel
        return torch.softmax(x, dim=1)
PY
sed 's/return torch.zeros_like(x).*/raise ValueError("batch of 16 only")/' "$t/only16.py" > "$t/refuses.py"
cat > "$t/byptr.py" <<'PY'
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.ptr, self.out = None, None

    def forward(self, x):
        if x.data_ptr() != self.ptr:  # a cache keyed on the input's address
            self.ptr, self.out = x.data_ptr(), torch.softmax(x, dim=1)
        return self.out
PY
cat > "$t/scratch16.py" <<'PY'
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x):
        if x.shape[0] == 16:  # the input as scratch, at the nominal batch only: the same softmax
            x.sub_(x.amax(dim=1, keepdim=True))
        return torch.softmax(x, dim=1)
PY

# run NAME CANDIDATE GATES [ENV...]: check the candidate against softmax.py into $t/NAME.{txt,json}
run() {
    name=$1 cand=$2 gates=$3
    shift 3
    env "$@" "$KGATE" check --ref "$kb/problems/softmax.py" "$cand" --python "$py" --gates "$gates" --no-color \
        --json "$t/$name.json" > "$t/$name.txt" 2>&1
    echo "rc $?" >> "$t/$name.txt"
}
# batch NAME GATE: the batch_size of GATE's first case in $t/NAME.json ("-" when it has none)
batch() {
    "$py" - "$t/$1.json" "$2" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
g = [g for g in d["gates"] if g["id"] == sys.argv[2]][0]
cases = (g.get("evidence") or {}).get("cases") or []
m = re.search(r"batch_size=(\d+)", json.dumps(cases[0]) if cases else "")
print(m.group(1) if m else "-")
PY
}
small="KGATE_CASE_ELEMS=32768"

run ok "$kb/candidates/ok_torch_softmax.py" accuracy,precision,reduction-order,nonfinite $small
if grep -q "^  precision *pass.*at batch_size=2 (nominal 16)" "$t/ok.txt" &&
    grep -q "^  nonfinite *pass.*2 seeds, the second at batch_size=2 (nominal 16)" "$t/ok.txt" &&
    grep -q "^  reduction-order *pass.*at batch_size=2 (nominal 16)" "$t/ok.txt" &&
    grep -q "^  accuracy *pass.*3 seeds, f32; seeds 2-3 at batch_size=2 (nominal 16)" "$t/ok.txt"; then
    echo "ok: a correct softmax passes both gates at batch_size=2, and accuracy's seeds 2-3 and nonfinite's 2nd run there"
else
    fail "ok_torch_softmax at a small budget" "$t/ok.txt"
fi
[ "$(batch ok precision)" = 2 ] || fail "the JSON's precision case is not at batch_size=2 ($(batch ok precision))" "$t/ok.txt"

run nomax "$kb/candidates/no_max_softmax.py" precision $small
cause=$(sed -n 's/^# expect: fail precision *//p' "$kb/candidates/no_max_softmax.py")
if grep -q "^  precision *fail.*at batch_size=2 (nominal 16)" "$t/nomax.txt" && grep -q "cause: *$cause" "$t/nomax.txt"; then
    echo "ok: a softmax without the max subtraction fails precision at batch_size=2 ($cause)"
else
    fail "no_max_softmax at a small budget (cause $cause)" "$t/nomax.txt"
fi

run okaf "$kb/candidates/ok_torch_softmax.py" aliasing,freshness $small
if grep -q "^  aliasing *pass.*at batch_size=2 (nominal 16)" "$t/okaf.txt" &&
    grep -q "^  freshness *pass.*at batch_size=2 (nominal 16)" "$t/okaf.txt"; then
    echo "ok: a correct softmax passes aliasing and freshness at batch_size=2"
else
    fail "ok_torch_softmax: aliasing and freshness at a small budget" "$t/okaf.txt"
fi
run byptr "$t/byptr.py" freshness $small
if grep -q "^  freshness *fail" "$t/byptr.txt" && grep -q "cause: *stale-result" "$t/byptr.txt" &&
    grep -q "batch_size=2" "$t/byptr.txt"; then
    echo "ok: a softmax cached by pointer fails freshness at batch_size=2 (stale-result)"
else
    fail "byptr: a pointer-keyed cache at a small budget" "$t/byptr.txt"
fi
run scratch16 "$t/scratch16.py" aliasing $small
if grep -q "^  aliasing *fail" "$t/scratch16.txt" && grep -q "cause: *input-mutated" "$t/scratch16.txt"; then
    echo "ok: an input used as scratch at the nominal batch only fails aliasing (input-mutated)"
else
    fail "scratch16: input scratch at the nominal batch, small budget" "$t/scratch16.txt"
fi

run only16 "$t/only16.py" accuracy,shapes,precision,reduction-order,nonfinite $small
if grep -q "^  precision *pass" "$t/only16.txt" && grep -q "^  reduction-order *pass" "$t/only16.txt" &&
    grep -q "^  accuracy *pass.*3 seeds, f32$" "$t/only16.txt" && grep -q "^  nonfinite *pass.*2 seeds$" "$t/only16.txt" &&
    ! grep -q "^  [a-z-]* *pass.*at batch_size=" "$t/only16.txt" && grep -q "^  shapes *fail" "$t/only16.txt" &&
    [ "$(batch only16 precision)" = 16 ]; then
    echo "ok: a kernel wrong at other batches: shapes fails; precision and reduction-order pass at the nominal shape"
else
    fail "only16: a shape defect must stay the shapes gate's" "$t/only16.txt"
fi

run refuses "$t/refuses.py" precision,reduction-order $small
if grep -q "^  precision *pass" "$t/refuses.txt" && grep -q "^  reduction-order *pass" "$t/refuses.txt" &&
    ! grep -q "at batch_size=" "$t/refuses.txt" && [ "$(batch refuses precision)" = 16 ]; then
    echo "ok: a kernel refusing other batches is judged at the nominal shape"
else
    fail "refuses: a refusal is not a finding of these gates" "$t/refuses.txt"
fi

run default "$kb/candidates/ok_torch_softmax.py" precision,reduction-order
if grep -q "^  precision *pass" "$t/default.txt" && ! grep -q "at batch_size=" "$t/default.txt" &&
    [ "$(batch default precision)" = 16 ]; then
    echo "ok: within the default budget the nominal shape"
else
    fail "ok_torch_softmax at the default budget" "$t/default.txt"
fi
# host C contracts: the batch is M, though the weights (w[N], b[N]) and a matmul's B[K,N] lack it
for f in ok/layernorm bugs/layernorm_one_pass_variance ok/matmul; do
    env KGATE_CASE_ELEMS=8192 "$KGATE" check "$top_srcdir/testdata/$f.c" --gates precision --no-color \
        > "$t/c.txt" 2>&1
    case $f in
    bugs/*)
        cause=$(sed -n 's|^// expect: fail precision *||p' "$top_srcdir/testdata/$f.c")
        grep -q "^  precision *fail.*at M=4 (nominal 64)" "$t/c.txt" && grep -q "cause: *$cause" "$t/c.txt" ||
            fail "$f: must fail precision at M=4 with cause $cause" "$t/c.txt"
        ;;
    *) grep -q "^  precision *pass.*at M=[0-9]* (nominal 128)" "$t/c.txt" || fail "$f: must pass at a smaller M" "$t/c.txt" ;;
    esac
done
[ $fails -eq 0 ] && echo "ok: host C contracts at a smaller M (weights and B without it)"
[ $fails -eq 0 ] && echo "PASS" && exit 0
exit 1
