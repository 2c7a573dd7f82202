#!/bin/sh
# format.sh: the C, C++ and CUDA sources are formatted as .clang-format says. Fails naming each
# file clang-format would change (run `sh tests/format.sh --fix` to format them); skips where
# clang-format is missing or not the pinned major version, which formats differently.
# testdata/ (fixtures, contract headers; also their copies in the fuzzer's corpus) and the NVRTC
# stand-in headers (their bytes are the cache key) are never formatted.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
pinned=14
cf=${CLANG_FORMAT:-clang-format}
command -v "$cf" >/dev/null 2>&1 || { echo "SKIP: no clang-format"; exit 77; }
major=$("$cf" --version | sed -n 's/.*version \([0-9]*\).*/\1/p')
[ "$major" = "$pinned" ] || { echo "SKIP: clang-format $major, the style is pinned to $pinned"; exit 77; }
cd "$top" || exit 1
files=$(find src gates tui probes gdn tests/unit tests/gpu tests/fuzz -type f \
    \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name '*.cc' \) \
    ! -path 'src/runners/cuda/nvrtc/*' ! -path 'tests/fuzz/corpus/*' ! -path 'tui/labgen/*' | sort)
# generated sources in an in-tree build are not the project's
files=$(for f in $files; do case $f in src/base/kgate_h.c|src/contract/builtins.c|src/engine/torch_runner_py.c| \
    src/runners/cuda/nvrtc_headers.c|src/runners/cuda/spin_ptx.c|tui/lab_files.c) ;; *) echo "$f" ;; esac; done)
if [ "${1:-}" = --fix ]; then
    "$cf" -i $files
    exit 0
fi
bad=
for f in $files; do
    "$cf" "$f" | cmp -s - "$f" || bad="$bad $f"
done
if [ -n "$bad" ]; then
    echo "FAIL: not formatted as .clang-format says (sh tests/format.sh --fix):"
    for f in $bad; do echo "  $f"; done
    exit 1
fi
echo "PASS: $(echo "$files" | wc -l) files formatted (clang-format $major)"
