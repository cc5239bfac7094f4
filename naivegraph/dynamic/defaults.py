"""Where tensors live and what Python floats become: ``ng.device``, ``ng.cuda``, and the
default dtype (``get_default_dtype`` / ``set_default_dtype``).

Below the Tensor class: a tensor reads its device from here.  The default dtype itself
is kept in :mod:`naivegraph.ops.core`, where static mode reads it too.
"""

from __future__ import annotations

import builtins

import numpy as np

from ..ops.core import default_float, set_default_float

# torch's device types: a known one that is not the CPU gets "runs on the CPU only" when
# used, an unknown word gets torch's "Expected one of ..." at once.
_DEVICE_TYPES = ("cpu", "cuda", "mps", "xpu", "meta", "hip", "xla", "ipu", "hpu", "mtia")


class device:
    """A device name as in ``torch.device``: ``ng.device("cpu")``, ``ng.device("cuda", 0)``.

    naivegraph computes with numpy on the CPU, so tensors live on ``device(type='cpu')``;
    naming another device is allowed (``ng.device("cuda")``), using it raises RuntimeError.

    >>> import naivegraph as ng
    >>> ng.device("cpu"), ng.ones(2).device == ng.device("cpu")
    (device(type='cpu'), True)
    """

    __slots__ = ("type", "index")

    def __init__(self, type: "str | device", index: int | None = None) -> None:
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index
        if not isinstance(type, str):
            raise TypeError(
                f"device() expected a string such as 'cpu' or 'cuda:0', got {_type_name(type)}"
            )
        name, _, number = type.partition(":")
        if name not in _DEVICE_TYPES:
            raise RuntimeError(
                f"Expected one of {', '.join(_DEVICE_TYPES)} device type at "
                f"start of device string: {type}"
            )
        if number:
            if index is not None or not number.isdigit():
                raise RuntimeError(
                    f"Invalid device string: '{type}': write 'cpu' or "
                    "'cuda:0' (a type, then an optional index)"
                )
            index = builtins.int(number)
        object.__setattr__(self, "type", name)
        object.__setattr__(self, "index", index)

    def __setattr__(self, name: str, value) -> None:
        raise AttributeError(f"device.{name} is read-only: make a new ng.device(...) instead")

    def __repr__(self) -> str:
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> builtins.bool:
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> builtins.int:
        return hash((self.type, self.index))


def _type_name(value) -> str:
    return type(value).__name__


class _Cuda:
    """``ng.cuda``: there is no GPU in naivegraph, so code written for one takes the CPU path.

    >>> import naivegraph as ng
    >>> ng.cuda.is_available(), ng.cuda.device_count()
    (False, 0)
    """

    @staticmethod
    def is_available() -> builtins.bool:
        return False

    @staticmethod
    def device_count() -> builtins.int:
        return 0

    @staticmethod
    def manual_seed(seed: builtins.int) -> None:
        """Accepted and ignored, as torch does without a GPU (seed with ``ng.manual_seed``)."""

    manual_seed_all = manual_seed


cuda = _Cuda()


def get_default_dtype() -> np.dtype:
    """The dtype that Python floats become: float32, as in torch, unless
    ``set_default_dtype`` changed it.  numpy arrays keep their own dtype
    (``ng.from_numpy(np.ones(2))`` is float64), and static mode uses the same default.

    float32 is what real programs feed their models (``.float()``, float32 numpy data);
    where exactness matters, ask for float64 as torch code does: gradcheck needs float64
    inputs (``ng.randn(3, dtype=ng.float64)``), and finite differences in float32 have
    only about three good digits.

    >>> import naivegraph as ng
    >>> ng.get_default_dtype(), ng.tensor(2.0).dtype, ng.tensor([1, 2]).dtype
    (dtype('float32'), dtype('float32'), dtype('int64'))
    """
    return default_float()


def set_default_dtype(d) -> None:
    """Make Python floats (``ng.tensor([1.5])``, ``ng.ones(2)``, ``ng.arange(3.)``, ...)
    become ``d``, a floating dtype, as ``torch.set_default_dtype`` does; in static mode
    too.  Mixing an integer tensor with a Python float gives ``d`` as well.

    >>> import naivegraph as ng
    >>> ng.set_default_dtype(ng.float64); ng.tensor([1.5]).dtype, (ng.tensor([1]) / 2).dtype
    (dtype('float64'), dtype('float64'))
    >>> ng.set_default_dtype(ng.float32)
    """
    try:
        found = np.dtype(d)
    except TypeError:
        found = None
    if d is None or d is builtins.float or found is None or found.kind != "f":
        raise TypeError(
            f"invalid dtype object: only floating-point types are supported as "
            f"the default type (got {d!r}); pass ng.float32 or ng.float64"
        )
    set_default_float(found)
