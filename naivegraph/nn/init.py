"""``nn.init``: fill a parameter in place, as ``torch.nn.init`` does.

Every function writes under ``no_grad`` (so it works on leaves that require grad, and
records no history), bumps the tensor's version like any in-place write, and returns the
tensor itself.  Random draws come from ``ng.manual_seed``'s generator.
"""

from __future__ import annotations

import math

import numpy as np

from ..dynamic.factories import _random
from ..dynamic.grad_mode import no_grad
from ..dynamic.tensor import Tensor

_LINEAR = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "sigmoid",
)


def _check_tensor(tensor) -> None:
    if not isinstance(tensor, Tensor):
        raise TypeError(
            f"nn.init fills a Tensor in place, got {type(tensor).__name__}: pass "
            "a parameter such as layer.weight"
        )


def _fill(tensor: Tensor, make) -> Tensor:
    """Write ``make(shape)`` into ``tensor`` in place, without recording history."""
    _check_tensor(tensor)
    values = np.asarray(make(tensor.shape), dtype=tensor.dtype)
    with no_grad():
        tensor.copy_(Tensor._make(values, False, None, 0))
    return tensor


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended scale for a nonlinearity (torch's table).

    >>> import naivegraph as ng
    >>> ng.nn.init.calculate_gain("relu"), ng.nn.init.calculate_gain("tanh")
    (1.4142135623730951, 1.6666666666666667)
    """
    if nonlinearity in _LINEAR:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, (int, float)):
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    _check_tensor(tensor)
    if tensor.dim() < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = int(np.prod(tensor.shape[2:])) if tensor.dim() > 2 else 1
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with 0.

    >>> import naivegraph as ng
    >>> ng.nn.init.zeros_(ng.ones(2, requires_grad=True))
    tensor([0., 0.], requires_grad=True)
    """
    return _fill(tensor, np.zeros)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with 1."""
    return _fill(tensor, np.ones)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``.

    >>> import naivegraph as ng
    >>> ng.nn.init.constant_(ng.zeros(2), 0.5)
    tensor([0.5000, 0.5000])
    """
    return _fill(tensor, lambda shape: np.full(shape, val))


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    """Draw from the uniform distribution on [a, b)."""
    return _fill(tensor, lambda shape: _random.generator.uniform(a, b, shape))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    """Draw from the normal distribution N(mean, std^2)."""
    return _fill(tensor, lambda shape: _random.generator.normal(mean, std, shape))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """Glorot: uniform on ±gain * sqrt(6 / (fan_in + fan_out)).

    >>> import naivegraph as ng
    >>> w = ng.nn.init.xavier_uniform_(ng.zeros(3, 5))
    >>> bool((w.abs() <= (6 / 8) ** 0.5).all())
    True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """Glorot: normal with std gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def kaiming_uniform_(
    tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"
) -> Tensor:
    """He: uniform on ±gain * sqrt(3 / fan), gain from ``calculate_gain(nonlinearity, a)``.

    >>> import naivegraph as ng
    >>> w = ng.nn.init.kaiming_uniform_(ng.zeros(4, 6), nonlinearity="relu")
    >>> bool((w.abs() <= 1.0).all())  # sqrt(2) * sqrt(3 / 6)
    True
    """
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / _fan(tensor, mode))
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(
    tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"
) -> Tensor:
    """He: normal with std gain / sqrt(fan)."""
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std)
