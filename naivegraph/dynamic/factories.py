"""Creating tensors: ``ng.tensor``, ``ng.ones``, ``ng.randn``, ... as in PyTorch."""

from __future__ import annotations

import builtins
import threading
from typing import Any

import numpy as np

from .tensor import Tensor, _as_array, _shape_arg

float32, float64, float16 = np.float32, np.float64, np.float16
int64, int32, int8, uint8 = np.int64, np.int32, np.int8, np.uint8
bool_ = np.bool_
float = float32  # noqa: A001  (torch.float is float32, as x.float(); torch.double float64)
double = float64
long = int64


class _Random(threading.local):
    generator = np.random.default_rng()


_random = _Random()


def manual_seed(seed: int) -> None:
    """Make ``rand``/``randn``/``nn.Linear`` initialisation repeatable (per thread)."""
    _random.generator = np.random.default_rng(seed)


def _finish(array: np.ndarray, requires_grad: bool) -> Tensor:
    t = Tensor._make(array, False, None, 0)
    if requires_grad:
        t.requires_grad = True
    return t


def tensor(data: Any, requires_grad: bool = False, dtype=None) -> Tensor:
    """A new leaf tensor holding a copy of ``data``.

    Python floats become float64; numpy arrays keep their dtype (float32 stays float32).

    >>> import naivegraph as ng
    >>> ng.tensor([1.0, 2.0], requires_grad=True)
    tensor([1., 2.], requires_grad=True)
    """
    # Not Tensor(data): the legacy constructor turns integer lists into floats, while
    # torch.tensor keeps the inferred dtype (int64 for ints, bool for booleans).
    return _finish(_as_array(data, dtype), requires_grad)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor that shares memory with ``array``."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    return Tensor._make(array, False, None, 0)


def _filled(fill, shape, dtype, requires_grad) -> Tensor:
    return _finish(np.full(_shape_arg(shape), fill, dtype=dtype or np.float64), requires_grad)


def _fill_dtype(fill_value) -> np.dtype | None:
    """The dtype torch infers from ``full``'s fill: bool, int64, float64 (naivegraph's
    default float) or complex128; None for a value to be checked by numpy.  (This
    module's ``float`` is the dtype alias, so the Python types come from builtins.)"""
    for kind, dtype in ((builtins.bool, np.bool_), (builtins.int, np.int64),
                        (builtins.float, np.float64), (builtins.complex, np.complex128)):
        if isinstance(fill_value, kind) or isinstance(fill_value, np.generic) and np.dtype(
                type(fill_value)).kind == np.dtype(dtype).kind:
            return np.dtype(dtype)
    return None


def ones(*shape, dtype=None, requires_grad: bool = False) -> Tensor:
    """All ones; ``ng.ones(2, 3)`` and ``ng.ones([2, 3])`` both work."""
    return _filled(1, shape, dtype, requires_grad)


def zeros(*shape, dtype=None, requires_grad: bool = False) -> Tensor:
    """All zeros."""
    return _filled(0, shape, dtype, requires_grad)


def full(shape, fill_value, dtype=None, requires_grad: bool = False) -> Tensor:
    """Every element equal to ``fill_value``; the dtype follows the fill, as in torch.

    >>> import naivegraph as ng
    >>> ng.full((2,), True), ng.full((2,), 3), ng.full((2,), 0.5)
    (tensor([True, True]), tensor([3, 3]), tensor([0.5000, 0.5000]))
    """
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if dtype is None:
        dtype = _fill_dtype(fill_value)
    return _filled(fill_value, (shape,), dtype, requires_grad)


def empty(*shape, dtype=None, requires_grad: bool = False) -> Tensor:
    return zeros(*shape, dtype=dtype, requires_grad=requires_grad)


def rand(*shape, dtype=None, requires_grad: bool = False) -> Tensor:
    """Uniform on [0, 1)."""
    data = _random.generator.random(_shape_arg(shape)).astype(dtype or np.float64)
    return _finish(data, requires_grad)


def randn(*shape, dtype=None, requires_grad: bool = False) -> Tensor:
    """Standard normal."""
    data = _random.generator.standard_normal(_shape_arg(shape)).astype(dtype or np.float64)
    return _finish(data, requires_grad)


def randint(low: int, high: int, size, dtype=None) -> Tensor:
    return _finish(_random.generator.integers(low, high, _shape_arg((size,))).astype(dtype or np.int64), False)


def arange(start, end=None, step=1, dtype=None, requires_grad: bool = False) -> Tensor:
    """Evenly spaced values in [start, end); integer arguments give int64."""
    if end is None:
        start, end = 0, start
    return _finish(np.arange(start, end, step, dtype=dtype), requires_grad)


def linspace(start, end, steps: int, dtype=None, requires_grad: bool = False) -> Tensor:
    return _finish(np.linspace(start, end, steps, dtype=dtype or np.float64), requires_grad)


def eye(n: int, m: int | None = None, dtype=None, requires_grad: bool = False) -> Tensor:
    return _finish(np.eye(n, m, dtype=dtype or np.float64), requires_grad)


def _like(maker):
    def like(t: Tensor, dtype=None, requires_grad: bool = False) -> Tensor:
        return maker(t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad)
    like.__name__ = maker.__name__ + "_like"
    like.__doc__ = f"Like ``{maker.__name__}`` with the shape (and dtype) of ``t``."
    return like


ones_like = _like(ones)
zeros_like = _like(zeros)
rand_like = _like(rand)
randn_like = _like(randn)


def full_like(t: Tensor, fill_value, dtype=None, requires_grad: bool = False) -> Tensor:
    return full(t.shape, fill_value, dtype=dtype or t.dtype, requires_grad=requires_grad)
