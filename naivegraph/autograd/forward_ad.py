"""``ng.autograd.forward_ad``: forward-mode AD with PyTorch's API.

Inside a dual level, a *dual tensor* (``make_dual(primal, tangent)``) carries a tangent
through every op; ``unpack_dual`` reads the output's tangent, the Jacobian-vector
product ``J @ tangent``, in the same forward pass.  Each op's JVP is derived from the op
table (:mod:`naivegraph.ops.forward`), not written a second time.

>>> import naivegraph as ng
>>> import naivegraph.autograd.forward_ad as fwAD
>>> with fwAD.dual_level():
...     x = fwAD.make_dual(ng.tensor([0.0, 1.0]), ng.tensor([1.0, 1.0]))
...     y = (x * x).sin()
...     fwAD.unpack_dual(y).tangent
tensor([0.0000, 1.0806])

Tangents are dropped when the level ends; a dual tensor may also require grad (forward
and reverse mode together).  One level at a time, as in PyTorch.
"""

from __future__ import annotations

from typing import NamedTuple

from ..dynamic import forward as _forward
from ..dynamic.tensor import Tensor

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level"]
__all__ += ["make_dual", "unpack_dual"]


class UnpackedDualTensor(NamedTuple):
    """What :func:`unpack_dual` returns: the primal and its tangent (None if none)."""

    primal: Tensor
    tangent: Tensor | None


def enter_dual_level() -> int:
    """Start a dual level and return it (prefer ``with dual_level():``).

    >>> level = enter_dual_level()
    >>> level
    0
    >>> exit_dual_level(level=level)
    """
    return _forward.enter_level()


def exit_dual_level(*, level: int | None = None) -> None:
    """End the dual level ``level`` (default: the active one); its tangents are dropped."""
    _forward.exit_level(level)


class dual_level:  # lower case, as torch: used like a function
    """Context manager for a dual level; yields the level's number.

    >>> import naivegraph as ng
    >>> with dual_level() as level:
    ...     x = make_dual(ng.tensor(2.0), ng.tensor(1.0))
    ...     level, unpack_dual(x ** 3).tangent
    (0, tensor(12.))
    >>> unpack_dual(x).tangent is None  # the level ended: tangents are gone
    True
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: object) -> None:
        exit_dual_level()


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` that carries ``tangent`` in the active dual level.

    >>> import naivegraph as ng
    >>> make_dual(ng.tensor(1.0), ng.tensor(1.0))
    Traceback (most recent call last):
    ...
    RuntimeError: Trying to create a dual Tensor for forward AD but no level exists, ...
    """
    for name, value in (("primal", tensor), ("tangent", tangent)):
        if not isinstance(value, Tensor):
            raise TypeError(
                f"make_dual(): the {name} must be a Tensor, not {type(value).__name__}; "
                "wrap numbers with ng.tensor(...)"
            )
    if _forward.dual.level is None:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure "
            "to enter_dual_level() first."
        )
    for name, value in (("primal", tensor), ("tangent", tangent)):
        if value.dtype.kind != "f":
            raise ValueError(
                f"Expected {name} to be floating point or complex, but got: {value.dtype} "
                "(naivegraph's forward mode is real-valued; convert with .double() first)"
            )
    if level is not None and level != _forward.dual.level:
        raise RuntimeError(
            f"Invalid level given to make_dual: the active dual level is {_forward.dual.level}"
        )
    if tuple(tensor.shape) != tuple(tangent.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            "original Tensor, this is not supported. Tensor is of size "
            f"{list(tensor.shape)} while the given forward gradient is of size "
            f"{list(tangent.shape)}."
        )
    if _forward.tangent_of(tensor) is not None:
        raise RuntimeError(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at "
            f"the same level {_forward.dual.level} is not supported."
        )
    return _forward.dual_of(tensor, tangent)


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor``; the tangent is None outside a dual level or
    for a tensor that carries none.

    >>> import naivegraph as ng
    >>> unpack_dual(ng.tensor(1.0))
    UnpackedDualTensor(primal=tensor(1.), tangent=None)
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(
            f"unpack_dual(): argument 'dual' (position 1) must be Tensor, not "
            f"{type(tensor).__name__}"
        )
    return UnpackedDualTensor(_forward.alias(tensor), _forward.tangent_of(tensor))
