"""The layers of a convolutional network: ``Conv2d``, ``MaxPool2d``, ``AvgPool2d``,
``BatchNorm1d`` and ``BatchNorm2d``, with torch's arguments, defaults, reprs and state.

Each holds its parameters (and, for batch norm, its running statistics as buffers) and
calls the function of :mod:`naivegraph.nn.functional` that does the work.
"""

from __future__ import annotations

import math

import numpy as np

from ..dynamic.defaults import get_default_dtype
from ..dynamic.factories import _random
from ..dynamic.tensor import Tensor, _check_device
from ..ops.conv_functions import pair
from . import functional as F
from .modules import Module, Parameter


def _uniform(bound: float, shape: tuple, dtype) -> Parameter:
    data = _random.generator.uniform(-bound, bound, shape).astype(dtype)
    return Parameter(Tensor._make(data, False, None, 0))


class Conv2d(Module):
    """2-D convolution over (N, C, H, W) inputs, as ``torch.nn.Conv2d``.

    Weight and bias start uniform in ±1/sqrt(fan_in) (torch's default, kaiming_uniform
    with a = sqrt(5)), fan_in = in_channels / groups * kh * kw.

    >>> import naivegraph as ng
    >>> conv = ng.nn.Conv2d(1, 6, 5)
    >>> conv, list(conv(ng.ones(2, 1, 32, 32, dtype=conv.weight.dtype)).shape)
    (Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1)), [2, 6, 28, 28])
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        _check_device(device)
        if groups < 1 or in_channels % groups or out_channels % groups:
            raise ValueError(
                f"in_channels ({in_channels}) and out_channels ({out_channels}) must both be "
                f"divisible by groups ({groups}), a positive integer"
            )
        if padding_mode != "zeros":
            raise NotImplementedError(
                f"padding_mode={padding_mode!r}: naivegraph pads with zeros only"
            )
        if isinstance(padding, str) and padding not in ("same", "valid"):
            raise ValueError(
                f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}"
            )
        if padding == "same" and pair(stride, "stride") != (1, 1):
            raise ValueError("padding='same' is not supported for strided convolutions")
        dtype = dtype or get_default_dtype()
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = pair(kernel_size, "kernel_size")
        self.stride, self.dilation = pair(stride, "stride"), pair(dilation, "dilation")
        self.padding = padding if isinstance(padding, str) else pair(padding, "padding")
        self.padding_mode = padding_mode
        fan_in = in_channels // groups * self.kernel_size[0] * self.kernel_size[1]
        bound = 1.0 / math.sqrt(fan_in) if fan_in else 0.0
        shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.weight = _uniform(bound, shape, dtype)
        self.bias = _uniform(bound, (out_channels,), dtype) if bias else None

    def forward(self, input):
        return F.conv2d(
            input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )

    def extra_repr(self) -> str:
        text = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding != (0, 0):
            text += f", padding={self.padding}"
        if self.dilation != (1, 1):
            text += f", dilation={self.dilation}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        return text


class MaxPool2d(Module):
    """The largest value of each window, as ``torch.nn.MaxPool2d`` (``stride`` defaults
    to the kernel size).

    >>> import naivegraph as ng
    >>> ng.nn.MaxPool2d(2)
    MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    """

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        dilation=1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return F.max_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class AvgPool2d(Module):
    """The mean of each window, as ``torch.nn.AvgPool2d``.

    >>> import naivegraph as ng
    >>> ng.nn.AvgPool2d(2)(ng.ones(1, 4, 4)).tolist()
    [[[1.0, 1.0], [1.0, 1.0]]]
    """

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return F.avg_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _BatchNorm(Module):
    """Shared by BatchNorm1d and BatchNorm2d: torch's ``_BatchNorm``."""

    _ranks: tuple = ()

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        _check_device(device)
        dtype = np.dtype(dtype or get_default_dtype())
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.has_bias = bias
        make = lambda fill: Tensor._make(np.full(num_features, fill, dtype), False, None, 0)  # noqa: E731
        if affine:
            self.weight = Parameter(make(1.0))
        else:
            self.register_parameter("weight", None)
        if affine and bias:
            self.bias = Parameter(make(0.0))
        else:
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", make(0.0))
            self.register_buffer("running_var", make(1.0))
            self.register_buffer(
                "num_batches_tracked", Tensor._make(np.array(0, np.int64), False, None, 0)
            )
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    def reset_running_stats(self) -> None:
        """Running mean 0, variance 1, no batch seen."""
        if self.track_running_stats:
            self.running_mean._data[...] = 0
            self.running_var._data[...] = 1
            self.num_batches_tracked._data[...] = 0

    def _check_input_dim(self, input) -> None:
        if input.dim() not in self._ranks:
            wanted = " or ".join(f"{r}D" for r in self._ranks)
            raise ValueError(f"expected {wanted} input (got {input.dim()}D input)")

    def forward(self, input):
        """torch's ``_BatchNorm.forward``: count the batch, pick the factor (momentum, or
        1 / batches seen when momentum is None), and normalise with the batch's statistics
        when training or when there are no running ones."""
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked)
        batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        use_running = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if use_running else None,
            self.running_var if use_running else None,
            self.weight,
            self.bias,
            batch_stats,
            factor,
            self.eps,
        )

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.affine and self.has_bias}, "
            f"track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) inputs, per channel C.

    >>> import naivegraph as ng
    >>> bn = ng.nn.BatchNorm1d(2, eps=0.0, dtype=ng.float64)
    >>> x = ng.tensor([[1.0, 2.0], [3.0, 6.0]], dtype=ng.float64)
    >>> bn(x).tolist(), bn.running_mean.tolist(), bn.running_var.tolist()
    ([[-1.0, -1.0], [1.0, 1.0]], [0.2, 0.4], [1.1, 1.7000000000000002])
    """

    _ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) inputs, per channel C."""

    _ranks = (4,)
