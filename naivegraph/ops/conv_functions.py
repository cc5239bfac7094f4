"""``conv2d``, ``max_pool2d``, ``avg_pool2d`` and ``batch_norm`` of both modes.

They take torch's arguments (an int or a pair, ``padding='same'``, unbatched inputs of
three axes), check them with torch's messages, and call the ops of
:mod:`naivegraph.ops.conv` with canonical attributes.  :func:`add_conv_functions` adds
them to the one surface of :mod:`naivegraph.ops.functions`, so a static node gets the
same checks as a dynamic tensor.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .core import OPS


def pair(value: Any, name: str) -> tuple:
    """An int or a pair of ints as a pair, as torch's ``_pair``."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value), int(value))
    if isinstance(value, (tuple, list)) and len(value) == 1:
        return (int(value[0]), int(value[0]))
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return (int(value[0]), int(value[1]))
    raise TypeError(f"{name} must be an int or a pair of ints, got {value!r}")


def conv_padding(padding: Any, kernel: tuple, dilation: tuple, stride: tuple) -> tuple:
    """``((top, bottom), (left, right))`` from torch's ``padding`` argument."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0), (0, 0))
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if stride != (1, 1):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        pads = []
        for k, d in zip(kernel, dilation):
            total = d * (k - 1)
            pads.append((total // 2, total - total // 2))  # torch pads the extra one after
        return tuple(pads)
    rows, columns = pair(padding, "padding")
    if rows < 0 or columns < 0:
        raise RuntimeError("negative padding is not supported")
    return ((rows, rows), (columns, columns))


def _shape(value: Any) -> tuple | None:
    shape = getattr(value, "shape", None)
    return None if shape is None else tuple(shape)


def _check_rank(name: str, input: Any, ranks: tuple, what: str) -> int | None:
    shape = _shape(input)
    if shape is None:
        return None
    if len(shape) not in ranks:
        raise RuntimeError(f"Expected {what} input to {name}, but got input of size: {list(shape)}")
    return len(shape)


def add_conv_functions(define: Callable, operand: Callable, static: Callable) -> None:
    """Define the four functions through ``define`` (see ``make_functions``);
    ``static(value)`` says whether a value is a static node (no values yet)."""

    def batched(input: Any, rank: int | None, full: int):
        """(input with a batch axis, whether one was added): torch's unbatched inputs."""
        if rank == full - 1:
            return input.unsqueeze(0), True
        return input, False

    @define
    def conv2d(
        input: Any,
        weight: Any,
        bias: Any = None,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
    ) -> Any:
        """2-D convolution (cross-correlation) as ``torch.nn.functional.conv2d``: ``input``
        (N, C, H, W) or (C, H, W), ``weight`` (O, C/groups, kh, kw), ``bias`` (O,);
        ``padding`` an int, a pair, ``'valid'`` or ``'same'``.

        >>> import naivegraph as ng
        >>> x = ng.arange(16.0).reshape(1, 1, 4, 4)
        >>> ng.nn.functional.conv2d(x, ng.ones(1, 1, 2, 2, dtype=x.dtype), stride=2).tolist()
        [[[[10.0, 18.0], [42.0, 50.0]]]]
        """
        input = operand(input)
        rank = _check_rank("conv2d", input, (3, 4), "3D (unbatched) or 4D (batched)")
        input, unbatched = batched(input, rank, 4)
        weight_shape = _shape(weight)
        if weight_shape is None or len(weight_shape) != 4 or None in weight_shape:
            raise RuntimeError(
                f"conv2d: weight must have a known 4-D shape (out_channels, "
                f"in_channels / groups, kh, kw), got {weight_shape}"
            )
        stride_, dilation_ = pair(stride, "stride"), pair(dilation, "dilation")
        if groups < 1 or min(stride_) < 1 or min(dilation_) < 1:
            raise RuntimeError(
                "conv2d: groups, stride and dilation must be positive, got "
                f"groups={groups}, stride={stride!r}, dilation={dilation!r}"
            )
        attrs = dict(
            stride=stride_,
            padding=conv_padding(padding, weight_shape[2:], dilation_, stride_),
            dilation=dilation_,
            groups=int(groups),
        )
        # An absent bias is an edge to nothing in dynamic mode ((None, 0) in
        # next_functions, as torch's); a static graph has no None operand.
        args = (input, weight) if bias is None and static(input) else (input, weight, bias)
        out = OPS["conv2d"].dispatch(*args, **attrs)
        return out.squeeze(0) if unbatched else out

    def pooling(name: str, input: Any, kernel_size: Any, stride: Any, padding: Any) -> tuple:
        input = operand(input)
        rank = _check_rank(name, input, (3, 4), "3D or 4D (batch mode) tensor expected for")
        kernel = pair(kernel_size, "kernel_size")
        stride_ = kernel if stride is None or stride == [] or stride == () else stride
        return input, rank, kernel, pair(stride_, "stride"), pair(padding, "padding")

    @define
    def max_pool2d(
        input: Any,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        dilation: Any = 1,
        ceil_mode: bool = False,
        return_indices: bool = False,
    ) -> Any:
        """The largest value of each ``kernel_size`` window (``stride`` defaults to the
        kernel: windows side by side), as ``torch.nn.functional.max_pool2d``.

        >>> import naivegraph as ng
        >>> ng.nn.functional.max_pool2d(ng.arange(16.0).reshape(1, 4, 4), 2)
        tensor([[[ 5.,  7.],
                 [13., 15.]]])
        """
        input, _, kernel, stride_, padding_ = pooling(
            "max_pool2d", input, kernel_size, stride, padding
        )
        attrs = dict(
            kernel_size=kernel,
            stride=stride_,
            padding=padding_,
            dilation=pair(dilation, "dilation"),
            ceil_mode=bool(ceil_mode),
        )
        out = OPS["max_pool2d"].dispatch(input, **attrs)
        if return_indices:
            return out, OPS["max_pool2d_indices"].dispatch(input, **attrs)
        return out

    @define
    def avg_pool2d(
        input: Any,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> Any:
        """The mean of each ``kernel_size`` window, as ``torch.nn.functional.avg_pool2d``
        (the zero padding counts unless ``count_include_pad=False``).

        >>> import naivegraph as ng
        >>> ng.nn.functional.avg_pool2d(ng.arange(16.0).reshape(1, 4, 4), 2)
        tensor([[[ 2.5000,  4.5000],
                 [10.5000, 12.5000]]])
        """
        input, _, kernel, stride_, padding_ = pooling(
            "avg_pool2d", input, kernel_size, stride, padding
        )
        if divisor_override is not None and divisor_override == 0:
            raise RuntimeError("divisor must be not zero")
        return OPS["avg_pool2d"].dispatch(
            input,
            kernel_size=kernel,
            stride=stride_,
            padding=padding_,
            ceil_mode=bool(ceil_mode),
            count_include_pad=bool(count_include_pad),
            divisor_override=divisor_override,
        )

    @define
    def batch_norm(
        input: Any,
        running_mean: Any,
        running_var: Any,
        weight: Any = None,
        bias: Any = None,
        training: bool = False,
        momentum: float | None = 0.1,
        eps: float = 1e-5,
    ) -> Any:
        """Batch normalisation as ``torch.nn.functional.batch_norm``: over every axis but
        the channels' (axis 1), with the batch's statistics when ``training`` (and then
        ``running_mean`` / ``running_var``, when given, move towards them by
        ``momentum``, the variance unbiased, in place) or with the running ones.

        >>> import naivegraph as ng
        >>> x = ng.tensor([[1.0], [3.0]], dtype=ng.float64)
        >>> mean, var = ng.zeros(1, dtype=ng.float64), ng.ones(1, dtype=ng.float64)
        >>> ng.nn.functional.batch_norm(x, mean, var, training=True, eps=0.0).tolist()
        [[-1.0], [1.0]]
        >>> mean.tolist(), var.tolist()
        ([0.2], [1.1])
        """
        input = operand(input)
        shape = _shape(input)
        if shape is not None and len(shape) < 2:
            raise ValueError(
                f"batch_norm expects an input of 2 or more axes (N, C, ...), got {shape}"
            )
        channels = None if shape is None else shape[1]
        for name, given in (("running_mean", running_mean), ("running_var", running_var)):
            size = None if given is None else _shape(given)
            if size is not None and channels is not None and int(np.prod(size)) != channels:
                raise RuntimeError(
                    f"{name} should contain {channels} elements not {int(np.prod(size))}"
                )
        if training and shape is not None and None not in shape and channels:
            if int(np.prod(shape)) // channels <= 1:
                raise ValueError(
                    "Expected more than 1 value per channel when training, got input size "
                    f"torch.Size({list(shape)})"
                )
        if not training and (running_mean is None or running_var is None):
            raise RuntimeError(
                "batch_norm: without training=True it normalises with running_mean and "
                "running_var, so both must be given"
            )
        if static(input):
            if training and (running_mean is not None or running_var is not None):
                raise NotImplementedError(
                    "batch_norm with running statistics in training mode is not supported in "
                    "static mode: updating them is a side effect of the forward pass. Pass "
                    "running_mean=None, running_var=None (batch statistics only), use "
                    "training=False with fixed statistics, or use dynamic mode"
                )
            weight = weight if weight is not None else np.ones(channels or 1)
            bias = bias if bias is not None else np.zeros(channels or 1)
        if training:
            if running_mean is not None or running_var is not None:
                _update_running(input, running_mean, running_var, momentum)
            return OPS["batch_norm"].dispatch(input, weight, bias, training=True, eps=eps)
        return OPS["batch_norm"].dispatch(
            input, weight, bias, running_mean, running_var, training=False, eps=eps
        )


def _update_running(input: Any, running_mean: Any, running_var: Any, momentum) -> None:
    """torch's update, in place: ``running = momentum * batch + (1 - momentum) * running``
    with the batch's unbiased variance.  Like torch's kernel, the write does not move the
    tensors' version counters (they are buffers, never saved for backward)."""
    x = np.asarray(input._data)
    axes = (0, *range(2, x.ndim))
    count = x.size // x.shape[1]
    mean = x.mean(axis=axes)
    centred = x - mean.reshape((1, -1) + (1,) * (x.ndim - 2))
    unbiased = (centred * centred).sum(axis=axes) / max(count - 1, 1)
    m = 0.1 if momentum is None else momentum
    for running, batch in ((running_mean, mean), (running_var, unbiased)):
        if running is not None:
            old = running._data
            np.copyto(old, m * batch + (1 - m) * old, casting="unsafe")
