"""Shape helpers shared by the op table, both engines and static shape inference."""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np


def unknown_shape(shape) -> bool:
    """True for a static graph's shape whose rank (None) or some size (None) is unknown.

    >>> unknown_shape((None, 3)), unknown_shape((2, 3)), unknown_shape(None)
    (True, False, True)
    """
    return shape is None or None in shape


def same_shape(a, b) -> bool:
    """Equal shapes; two unknown sizes in the same place count as equal, as in TensorFlow 1
    (they are the batch size that flows through the graph).

    >>> same_shape((None, 3), (None, 3)), same_shape((2, 3), [2, 3]), same_shape(None, ())
    (True, True, False)
    """
    return a is not None and b is not None and tuple(a) == tuple(b)


def normalize_dims(dim, ndim: int) -> tuple[int, ...] | None:
    """``dim`` as numpy wants it: None (all axes) or a tuple of non-negative axes.

    An empty list of dims means every axis, as in torch (numpy would reduce none), and
    a dim named twice is refused, as torch does:

    >>> normalize_dims(-1, 3), normalize_dims([0, 2], 3), normalize_dims(None, 3)
    ((2,), (0, 2), None)
    >>> normalize_dims((), 2) is None
    True
    >>> normalize_dims((1, -1), 2)
    Traceback (most recent call last):
    ...
    RuntimeError: dim 1 appears multiple times in the list of dims
    """
    if dim is None:
        return None
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    if not dims:
        return None
    if ndim == 0:
        # PyTorch lets a 0-d tensor be reduced over dim 0 or -1.
        for d in dims:
            if d not in (0, -1):
                raise IndexError(
                    f"Dimension out of range (expected to be in range of [-1, 0], but got {d})"
                )
        _refuse_repeated([0] * len(dims))
        return None
    out = []
    for d in dims:
        if not -ndim <= d < ndim:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
                f"but got {d})"
            )
        out.append(int(d) % ndim)
    if len(out) > 1:
        _refuse_repeated(out)
    return tuple(out)


def _refuse_repeated(axes: list[int]) -> None:
    seen: set[int] = set()
    for axis in axes:
        if axis in seen:
            raise RuntimeError(f"dim {axis} appears multiple times in the list of dims")
        seen.add(axis)


def reduced_keepdim_shape(shape: Sequence[int], dim) -> tuple[int, ...]:
    """Shape of a reduction over ``dim`` with keepdim=True.

    >>> reduced_keepdim_shape((2, 3, 4), 1)
    (2, 1, 4)
    """
    axes = normalize_dims(dim, len(shape))
    if axes is None:
        return (1,) * len(shape)
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def broadcast_shapes(*shapes: Iterable[int]) -> tuple[int, ...]:
    """numpy's broadcast result, with an error that names every shape involved."""
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        listed = " and ".join(str(tuple(s)) for s in shapes)
        raise ValueError(
            f"shapes {listed} cannot be broadcast together: trailing dimensions must be equal or 1"
        ) from None


def sum_to(x: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """Sum a broadcast gradient back down to ``shape`` (the inverse of broadcasting).

    >>> sum_to(np.ones((2, 2)), ()).item()
    4.0
    """
    shape = tuple(shape)
    if x.shape == shape:
        return x
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and x.shape[lead + i] != 1
    )
    if axes:  # the ufunc's reduce is what x.sum calls, without its Python layer
        x = np.add.reduce(x, axis=axes, keepdims=True)
    return x.reshape(shape)


def resolve_shape(shape: Sequence[int], size: int) -> tuple[int, ...]:
    """Replace a single -1 by the size that makes the element count match.

    >>> resolve_shape((2, -1), 6)
    (2, 3)
    """
    shape = tuple(shape)
    if -1 not in shape:
        if int(np.prod(shape)) != size:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {size}")
        return shape
    known = int(np.prod([s for s in shape if s != -1]))
    if shape.count(-1) > 1 or known == 0 or size % known:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {size}")
    return tuple(size // known if s == -1 else s for s in shape)
