# kgate-problem: problems/scale.py
# expect: fail structure structure
# baseline: pass
# runs-on: cpu
# why: forward returns a torch.Tensor subclass over an uninitialised buffer whose values are computed in __torch_function__ on first use (shape check, allclose, copy, data_ptr...), so the call itself does no work (the lazy-result trick used to move compute out of a timed region); KernelBench's shape check and allclose both trigger the computation and pass, a gate must insist on a plain torch.Tensor whose storage is written when the call returns.
import torch
import torch.nn as nn

_no_torch_function = getattr(torch._C, "DisableTorchFunctionSubclass", None) or torch._C.DisableTorchFunction


class _Deferred(torch.Tensor):
    """A tensor whose contents are produced the first time anything looks at it."""

    @staticmethod
    def __new__(cls, like, thunk):
        with _no_torch_function():
            t = torch.empty_like(like).as_subclass(cls)
        t._thunk = thunk
        return t

    def _force(self):
        thunk = self.__dict__.pop("_thunk", None)
        if thunk is not None:
            with _no_torch_function():
                torch.Tensor.copy_(self, thunk())

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}

        def force(a):
            if isinstance(a, _Deferred):
                a._force()
            elif isinstance(a, (list, tuple)):
                for b in a:
                    force(b)

        force(args)
        force(tuple(kwargs.values()))
        with _no_torch_function():
            return func(*args, **kwargs)


class ModelNew(nn.Module):
    """Scale by a constant; the multiply is deferred until the result is consumed."""

    def __init__(self, scale_factor: float):
        super(ModelNew, self).__init__()
        self.scale_factor = scale_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = self.scale_factor
        return _Deferred(x, lambda: torch.mul(x, s))
