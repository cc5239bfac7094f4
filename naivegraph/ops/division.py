"""The op table's rounding divisions: ``x // y``, ``x % y`` and ``div(rounding_mode=)``.

torch's rules, which numpy's floor division and remainder already follow for floats (the
remainder takes the divisor's sign, ``-7 // 2`` is ``-4``): an integer divided by zero
is an error in torch, where numpy would quietly give 0.

Gradients as torch's: ``remainder``'s are ``g`` and ``-g * floor(x / y)``; a rounded
division's gradient is zero almost everywhere, and torch sends zeros (``DivBackward2``).
``floor_divide`` has no derivative in torch at all, so its result records no history
here (torch records a node that raises when backward reaches it).
"""

from __future__ import annotations

import numpy as np

from .core import OPS, defop, promote, result_type
from .table import F, divisor_partial, over

ROUNDING_MODES = (None, "trunc", "floor")


def _integer_divisor_check(x, y) -> None:
    dtype = result_type(x, y)
    if dtype is not None and dtype.kind in "biu" and np.any(np.asarray(y) == 0):
        raise RuntimeError("ZeroDivisionError")


def _floor_divide(x, y):
    _integer_divisor_check(x, y)
    if result_type(x, y) == np.bool_:
        raise RuntimeError("\"div_floor_cpu\" not implemented for 'Bool'")
    return np.floor_divide(*promote(x, y))


def _remainder(x, y):
    _integer_divisor_check(x, y)
    dtype = result_type(x, y)
    if dtype == np.bool_:
        raise RuntimeError("\"remainder_cpu\" not implemented for 'Bool'")
    x, y = promote(x, y)
    if dtype is None or dtype.kind != "f":
        return np.remainder(x, y)
    # torch's rule: fmod, moved by one divisor when the signs differ; a zero keeps the
    # dividend's sign (numpy's remainder gives it the divisor's)
    mod = np.fmod(x, y)
    moved = np.not_equal(mod, 0) & (np.less(y, 0) != np.less(mod, 0))
    return np.where(moved, mod + y, mod).astype(mod.dtype, copy=False)


def _trunc_divide(x, y):
    x, y = promote(x, y)
    if np.result_type(x).kind in "iu":
        quotient = np.floor_divide(x, y)
        # C's truncation: one more where the signs differ and the division was inexact
        inexact = np.not_equal(np.remainder(x, y), 0) & (np.less(x, 0) != np.less(y, 0))
        return np.where(inexact, quotient + 1, quotient).astype(quotient.dtype, copy=False)
    return np.trunc(np.true_divide(x, y))


def _divide_rounded(x, y, rounding_mode=None):
    if rounding_mode not in ROUNDING_MODES:
        raise RuntimeError(
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
            f"'{rounding_mode}'"
        )
    if rounding_mode is None:
        return OPS["div"].forward(x, y)
    _integer_divisor_check(x, y)
    if rounding_mode == "floor":
        return np.floor_divide(*promote(x, y))
    return _trunc_divide(x, y)


defop(
    "floor_divide",
    _floor_divide,
    elementwise=True,
    doc="``x // y``: the quotient rounded down (no gradient, as torch has none).",
)
defop(
    "remainder",
    _remainder,
    [lambda g, x, y, out: g, lambda g, x, y, out: -g * F.floor_divide(x, y)],
    saves={0: (), 1: (0, 1)},
    elementwise=True,
    doc="``x % y``: ``x - floor(x / y) * y``, with the sign of ``y`` (torch.remainder).",
)

defop(
    "remainder_scalar",
    lambda x, divisor: _remainder(x, divisor),
    [lambda g, x, out, divisor: g],
    saves=(),
    elementwise=True,
    doc="``x % divisor`` for a Python number ``divisor`` (torch's Scalar overload: one edge).",
)


def _rounded_partial(which: int):
    def partial(g, x, y, out, rounding_mode=None):
        if rounding_mode is not None:  # a step function: torch sends exact zeros
            return F.zeros_like(g)
        return over(g, y) if which == 0 else divisor_partial(g, x, y)

    return partial


defop(
    "div_rounding",
    _divide_rounded,
    [_rounded_partial(0), _rounded_partial(1)],
    saves=(0, 1),
    elementwise=True,
    doc="``x.div(y, rounding_mode=...)``: true division (None), or rounded towards zero "
    "('trunc') or down ('floor').",
)
