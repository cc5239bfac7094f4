"""Small pieces of torch's top-level surface that learner programs use: ``torch.Size``,
``set_default_device`` and the legacy type names of ``Tensor.type()``."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .defaults import device


class Size(tuple):
    """A tensor's shape, as torch's ``torch.Size``: a tuple of ints that prints as torch
    prints it.  Slicing and adding tuples give Sizes again.  (A static graph's shapes stay
    plain tuples, with None for sizes known only when the graph runs.)

    >>> import naivegraph as ng
    >>> ng.ones(4, 2).shape, ng.ones(4, 2).shape == (4, 2), ng.ones(4, 2).size()[1:]
    (torch.Size([4, 2]), True, torch.Size([2]))
    """

    __slots__ = ()

    def __new__(cls, sizes: Any = ()) -> "Size":
        return tuple.__new__(cls, (builtins.int(s) for s in sizes))

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    __str__ = __repr__

    def __getitem__(self, index):
        got = tuple.__getitem__(self, index)
        return Size(got) if isinstance(index, slice) else got

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def numel(self) -> builtins.int:
        """How many elements a tensor of this shape holds."""
        return builtins.int(np.prod(self, dtype=np.int64))


class _DefaultDevice:
    value = device("cpu")


def set_default_device(device_: Any) -> None:
    """Where new tensors go, as ``torch.set_default_device``: naivegraph has the CPU only,
    so ``'cpu'`` (or None) is accepted and any other device is refused.

    >>> import naivegraph as ng
    >>> ng.set_default_device("cpu"); ng.get_default_device()
    device(type='cpu')
    """
    if device_ is None:
        return
    found = device(device_) if not isinstance(device_, device) else device_
    if found.type != "cpu":
        raise RuntimeError(
            f"naivegraph runs on the CPU only, so it cannot make {str(found)!r} the default "
            "device; leave the default ('cpu') or call set_default_device('cpu')"
        )


def get_default_device() -> device:
    """``device(type='cpu')``: the only device naivegraph has."""
    return _DefaultDevice.value


#: numpy dtype name -> torch's legacy tensor type name (``x.type()``)
LEGACY_TYPES = {
    "float32": "torch.FloatTensor",
    "float64": "torch.DoubleTensor",
    "float16": "torch.HalfTensor",
    "int64": "torch.LongTensor",
    "int32": "torch.IntTensor",
    "int16": "torch.ShortTensor",
    "int8": "torch.CharTensor",
    "uint8": "torch.ByteTensor",
    "bool": "torch.BoolTensor",
    "complex64": "torch.ComplexFloatTensor",
    "complex128": "torch.ComplexDoubleTensor",
}


def dtype_of_type(dtype: Any) -> np.dtype:
    """The dtype named by ``Tensor.type``'s argument: a dtype, a legacy type name such as
    ``'torch.DoubleTensor'``, or a legacy type such as ``ng.DoubleTensor``."""
    if isinstance(dtype, str):
        for name, legacy in LEGACY_TYPES.items():
            if dtype == legacy:
                return np.dtype(name)
        raise ValueError(f"invalid type: '{dtype}'")
    if isinstance(dtype, type) and isinstance(getattr(dtype, "dtype", None), np.dtype):
        return dtype.dtype  # ng.DoubleTensor and the other legacy types
    return np.dtype(dtype)
