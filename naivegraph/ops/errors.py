"""Turning numpy's failures into errors that teach.

An op that numpy refuses fails deep inside numpy with a message about ufuncs and
gufunc signatures.  :func:`explain` turns it into what went wrong in the learner's
terms: which op, which shapes, and what would fit.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np


class ShapeError(RuntimeError, ValueError):
    """Operand shapes that do not fit an op.

    PyTorch raises RuntimeError for these and numpy ValueError; this is both, so code
    written for either catches it.
    """


def _shape(value) -> tuple | None:
    return (
        tuple(np.shape(value)) if isinstance(value, (np.ndarray, np.generic, int, float)) else None
    )


def _non_numeric(values: Sequence) -> list:
    """The operands that are not numbers (as a list: None itself may be one)."""
    return [
        value
        for value in values
        if value is None
        or isinstance(value, (str, bytes))
        or (isinstance(value, np.ndarray) and value.dtype.kind not in "biufc")
    ]


def _matmul_message(a: tuple, b: tuple) -> str:
    inner = "first" if len(b) == 1 else "second-to-last"
    if len(a) > 1 and len(b) > 1 and a[-1] == b[-2]:  # the batch dimensions, torch's words
        rank = max(len(a), len(b)) - 2  # the batch dimensions, aligned on the right
        batch_a = (1,) * (rank - len(a) + 2) + tuple(a[:-2])
        batch_b = (1,) * (rank - len(b) + 2) + tuple(b[:-2])
        for dim, (x, y) in enumerate(zip(batch_a, batch_b)):
            if x != y and 1 not in (x, y):
                return (
                    f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                    f"non-singleton dimension {dim}: the batch dimensions of {a} and {b} "
                    "(all but the last two) must broadcast"
                )
    return (
        f"mat1 and mat2 shapes cannot be multiplied ({a} and {b}): the last dimension of "
        f"the first ({a[-1]}) must equal the {inner} dimension of the second "
        f"({b[0] if len(b) == 1 else b[-2]})"
    )


def explain(
    op_name: str, elementwise: bool, inputs: Sequence, attrs: dict, error: Exception
) -> Exception:
    """A clearer exception for ``error``, raised by op ``op_name`` on ``inputs``."""
    bad = _non_numeric(inputs)
    if isinstance(error, TypeError) and bad:
        kind = (
            type(bad[0]).__name__
            if not isinstance(bad[0], np.ndarray)
            else f"array of {bad[0].dtype}"
        )
        return TypeError(
            f"{op_name}: an operand of type {kind} is not a number; tensors "
            "combine with numbers, numeric arrays and other tensors only"
        )
    if isinstance(error, np.exceptions.AxisError):
        rank = max(error.ndim or 0, 1)
        low, high = -rank, rank - 1
        return IndexError(
            f"Dimension out of range (expected to be in range of [{low}, {high}], "
            f"but got {error.axis}) in {op_name}"
        )
    if not isinstance(error, ValueError):
        return error
    shapes: list[Any] = [_shape(x) for x in inputs if _shape(x) is not None]
    if op_name == "matmul" and len(shapes) == 2:
        return ShapeError(_matmul_message(*shapes))
    if op_name == "expand":
        return ShapeError(
            f"The expanded size {tuple(attrs.get('shape', ()))} is not compatible "
            f"with the tensor's shape {shapes[0]}: only dimensions of size 1 can "
            "be expanded, and new dimensions go in front"
        )
    if elementwise and len(shapes) >= 2:
        listed = " and ".join(str(s) for s in shapes)
        return ShapeError(
            f"{op_name}: shapes {listed} cannot be broadcast together: compared "
            "from the right, each pair of dimensions must be equal or one of "
            "them 1"
        )
    return error
