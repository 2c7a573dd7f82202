#!/bin/sh
# digest.sh: where a torch worker can, the determinism, structure, aliasing and bounds gates leave a run's outputs
# in the worker (KG_RUN_DIGEST): it answers with a 64-bit digest of each output and the count of
# its elements that kept the prefill, and only a run that differs, or an output with such an
# element, makes the gate run again with the outputs copied (to say where). So nothing is missed:
#   - the digest (torch_runner.py's digest()) changes with any one bit flipped anywhere, with
#     two elements swapped, and in the tail bytes past the last 8-byte word; equal bytes give
#     equal digests; the prefill count counts elements of any width;
#   - a candidate whose every third call changes one element by one ulp, and one whose every
#     other call swaps two elements, fail determinism as nondeterministic, having been
#     compared again with their outputs ("digests_differed"), naming the element;
#   - a candidate that writes the 0xFF prefill's bits into one element (a NaN with every bit set)
#     is counted, and the two prefilled runs then judge it written: a pass (on the CPU the worker
#     cannot make a candidate's own allocation hold the prefill, so an unwritten element is a GPU
#     test: testdata/kernelbench's uninit_output_softmax.py);
#   - aliasing's four prefilled runs and bounds' five guard fills compare digests too: a candidate
#     that reads past the end of its input fails bounds with out-of-bounds-read, found again
#     with the outputs;
#   - one whose third call only differs (once, then never again) fails determinism too: its
#     digests differed, though the runs made again with the outputs all agree;
#   - a correct candidate passes the four gates by digest and count alone;
#   - freshness's runs with the bytes of a passing run of the same case (accuracy's) take its
#     judgement instead of another comparison; a stale answer misses and fails as before.
# CPU KernelBench pairs (Debian's python3-torch).
set -u
. "$top_srcdir/tests/torch_python.sh"
need_torch_python
kb=$top_srcdir/testdata/kernelbench
t=${TMPDIR:-/tmp}/kgate-digest-$$
mkdir -p "$t"
trap 'rm -rf "$t"' EXIT
fails=0
check() { if "$@"; then :; else echo "FAIL: $*"; fails=$((fails + 1)); fi; }

# ---- the digest itself ---------------------------------------------------------------------------

"$py" - "$top_srcdir/src/runners/torch/torch_runner.py" <<'PY' || fails=$((fails + 1))
import importlib.util, sys
import torch
spec = importlib.util.spec_from_file_location("runner", sys.argv[1])
r = importlib.util.module_from_spec(spec)
spec.loader.exec_module(r)
g = torch.Generator().manual_seed(7)
bad = 0
for n in (1, 7, 8, 13, 4096, 4099, (1 << 21) + 5):
    b = torch.randint(0, 256, (n,), dtype=torch.uint8, generator=g)
    d = r.digest(torch, b)
    if r.digest(torch, b.clone()) != d:
        print("FAIL: equal bytes, different digests (n=%d)" % n); bad += 1
    for pos in sorted({0, n // 2, n - 1, max(n - 3, 0)}):
        for bit in (0, 7):
            c = b.clone()
            c[pos] ^= 1 << bit
            if r.digest(torch, c) == d:
                print("FAIL: bit %d of byte %d flipped, same digest (n=%d)" % (bit, pos, n)); bad += 1
    if n >= 16:
        c = b.clone().view(-1)[: n - n % 8]
        w = b.clone()
        words = w[: n - n % 8].view(torch.int64)
        if words[0] != words[1]:
            words[0], words[1] = words[1].clone(), words[0].clone()
            if r.digest(torch, w) == d:
                print("FAIL: two words swapped, same digest (n=%d)" % n); bad += 1
x = torch.tensor([float("nan")] * 3 + [1.0], dtype=torch.float32)
x.view(torch.int32)[:3] = -1  # 0xFFFFFFFF
if r.prefilled_count(torch, x, 0xFF) != 3 or r.prefilled_count(torch, x.to(torch.float64), 0xFF) != 0:
    print("FAIL: prefill count of f32 elements"); bad += 1
h = torch.full((5,), 0x7F7F, dtype=torch.int16)
h[2] = 0
if r.prefilled_count(torch, h, 0x7F) != 4:
    print("FAIL: prefill count of 16-bit elements"); bad += 1
if not bad:
    print("ok: digests differ for one flipped bit, two swapped words and the tail bytes; prefill counts")
sys.exit(bad)
PY

# ---- the gates -----------------------------------------------------------------------------------

candidate() {
    cat > "$t/$1.py" <<PY
import torch
import torch.nn as nn
calls = [0]


class ModelNew(nn.Module):
    def forward(self, x):
        calls[0] += 1
        y = torch.relu(x)
$2
        return y
PY
}
candidate ulp_every_third '        if calls[0] % 3 == 0:
            y[5, 7] = torch.nextafter(y[5, 7], y.new_tensor(float("inf")))'
# the third call of the first process only (a file marks it done): the runs made again with the
# outputs to show where all agree, and the differing digests are the proof
candidate once_only "        if calls[0] == 3 and not os.path.exists('$t/once.done'):
            open('$t/once.done', 'w').close()
            y[5, 7] = torch.nextafter(y[5, 7], y.new_tensor(float('inf')))"
sed -i 's/^import torch$/import os\nimport torch/' "$t/once_only.py"
candidate swap_every_other '        if calls[0] % 2 == 0:  # the largest and the smallest (a 0) swapped
            f = y.view(-1)
            i, j = int(f.argmax()), int(f.argmin())
            f[i], f[j] = f[j].clone(), f[i].clone()'
cat > "$t/nan_bits.py" <<'PY'
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        y.view(-1)[-1:].view(torch.int32).fill_(-1)  # a NaN with every bit set: the 0xFF prefill's bits
        return y
PY
# a ReLU of 16 x 1024, small and quick
sed 's/^dim = .*/dim = 1024/' "$kb/problems/relu.py" > "$t/relu.py"
gate() { # CANDIDATE GATE: the check's JSON
    "$KGATE" check --ref "$t/relu.py" "$t/$1.py" --python "$py" -g "$2" --json "$t/$1.json" \
        > "$t/$1.out" 2>&1
}
field() { # CANDIDATE EXPR
    "$py" -c 'import json, sys
g = json.load(open(sys.argv[1]))["gates"][0]
print(eval(sys.argv[2]))' "$t/$1.json" "$2"
}

gate once_only determinism
check test "$(field once_only 'g["status"], g.get("cause")')" = "('fail', 'nondeterministic')"
check grep -q "run 3's outputs had other bytes than run 1's (their digests differed)" "$t/once_only.out"
for c in ulp_every_third swap_every_other; do
    gate $c determinism
    check test "$(field $c 'g["status"], g.get("cause")')" = "('fail', 'nondeterministic')"
    check test "$(field $c 'g["evidence"].get("digests_differed"), g["evidence"]["compared"]')" = "(True, 'outputs')"
done
check grep -q 'out0\[5,7\]' "$t/ulp_every_third.out"
check grep -q 'run 1 = 0, run [0-9] = [1-9]\|run 1 = [1-9][0-9.]*, run [0-9] = 0' "$t/swap_every_other.out"

# an element written with the 0xFF prefill's bits is counted, and the two prefilled runs find it
# written (0xFF in the second too, not its 0x7F): a pass, judged from the outputs
gate nan_bits structure
check test "$(field nan_bits 'g["status"], g["evidence"]["compared"], g["evidence"].get("prefill_bits_seen")')" = \
    "('pass', 'outputs', True)"
check grep -q "structure .*pass .*all 16384 output elements written (two sentinel prefills)" "$t/nan_bits.out"

# a read past the end of the input (its guard bytes) into out0[0,0]: the bounds gate's digests of
# the 0xA5 and 0xFF guard runs differ, and the runs with the outputs name the element
cat > "$t/reads_guard.py" <<'PY'
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        y.view(-1)[0] = torch.as_strided(x, (1,), (1,), x.storage_offset() + x.numel())[0]
        return y
PY
gate reads_guard bounds
check test "$(field reads_guard 'g["status"], g.get("cause")')" = "('fail', 'out-of-bounds-read')"
check grep -q 'out0\[0,0\] changes with the bytes around the buffers' "$t/reads_guard.out"

cp "$kb/candidates/ok_torch_relu.py" "$t/ok.py"
gate ok structure,determinism,aliasing,bounds
check grep -q "structure .*pass .*no element kept the prefill, counted in the worker" "$t/ok.out"
check grep -q "determinism .*pass .*6 runs bit-identical .*compared by digest" "$t/ok.out"
check grep -q "aliasing .*pass .*compared by digest" "$t/ok.out"
check grep -q "bounds .*pass .*no output depends on bytes outside (2 shapes, 5 guard fills)" "$t/ok.out"
# freshness: its four runs have the bytes of accuracy's passing runs of the same two cases, so
# each takes that judgement by digest instead of being compared again; with KGATE_DIGEST=0, none;
# a stale answer (a cache keyed on the output's pointer) misses and is judged from its outputs
gate ok accuracy,freshness
check test "$(field ok 'json.load(open(sys.argv[1]))["gates"][1]["evidence"]["judged_by_digest"]')" = 4
KGATE_DIGEST=0 gate ok accuracy,freshness
check test "$(field ok 'json.load(open(sys.argv[1]))["gates"][1]["evidence"]["judged_by_digest"]')" = 0
cp "$kb/candidates/cache_data_ptr_gelu.py" "$t/stale.py"
sed "s/^dim = .*/dim = 1024/" "$kb/problems/gelu.py" > "$t/gelu.py"
"$KGATE" check --ref "$t/gelu.py" "$t/stale.py" --python "$py" -g accuracy,freshness --json "$t/stale.json" > "$t/stale.out" 2>&1
check grep -q "freshness .*fail .*new values in the same buffers" "$t/stale.out"

[ "$fails" -eq 0 ] && echo "ok: digested runs miss nothing: each difference is found, and a counted element is judged from the outputs"
exit "$fails"
