# torch_python.sh, sourced by the tests that run the torch runner (not a test itself):
# torch_python sets py to the first of $KGATE_PYTHON, python3 and /usr/bin/python3 that imports
# torch (empty, and false, when none does); need_torch_python skips the test without one (77),
# need_cuda_torch also without a CUDA device for that torch (77).
torch_python() {
    py=""
    for p in "${KGATE_PYTHON:-}" python3 /usr/bin/python3; do
        [ -n "$p" ] && "$p" -c "import torch" > /dev/null 2>&1 && {
            py=$p
            return 0
        }
    done
    return 1
}

need_torch_python() {
    torch_python || {
        echo "SKIP: no python3 with torch (Debian: python3-torch)"
        exit 77
    }
}

need_cuda_torch() {
    need_torch_python
    "$py" -c "import torch,sys; sys.exit(not torch.cuda.is_available())" || {
        echo "SKIP: no CUDA device for torch"
        exit 77
    }
}
