"""PyTorch's names for the backward nodes (``grad_fn``) of the op table's primitives.

The op table (:mod:`naivegraph.ops.table`) is about maths; what PyTorch calls each
primitive's backward node lives here, so that dynamic mode's ``grad_fn`` reads like
torch's (``MulBackward0``, ``SliceBackward0``, ...).  An op not listed is named after
itself: ``exp`` -> ``ExpBackward0``, ``log_softmax`` -> ``LogSoftmaxBackward0``.  A listed
name is a string, or a rule ``(attrs, input_shapes) -> str`` for ops whose node depends
on the call; a Python number operand has the shape :data:`SCALAR_SHAPE`.

>>> backward_name_of("exp"), backward_name_of("sum")({"dim": 0}, [(2, 3)])
('ExpBackward0', 'SumBackward1')
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np


class ScalarShape(tuple):
    """The shape ``()`` of a Python number operand (``2 - x``), told apart from a 0-d
    tensor's so that backward names can follow PyTorch (``RsubBackward1``)."""

    __slots__ = ()


SCALAR_SHAPE = ScalarShape()

Rule = Callable[[dict, Sequence[tuple]], str]


def _scalar_first(scalar: str, tensor: str) -> Rule:
    """``2 - x`` and ``2 ** x`` have their own nodes in torch."""
    return lambda attrs, shapes: scalar if isinstance(shapes[0], ScalarShape) else tensor


def _reduction(base: str) -> Rule:
    # PyTorch: a full reduction is SumBackward0, along a dim SumBackward1
    return lambda attrs, shapes: f"{base}Backward{0 if attrs.get('dim') is None else 1}"


def _extreme(base: str) -> Rule:
    # ... and the other way round for max/min: full -> MaxBackward1, along a dim -> 0
    return lambda attrs, shapes: f"{base}Backward{1 if attrs.get('dim') is None else 0}"


def _squeeze(attrs: dict, shapes: Sequence[tuple]) -> str:
    dim = attrs.get("dim")
    if attrs.get("inplace"):
        return "SqueezeBackward4"  # squeeze_(dim)
    if dim is None:
        return "SqueezeBackward0"
    return "SqueezeBackward1" if isinstance(dim, (int, np.integer)) else "SqueezeBackward2"


def _index(attrs: dict, shapes: Sequence[tuple]) -> str:
    index = attrs["index"]
    parts = index if isinstance(index, tuple) else (index,)
    if any(isinstance(p, (np.ndarray, list)) for p in parts):
        return "IndexBackward0"
    # PyTorch applies basic indices left to right; the node is that of the last one
    # (a full slice ":" records nothing).
    for p in reversed(parts):
        if p == slice(None):
            continue
        if p is None:
            return "UnsqueezeBackward0"
        if isinstance(p, (int, np.integer)):
            return "SelectBackward0"
        if isinstance(p, slice):
            return "SliceBackward0"
    return "AliasBackward0"  # x[...]


def _matmul(attrs: dict, shapes: Sequence[tuple]) -> str:
    # PyTorch names the last kernel its matmul dispatches to: vector x matrix ends in a
    # squeeze, a matrix times a batch in a transposed copy, other batched products in a
    # reshape of the folded/bmm result.
    a, b = (len(s) for s in shapes)
    if a == 1 and b == 1:
        return "DotBackward0"
    if a == 2 and b == 1:
        return "MvBackward0"
    if a == 1 and b == 2:
        return "SqueezeBackward4"
    if a == 2 and b == 2:
        return "MmBackward0"
    return "CloneBackward0" if a == 2 else "UnsafeViewBackward0"


#: torch's node for each way its reshape goes: a view of a contiguous tensor, a view of
#: another layout (``_reshape_alias``), a copy's new shape (``_unsafe_view``)
_RESHAPE_NODES = {
    "view": "ViewBackward0",
    "alias": "ReshapeAliasBackward0",
    "unsafe": "UnsafeViewBackward0",
}


#: op name -> torch's name for its backward node (only where it is not the default)
GRAD_FN_NAMES: dict[str, str | Rule] = {
    "sub": _scalar_first("RsubBackward1", "SubBackward0"),
    "pow": _scalar_first("PowBackward2", "PowBackward1"),
    "pow_scalar": "PowBackward0",
    "rsub": "RsubBackward1",
    "rpow": "PowBackward2",
    "clamp": "ClampBackward1",
    "fill": "FillBackward2",  # fill_(scalar)
    "copy": "CopyBackwards",
    "sum": _reduction("Sum"),
    "mean": _reduction("Mean"),
    "max": _extreme("Max"),
    "min": _extreme("Min"),
    # ``kind`` only names the node as dynamic reshape and matmul record it (see _reshape)
    "reshape": lambda attrs, shapes: _RESHAPE_NODES[attrs.get("kind", "view")],
    "squeeze": _squeeze,
    "getitem": _index,
    "scatter": "IndexPutBackward0",
    "masked_fill_tensor": "MaskedFillBackward1",  # a 0-d tensor value (a number: ...0)
    "matmul": _matmul,
    "add_alpha": "AddBackward0",
    "sub_alpha": "SubBackward0",
    "norm": "LinalgVectorNormBackward0",  # torch.norm and Tensor.norm run linalg.vector_norm
    "prod": _reduction("Prod"),
    "conv2d": "ConvolutionBackward0",
    "conv2d_input_grad": "ConvolutionBackwardBackward0",
    "conv2d_weight_grad": "ConvolutionBackwardBackward0",
    "max_pool2d": "MaxPool2DWithIndicesBackward0",
    "max_pool2d_scatter": "MaxPool2DWithIndicesBackwardBackward0",
    "max_pool2d_gather": "MaxPool2DWithIndicesBackward0",
    "avg_pool2d": "AvgPool2DBackward0",
    "avg_pool2d_backward": "AvgPool2DBackwardBackward0",
    "batch_norm": "NativeBatchNormBackward0",
    "remainder": "RemainderBackward1",
    "remainder_scalar": "RemainderBackward0",
    "div_rounding": "DivBackward2",
    "addmm_scaled": "AddmmBackward0",
    "sum_typed": _reduction("Sum"),
    "nll_loss_nd": lambda attrs, shapes: (
        "NllLoss2DBackward0" if len(shapes[0]) == 4 else "NllLossBackward0"
    ),
}


def default_name(op_name: str) -> str:
    """``log_softmax`` -> ``LogSoftmaxBackward0``."""
    return "".join(part.capitalize() for part in op_name.split("_")) + "Backward0"


def backward_name_of(op_name: str) -> str | Rule:
    """What :class:`~naivegraph.ops.core.OpDef` keeps as the name of its backward node."""
    return GRAD_FN_NAMES.get(op_name) or default_name(op_name)
