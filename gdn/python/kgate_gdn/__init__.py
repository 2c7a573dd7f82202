"""kgate_gdn: libgdn (gdn/libgdn.h) from PyTorch, as a drop-in for flash-linear-attention's
chunk_* calls. Import with PYTHONPATH=gdn/python after `make`; see gdn/README.md ("PyTorch").

    from kgate_gdn import chunk_gated_delta_rule
    o, final_state = chunk_gated_delta_rule(q, k, v, g, beta, initial_state=S0, output_final_state=True)

CUDA tensors run libgdn.so's kernels (sm_90a) on the current stream, the chunk-parallel ones where
they take the call (set_kernels(), KGATE_GDN_KERNELS); CPU tensors run the host chunked algorithm
(libgdn_host.so), the same stages in float32 or float64.
"""

from .ops import (  # noqa: F401
    FUNCTIONS,
    MEMBERS,
    GatedDeltaRuleFunction,
    GLAFunction,
    KDAFunction,
    LinearAttnFunction,
    SimpleGLAFunction,
    chunk_gated_delta_rule,
    chunk_gla,
    chunk_kda,
    chunk_linear_attn,
    chunk_simple_gla,
    kernels,
    set_kernels,
)
from .reference import chunked, oracle, recurrent  # noqa: F401

# kgate's member names -> the FLA call (with the arguments each takes, for generic callers)
FLA_CALLS = {
    "linear": chunk_linear_attn,
    "gla": chunk_gla,
    "ssd": chunk_simple_gla,
    "gdn": chunk_gated_delta_rule,
    "kda": chunk_kda,
}


def call(member, q, k, v, g=None, beta=None, scale=None, initial_state=None, output_final_state=False):
    """One signature for every member (g / beta ignored where the member has none); linear
    attention without FLA's normalisation."""
    if member == "linear":
        return chunk_linear_attn(q, k, v, scale=scale, initial_state=initial_state,
                                 output_final_state=output_final_state, normalize=False)
    if member == "gla":
        return chunk_gla(q, k, v, g, scale=scale, initial_state=initial_state, output_final_state=output_final_state)
    if member == "ssd":
        return chunk_simple_gla(q, k, v, g, scale=scale, initial_state=initial_state,
                                output_final_state=output_final_state)
    return FLA_CALLS[member](q, k, v, g, beta, scale=scale, initial_state=initial_state,
                             output_final_state=output_final_state)


__all__ = ["chunk_gated_delta_rule", "chunk_kda", "chunk_gla", "chunk_simple_gla", "chunk_linear_attn", "call",
           "oracle", "recurrent", "chunked", "MEMBERS", "FUNCTIONS", "FLA_CALLS", "kernels", "set_kernels"]
