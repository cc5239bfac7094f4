"""The op table's entries for convolutional networks: convolution, pooling, batch norm.

Each is one ``defop`` like those of :mod:`naivegraph.ops.table`, with its forward in
numpy and its VJP written with table ops, so gradients differentiate again
(``create_graph=True``, gradgradcheck) and build static nodes as well.

The forwards are vectorised the classic way ("im2col"): the padded input is viewed as
its sliding windows (``np.lib.stride_tricks.sliding_window_view``: no copy), and one
``tensordot`` contracts every window with the kernel at once.  Gradients that scatter
back into the input loop over the kernel's offsets (9 for a 3x3 kernel), never over
pixels.

A convolution is bilinear in (input, weight), so its two partials are linear maps with
their own ops, ``conv2d_input_grad`` (the transposed convolution) and
``conv2d_weight_grad``; the partials of those two are again one of the three.  Pooling
works the same way: ``avg_pool2d`` and ``avg_pool2d_backward`` are each other's
transposes, and so are ``max_pool2d_scatter`` and ``max_pool2d_gather`` (the maximum's
position is read from the input, which gets no gradient through it).

The ops take canonical attributes: ``stride``, ``dilation`` and ``kernel_size`` are pairs,
a convolution's ``padding`` is ``((top, bottom), (left, right))`` (``padding='same'`` with
an even kernel pads one more after, as torch does), a pool's is ``(rows, columns)``.
:mod:`naivegraph.ops.functions` turns torch's arguments into these.

What torch calls each op's backward node (``ConvolutionBackward0``, ...) is listed with
the others in :mod:`naivegraph.ops.names`.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .core import defop, torch_dtype_name
from .table import F

# ----------------------------------------------------------------------------------
# Windows: the im2col view of a padded input
# ----------------------------------------------------------------------------------


def _windows(padded: np.ndarray, kernel: tuple, stride: tuple, dilation: tuple) -> np.ndarray:
    """(..., OH, OW, kh, kw): every window of the last two axes, as a view."""
    (kh, kw), (dh, dw) = kernel, dilation
    extent = (dh * (kh - 1) + 1, dw * (kw - 1) + 1)
    view = sliding_window_view(padded, extent, axis=(-2, -1))
    return view[..., :: stride[0], :: stride[1], ::dh, ::dw]


def _pad_last_two(x: np.ndarray, rows: tuple, columns: tuple, value=0.0) -> np.ndarray:
    if rows == (0, 0) and columns == (0, 0):
        return x
    widths = ((0, 0),) * (x.ndim - 2) + (tuple(rows), tuple(columns))
    return np.pad(x, widths, constant_values=value)


def _scatter_windows(cols: np.ndarray, padded_shape: tuple, stride: tuple, dilation: tuple):
    """The transpose of :func:`_windows`: add each window (cols is (..., OH, OW, kh, kw))
    back into zeros of ``padded_shape``, one kernel offset at a time."""
    out = np.zeros(padded_shape, dtype=cols.dtype)
    oh, ow, kh, kw = cols.shape[-4:]
    (sh, sw), (dh, dw) = stride, dilation
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * dh, i * dh + sh * (oh - 1) + 1, sh)
            columns = slice(j * dw, j * dw + sw * (ow - 1) + 1, sw)
            out[..., rows, columns] += cols[..., i, j]
    return out


def _crop(padded: np.ndarray, rows: tuple, columns: tuple, size: tuple) -> np.ndarray:
    return padded[..., rows[0] : rows[0] + size[0], columns[0] : columns[0] + size[1]]


def _require_floating(kernel: str, *values) -> None:
    for value in values:
        dtype = np.result_type(value)
        if dtype.kind != "f":
            raise NotImplementedError(
                f"\"{kernel}\" not implemented for '{torch_dtype_name(dtype)}': it needs "
                "floating point input; convert with .float() or .double() first"
            )


# ----------------------------------------------------------------------------------
# Convolution
# ----------------------------------------------------------------------------------


def _conv_checks(x: np.ndarray, weight: np.ndarray, bias, padding, dilation, groups) -> None:
    _require_floating("slow_conv2d_cpu", x, weight)
    if x.dtype != weight.dtype:
        names = {np.dtype(np.float32): "FloatTensor", np.dtype(np.float64): "DoubleTensor"}
        raise RuntimeError(
            f"Input type (torch.{names.get(x.dtype, x.dtype.name)}) and weight type "
            f"(torch.{names.get(weight.dtype, weight.dtype.name)}) should be the same: "
            "convert the input (x.float() / x.double()) or the layer (.float() / .double())"
        )
    if bias is not None and np.result_type(bias) != x.dtype:
        raise RuntimeError(
            f"Input type ({_c_name(x.dtype)}) and bias type ({_c_name(np.result_type(bias))}) "
            "should be the same"
        )
    out_channels, group_channels = weight.shape[:2]
    if x.shape[1] != group_channels * groups or out_channels % groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
            f"input{list(x.shape)} to have {group_channels * groups} channels, but got "
            f"{x.shape[1]} channels instead"
        )
    padded = [x.shape[2 + a] + sum(padding[a]) for a in (0, 1)]
    extent = [dilation[a] * (weight.shape[2 + a] - 1) + 1 for a in (0, 1)]
    if padded[0] < extent[0] or padded[1] < extent[1]:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({padded[0]} x {padded[1]}). "
            f"Kernel size: ({extent[0]} x {extent[1]}). Kernel size can't be greater than "
            "actual input size"
        )


def _c_name(dtype) -> str:
    return {"float32": "float", "float64": "double"}.get(np.dtype(dtype).name, str(dtype))


def _conv2d(x, weight, bias=None, *, stride, padding, dilation, groups):
    x, weight = np.asarray(x), np.asarray(weight)
    _conv_checks(x, weight, bias, padding, dilation, groups)
    cols = _windows(_pad_last_two(x, *padding), weight.shape[2:], stride, dilation)
    c, o = weight.shape[1], weight.shape[0] // groups
    parts = [  # (N, OH, OW, O/groups) per group
        np.tensordot(
            cols[:, k * c : (k + 1) * c], weight[k * o : (k + 1) * o], ([1, 4, 5], [1, 2, 3])
        )
        for k in range(groups)
    ]
    out = (parts[0] if groups == 1 else np.concatenate(parts, axis=-1)).transpose(0, 3, 1, 2)
    if bias is not None:
        out = out + np.asarray(bias).reshape(1, -1, 1, 1)
    return np.ascontiguousarray(out)


def _conv2d_input_grad(g, weight, *, input_hw, stride, padding, dilation, groups):
    """The transposed convolution: what ``conv2d`` sends back to its input."""
    g, weight = np.asarray(g), np.asarray(weight)
    c, o = weight.shape[1], weight.shape[0] // groups
    parts = [  # (N, OH, OW, C/groups, kh, kw) per group
        np.tensordot(g[:, k * o : (k + 1) * o], weight[k * o : (k + 1) * o], ([1], [0]))
        for k in range(groups)
    ]
    cols = parts[0] if groups == 1 else np.concatenate(parts, axis=3)
    cols = cols.transpose(0, 3, 1, 2, 4, 5)  # (N, C, OH, OW, kh, kw)
    (top, bottom), (left, right) = padding
    padded_shape = (g.shape[0], c * groups, input_hw[0] + top + bottom, input_hw[1] + left + right)
    padded = _scatter_windows(cols, padded_shape, stride, dilation)
    return np.ascontiguousarray(_crop(padded, (top, bottom), (left, right), input_hw))


def _conv2d_weight_grad(x, g, *, kernel_size, stride, padding, dilation, groups):
    """What ``conv2d`` sends back to its weight: each window times the output gradient."""
    x, g = np.asarray(x), np.asarray(g)
    cols = _windows(_pad_last_two(x, *padding), kernel_size, stride, dilation)
    c, o = x.shape[1] // groups, g.shape[1] // groups
    parts = [  # (O/groups, C/groups, kh, kw) per group
        np.tensordot(
            g[:, k * o : (k + 1) * o], cols[:, k * c : (k + 1) * c], ([0, 2, 3], [0, 2, 3])
        )
        for k in range(groups)
    ]
    return parts[0] if groups == 1 else np.concatenate(parts, axis=0)


def _geometry(attrs: dict) -> dict:
    return {k: attrs[k] for k in ("stride", "padding", "dilation", "groups")}


def _hw(shape, what: str) -> tuple:
    sizes = None if shape is None else tuple(shape[-2:])
    if sizes is None or None in sizes:
        raise ValueError(
            f"{what} needs the height and width of its input, which the graph does not "
            "know; give the placeholder its image size (only the batch size may be None)"
        )
    return sizes


def _conv_input_partial(g, x, weight, *rest, **attrs):
    return F.conv2d_input_grad(g, weight, input_hw=_hw(x.shape, "conv2d's gradient"), **attrs)


def _conv_weight_partial(g, x, weight, *rest, **attrs):
    return F.conv2d_weight_grad(x, g, kernel_size=tuple(weight.shape[2:]), **attrs)


def _conv_bias_partial(g, x, weight, *rest, **attrs):
    return F.sum(g, dim=(0, 2, 3))


defop(
    "conv2d",
    _conv2d,
    [_conv_input_partial, _conv_weight_partial, _conv_bias_partial],
    saves={0: (1,), 1: (0,), 2: ()},
    doc="2-D cross-correlation of ``x`` (N, C, H, W) with ``weight`` (O, C/groups, kh, kw), "
    "plus ``bias`` (O,) when given (``F.conv2d``).",
)


def _input_grad_g_partial(h, g, weight, out, **attrs):
    attrs.pop("input_hw")
    return F.conv2d(h, weight, **attrs)


def _input_grad_weight_partial(h, g, weight, out, **attrs):
    attrs.pop("input_hw")
    return F.conv2d_weight_grad(h, g, kernel_size=tuple(weight.shape[2:]), **attrs)


defop(
    "conv2d_input_grad",
    _conv2d_input_grad,
    [_input_grad_g_partial, _input_grad_weight_partial],
    saves={0: (1,), 1: (0,)},
    doc="The gradient ``conv2d`` sends to its input (a transposed convolution of ``g``).",
)


def _weight_grad_x_partial(k, x, g, out, **attrs):
    attrs.pop("kernel_size")
    return F.conv2d_input_grad(g, k, input_hw=_hw(x.shape, "conv2d's gradient"), **attrs)


def _weight_grad_g_partial(k, x, g, out, **attrs):
    attrs.pop("kernel_size")
    return F.conv2d(x, k, **attrs)


defop(
    "conv2d_weight_grad",
    _conv2d_weight_grad,
    [_weight_grad_x_partial, _weight_grad_g_partial],
    saves={0: (1,), 1: (0,)},
    doc="The gradient ``conv2d`` sends to its weight (windows of ``x`` times ``g``).",
)

# ----------------------------------------------------------------------------------
# Pooling
# ----------------------------------------------------------------------------------


def _pooled_size(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """torch's pooling output size; with ceil_mode the last window may start past the
    input's end by less than a stride, but never inside the right padding only."""
    span = size + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _pool_layout(shape, kernel_size, stride, padding, dilation, ceil_mode):
    """(output size, rows' padding, columns' padding): the padding after the input
    grows where ceil_mode lets the last window hang over."""
    outs, pads = [], []
    for a in (0, 1):
        size, k, s, p, d = shape[-2 + a], kernel_size[a], stride[a], padding[a], dilation[a]
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={p}, "
                f"kernel_size={k} and dilation={d}"
            )
        out = _pooled_size(size, k, s, p, d, ceil_mode)
        outs.append(out)
        pads.append((p, max(p, (out - 1) * s + d * (k - 1) + 1 - size - p)))
    if outs[0] < 1 or outs[1] < 1:
        lead = "x".join(str(n) for n in shape[:-2][-1:])
        raise RuntimeError(
            f"Given input size: ({lead}x{shape[-2]}x{shape[-1]}). Calculated output size: "
            f"({lead}x{outs[0]}x{outs[1]}). Output size is too small"
        )
    return tuple(outs), pads[0], pads[1]


def _pool_windows(x, fill, kernel_size, stride, padding, dilation, ceil_mode):
    x = np.asarray(x)
    (oh, ow), rows, columns = _pool_layout(
        x.shape, kernel_size, stride, padding, dilation, ceil_mode
    )
    padded = _pad_last_two(x, rows, columns, fill)
    return _windows(padded, kernel_size, stride, dilation)[..., :oh, :ow, :, :], padded.shape


def _max_positions(x, kernel_size, stride, padding, dilation, ceil_mode):
    """For each output, the flat position in the padded input of its window's maximum
    (the first one; a NaN wins, as in torch), and the padded shape."""
    fill = -np.inf if np.result_type(x).kind == "f" else np.iinfo(np.result_type(x)).min
    cols, padded_shape = _pool_windows(x, fill, kernel_size, stride, padding, dilation, ceil_mode)
    oh, ow, kh, kw = cols.shape[-4:]
    best = np.argmax(cols.reshape(*cols.shape[:-2], kh * kw), axis=-1)
    i, j = np.divmod(best, kw)
    rows = np.arange(oh).reshape(-1, 1) * stride[0] + i * dilation[0]
    columns = np.arange(ow) * stride[1] + j * dilation[1]
    planes = np.arange(int(np.prod(cols.shape[:-4]))).reshape(*cols.shape[:-4], 1, 1)
    return (planes * padded_shape[-2] + rows) * padded_shape[-1] + columns, padded_shape


def _max_pool2d(x, *, kernel_size, stride, padding, dilation, ceil_mode):
    x = np.asarray(x)
    if x.dtype == np.bool_:
        raise RuntimeError("\"max_pool2d\" not implemented for 'Bool'")
    positions, padded_shape = _max_positions(x, kernel_size, stride, padding, dilation, ceil_mode)
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    rows, columns = _padding_of(x.shape, padded_shape, padding)
    return _pad_last_two(x, rows, columns, fill).reshape(-1)[positions]


def _padding_of(shape, padded_shape, padding) -> tuple:
    return (
        (padding[0], padded_shape[-2] - shape[-2] - padding[0]),
        (padding[1], padded_shape[-1] - shape[-1] - padding[1]),
    )


def _max_pool2d_scatter(g, x, **attrs):
    """``g`` added into zeros of ``x``'s shape at each window's maximum."""
    g, x = np.asarray(g), np.asarray(x)
    positions, padded_shape = _max_positions(x, **attrs)
    total = int(np.prod(padded_shape))
    summed = np.bincount(positions.reshape(-1), weights=g.reshape(-1), minlength=total)
    rows, columns = _padding_of(x.shape, padded_shape, attrs["padding"])
    padded = summed.astype(g.dtype).reshape(padded_shape)
    return np.ascontiguousarray(_crop(padded, rows, columns, x.shape[-2:]))


def _max_pool2d_gather(h, x, **attrs):
    """``h`` (of ``x``'s shape) read at each window's maximum of ``x``."""
    h, x = np.asarray(h), np.asarray(x)
    positions, padded_shape = _max_positions(x, **attrs)
    rows, columns = _padding_of(x.shape, padded_shape, attrs["padding"])
    return _pad_last_two(h, rows, columns).reshape(-1)[positions]


defop(
    "max_pool2d",
    _max_pool2d,
    [lambda g, x, out, **attrs: F.max_pool2d_scatter(g, x, **attrs)],
    saves=(0,),
    doc="The largest value of each window of the last two axes (``F.max_pool2d``).",
)
defop(
    "max_pool2d_scatter",
    _max_pool2d_scatter,
    [lambda h, g, x, out, **attrs: F.max_pool2d_gather(h, x, **attrs), None],
    saves=(1,),
    doc="The gradient of ``max_pool2d``: ``g`` put where each window's maximum of ``x`` was.",
)
defop(
    "max_pool2d_gather",
    _max_pool2d_gather,
    [lambda k, h, x, out, **attrs: F.max_pool2d_scatter(k, x, **attrs), None],
    saves=(1,),
    doc="``h`` read where each window's maximum of ``x`` is (max_pool2d's gradient's VJP).",
)


def _max_pool2d_indices(x, *, kernel_size, stride, padding, dilation, ceil_mode):
    """Where each maximum is, as a flat index into its (unpadded) H x W plane."""
    positions, padded_shape = _max_positions(x, kernel_size, stride, padding, dilation, ceil_mode)
    in_plane = positions % (padded_shape[-2] * padded_shape[-1])
    row, column = np.divmod(in_plane, padded_shape[-1])
    width = np.shape(x)[-1]
    return ((row - padding[0]) * width + column - padding[1]).astype(np.int64)


defop(
    "max_pool2d_indices",
    _max_pool2d_indices,
    doc="The flat H x W position of each window's maximum (``return_indices=True``).",
)


def _avg_divisors(shape, kernel_size, stride, padding, ceil_mode, count_include_pad):
    """How many values each window averages: torch counts the padding in (or not), never
    the overhang that ceil_mode adds."""
    counted = _pad_last_two(
        np.ones(shape[-2:]),
        (padding[0], padding[0]),
        (padding[1], padding[1]),
        1.0 if count_include_pad else 0.0,
    )
    (oh, ow), rows, columns = _pool_layout(shape, kernel_size, stride, padding, (1, 1), ceil_mode)
    counted = np.pad(counted, ((0, rows[1] - padding[0]), (0, columns[1] - padding[1])))
    cols = _windows(counted, kernel_size, stride, (1, 1))[:oh, :ow]
    return cols.sum(axis=(-2, -1))


def _avg_pool2d(x, *, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    x = np.asarray(x)
    _require_floating("avg_pool2d", x)
    cols, _ = _pool_windows(x, 0.0, kernel_size, stride, padding, (1, 1), ceil_mode)
    total = cols.sum(axis=(-2, -1))
    divisor = divisor_override or _avg_divisors(
        x.shape, kernel_size, stride, padding, ceil_mode, count_include_pad
    )
    return (total / np.asarray(divisor, dtype=x.dtype)).astype(x.dtype, copy=False)


def _avg_pool2d_backward(g, *, input_hw, kernel_size, stride, padding, ceil_mode, **counting):
    g = np.asarray(g)
    shape = (*g.shape[:-2], *input_hw)
    divisor = counting["divisor_override"] or _avg_divisors(
        shape, kernel_size, stride, padding, ceil_mode, counting["count_include_pad"]
    )
    share = g / np.asarray(divisor, dtype=g.dtype)
    (oh, ow), rows, columns = _pool_layout(shape, kernel_size, stride, padding, (1, 1), ceil_mode)
    padded_shape = (*shape[:-2], input_hw[0] + sum(rows), input_hw[1] + sum(columns))
    cols = np.broadcast_to(share[..., None, None], (*share.shape, *kernel_size))
    padded = _scatter_windows(cols, padded_shape, stride, (1, 1))
    return np.ascontiguousarray(_crop(padded, rows, columns, input_hw))


defop(
    "avg_pool2d",
    _avg_pool2d,
    [
        lambda g, x, out, **attrs: F.avg_pool2d_backward(
            g, input_hw=_hw(x.shape, "avg_pool2d's gradient"), **attrs
        )
    ],
    saves=(),
    doc="The mean of each window of the last two axes (``F.avg_pool2d``).",
)
defop(
    "avg_pool2d_backward",
    _avg_pool2d_backward,
    [lambda h, g, out, input_hw, **attrs: F.avg_pool2d(h, **attrs)],
    saves=(),
    doc="The gradient of ``avg_pool2d``: each window's share of ``g`` spread over it.",
)

# ----------------------------------------------------------------------------------
# Batch normalisation
# ----------------------------------------------------------------------------------


def _channel_axes(ndim: int) -> tuple:
    """Every axis but the channels' (axis 1): what batch norm averages over."""
    return (0, *range(2, ndim))


def _per_channel(ndim: int) -> tuple:
    return (1, -1) + (1,) * (ndim - 2)


def _batch_norm(x, weight=None, bias=None, mean=None, var=None, *, training, eps):
    """torch's CPU kernel: ``x * alpha + beta`` with ``alpha = weight / sqrt(var + eps)``
    and ``beta = bias - mean * alpha``; batch statistics (biased variance) in training."""
    x = np.asarray(x)
    _require_floating("batch_norm", x)
    axes, shape = _channel_axes(x.ndim), _per_channel(x.ndim)
    if training:
        mean = x.mean(axis=axes)
        centred = x - mean.reshape(shape)
        var = (centred * centred).mean(axis=axes)
    invstd = 1.0 / np.sqrt(np.asarray(var, dtype=x.dtype) + x.dtype.type(eps))
    alpha = invstd if weight is None else invstd * np.asarray(weight, dtype=x.dtype)
    beta = -np.asarray(mean, dtype=x.dtype) * alpha
    if bias is not None:
        beta = beta + np.asarray(bias, dtype=x.dtype)
    return (x * alpha.reshape(shape) + beta.reshape(shape)).astype(x.dtype, copy=False)


def _normalised(x, rest, training, eps):
    """(x - mean) / sqrt(var + eps) and 1 / sqrt(var + eps), in table ops."""
    axes, shape = _channel_axes(len(x.shape)), _per_channel(len(x.shape))
    if training:
        centred = x - F.mean(x, dim=axes, keepdim=True)
        invstd = 1.0 / F.sqrt(F.mean(centred * centred, dim=axes, keepdim=True) + eps)
    else:
        mean, var = rest[0], rest[1]
        centred = x - F.reshape(mean, shape=shape)
        invstd = 1.0 / F.sqrt(F.reshape(var, shape=shape) + eps)
    return centred * invstd, invstd


def _bn_input_partial(g, x, weight, bias, *rest, training, eps):
    axes, shape = _channel_axes(len(x.shape)), _per_channel(len(x.shape))
    scaled = g if weight is None else g * F.reshape(weight, shape=shape)
    normal, invstd = _normalised(x, rest, training, eps)
    if not training:  # the statistics are constants: a per-channel scaling
        return scaled * invstd
    mean_scaled = F.mean(scaled, dim=axes, keepdim=True)
    mean_projection = F.mean(scaled * normal, dim=axes, keepdim=True)
    return (scaled - mean_scaled - normal * mean_projection) * invstd


def _bn_weight_partial(g, x, weight, bias, *rest, training, eps):
    normal, _ = _normalised(x, rest, training, eps)
    return F.sum(g * normal, dim=_channel_axes(len(x.shape)))


def _bn_bias_partial(g, x, weight, bias, *rest, training, eps):
    return F.sum(g, dim=_channel_axes(len(x.shape)))


defop(
    "batch_norm",
    _batch_norm,
    [_bn_input_partial, _bn_weight_partial, _bn_bias_partial, None, None],
    saves=(0, 1, 3, 4),
    doc="Batch normalisation over every axis but 1: with the batch's statistics "
    "(``training``) or the given ``mean`` and ``var`` (``F.batch_norm``).",
)
