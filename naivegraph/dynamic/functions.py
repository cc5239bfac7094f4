"""Module-level ops: ``ng.exp(x)``, ``ng.sum(x, dim=0)``, ``ng.cat([a, b])`` ...

Each one calls the same-named Tensor method when given a tensor.  Given a static node
(``naivegraph.static``), it builds a node instead: the method exists there too, which
is how ``ns.trace`` turns a dynamic-mode function into a static graph.  Anything else
(numbers, lists, arrays) is first converted with ``ng.tensor``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..ops import OPS
from ..ops.core import _backend_of
from .tensor import Tensor

_METHODS = [
    "exp",
    "log",
    "sqrt",
    "reciprocal",
    "sin",
    "cos",
    "tanh",
    "sigmoid",
    "relu",
    "abs",
    "neg",
    "sign",
    "sum",
    "mean",
    "max",
    "min",
    "argmax",
    "argmin",
    "reshape",
    "transpose",
    "permute",
    "t",
    "squeeze",
    "unsqueeze",
    "flatten",
    "matmul",
    "mm",
    "softmax",
    "log_softmax",
    "clamp",
    "maximum",
    "minimum",
    "pow",
    "clone",
    "detach",
]


def _as_operand(x):
    if _backend_of((x,)) is not None:
        return x
    return Tensor(
        x, dtype=np.asarray(x).dtype if not isinstance(x, (int, float, list, tuple)) else None
    )


def _method(name: str):
    def function(input, *args, **kwargs):
        return getattr(_as_operand(input), name)(*args, **kwargs)

    function.__name__ = name
    function.__qualname__ = name
    function.__doc__ = f"``ng.{name}(x, ...)`` is ``x.{name}(...)``."
    return function


globals().update({name: _method(name) for name in _METHODS})


def add(input, other):
    return _as_operand(input) + other


def sub(input, other):
    return _as_operand(input) - other


def mul(input, other):
    return _as_operand(input) * other


def div(input, other):
    return _as_operand(input) / other


def where(condition, input, other):
    """``input`` where ``condition`` holds, else ``other`` (differentiable in both)."""
    if _backend_of((condition, input, other)) is None:
        condition = Tensor(condition)
    return OPS["where"].dispatch(condition, input, other)


def addmm(input, mat1, mat2):
    """``input + mat1 @ mat2`` for matrices (``input`` broadcasts), as ``torch.addmm``."""
    return OPS["addmm"].dispatch(_as_operand(input), mat1, mat2)


def cat(tensors: Sequence, dim: int = 0):
    """Join tensors along an existing dimension."""
    _check_sequence("cat", tensors)
    return OPS["cat"].dispatch(list(tensors), dim=dim)


def stack(tensors: Sequence, dim: int = 0):
    """Join tensors along a new dimension."""
    _check_sequence("stack", tensors)
    return OPS["stack"].dispatch(list(tensors), dim=dim)


def _check_sequence(name: str, tensors) -> None:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(
            f"{name}() expects a list or tuple of tensors, got {type(tensors).__name__}"
        )
    if not tensors:
        raise RuntimeError(f"{name}(): expected a non-empty list of Tensors")


def eq(a, b):
    return OPS["eq"].dispatch(_as_operand(a), b)


def gt(a, b):
    return OPS["gt"].dispatch(_as_operand(a), b)


def lt(a, b):
    return OPS["lt"].dispatch(_as_operand(a), b)


def ge(a, b):
    return OPS["ge"].dispatch(_as_operand(a), b)


def le(a, b):
    return OPS["le"].dispatch(_as_operand(a), b)


def numel(t: Tensor) -> int:
    return t.numel()


def allclose(a, b, rtol: float = 1e-05, atol: float = 1e-08) -> bool:
    return bool(np.allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol))


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


__all__ = _METHODS + [
    "add",
    "sub",
    "mul",
    "div",
    "addmm",
    "where",
    "cat",
    "stack",
    "eq",
    "gt",
    "lt",
    "ge",
    "le",
    "numel",
    "allclose",
    "is_tensor",
]
