"""Losses and activations as functions (``ng.nn.functional``, usually imported as F).

They dispatch through the op table, so they work on dynamic tensors and static nodes.
"""

from __future__ import annotations

import numpy as np

from ..dynamic.tensor import Tensor
from ..ops import OPS
from ..ops.core import _backend_of


def _operand(x):
    """A static node or tensor as it is; anything else (an array) as a dynamic tensor."""
    if _backend_of((x,)) is None:
        return Tensor(x)
    return x


def relu(x):
    return OPS["relu"].dispatch(_operand(x))


def sigmoid(x):
    return OPS["sigmoid"].dispatch(_operand(x))


def tanh(x):
    return OPS["tanh"].dispatch(_operand(x))


def softmax(x, dim: int):
    return OPS["softmax"].dispatch(_operand(x), dim=dim)


def log_softmax(x, dim: int):
    return OPS["log_softmax"].dispatch(_operand(x), dim=dim)


def linear(x, weight, bias=None):
    """``x @ weight.t() + bias``, the affine map of ``nn.Linear``.

    Built as PyTorch builds it, so the graph has the same nodes: ``addmm`` on a matrix
    input (inputs of other ranks are flattened to one and viewed back), ``mm`` without
    a bias.

    >>> import naivegraph as ng
    >>> w = ng.ones(3, 2, requires_grad=True)
    >>> ng.nn.functional.linear(ng.ones(4, 2), w, ng.zeros(3)).grad_fn
    <AddmmBackward0 object at ...>
    """
    weight_t = weight.t()
    if bias is None:
        return x @ weight_t
    shape = getattr(x, "shape", None)
    if shape is None or None in shape:  # a static placeholder of unknown size
        return x @ weight_t + bias
    if len(shape) == 2:
        return OPS["addmm"].dispatch(bias, x, weight_t)
    flat = OPS["addmm"].dispatch(bias, x.reshape(-1, shape[-1]), weight_t)
    return flat.reshape(*shape[:-1], flat.shape[-1])


def _check_reduction(reduction: str) -> None:
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(
            f"{reduction} is not a valid value for reduction: use 'mean', 'sum' or 'none'"
        )


def mse_loss(input, target, reduction: str = "mean"):
    """Mean squared error.

    >>> import naivegraph as ng
    >>> ng.nn.functional.mse_loss(ng.tensor([1., 2.]), ng.tensor([1., 4.]))
    tensor(2.)
    """
    _check_reduction(reduction)
    shapes = (tuple(input.shape), tuple(target.shape))
    if shapes[0] != shapes[1]:
        raise ValueError(
            f"mse_loss: input shape {shapes[0]} and target shape {shapes[1]} must "
            "match (broadcasting them is almost always a bug)"
        )
    return OPS["mse_loss"].dispatch(_operand(input), target, reduction=reduction)


def _class_indices(target) -> np.ndarray:
    data = np.asarray(getattr(target, "_data", target))
    if data.dtype.kind not in "iu":
        raise TypeError(
            f"cross_entropy expects class indices of an integer dtype as target, got "
            f"{data.dtype}; use target.long()"
        )
    return data


def nll_loss(input, target, reduction: str = "mean"):
    """Negative log-likelihood of log-probabilities ``input`` (N, C) at ``target`` (N,)."""
    _check_reduction(reduction)
    indices = _class_indices(target)
    shape = tuple(input.shape)
    if len(shape) != 2 or indices.shape != (shape[0],):
        raise ValueError(
            f"nll_loss: expected input of shape (N, C) and target of shape (N,), got "
            f"{shape} and {indices.shape}"
        )
    if indices.size and (indices.min() < 0 or indices.max() >= shape[1]):
        raise IndexError(
            f"Target {int(indices.max())} is out of bounds: classes are 0..{shape[1] - 1}"
        )
    return OPS["nll_loss"].dispatch(
        input, target if _backend_of((target,)) else indices, reduction=reduction
    )


def cross_entropy(input, target, reduction: str = "mean"):
    """Softmax cross-entropy of logits ``input`` (N, C) against class indices ``target``
    (N,), as torch also for one unbatched sample: logits (C,) and a class index of shape
    (); or against class probabilities of the input's own shape.

    >>> import naivegraph as ng
    >>> loss = ng.nn.functional.cross_entropy(ng.zeros(2, 4), ng.tensor([0, 3]))
    >>> round(loss.item(), 4)  # log(4)
    1.3863
    >>> round(ng.nn.functional.cross_entropy(ng.zeros(4), ng.tensor(3)).item(), 4)
    1.3863
    """
    _check_reduction(reduction)
    input = _operand(input)
    shape = tuple(input.shape)
    if _is_probabilities(target, shape):
        return _cross_entropy_with_probabilities(input, target, reduction)
    if len(shape) == 1:
        return _unbatched_cross_entropy(input, target, reduction)
    return nll_loss(log_softmax(input, dim=1), target, reduction=reduction)


def _is_probabilities(target, shape: tuple) -> bool:
    """A floating target of the input's shape holds class probabilities (torch's rule;
    a floating target of another shape is refused as a bad index target)."""
    dtype = getattr(target, "dtype", None)
    return (
        dtype is not None
        and np.dtype(dtype).kind == "f"
        and tuple(getattr(target, "shape", ())) == shape
    )


def _cross_entropy_with_probabilities(input, target, reduction: str):
    # -sum over classes of p * log_softmax; "mean" averages over the samples only.
    per_sample = -(target * log_softmax(input, dim=-1)).sum(dim=-1)
    if reduction == "none":
        return per_sample
    return per_sample.mean() if reduction == "mean" else per_sample.sum()


def _unbatched_cross_entropy(input, target, reduction: str):
    """Logits (C,) of one sample and its class index of shape (): a batch of one."""
    indices = _class_indices(target)
    if indices.shape != ():
        raise ValueError(
            f"cross_entropy: logits of shape {tuple(input.shape)} are one sample, "
            f"so the target is one class index of shape (), got shape "
            f"{indices.shape}; for a batch pass logits of shape (N, C)"
        )
    loss = nll_loss(log_softmax(input.unsqueeze(0), dim=1), indices.reshape(1), reduction=reduction)
    return loss.reshape(()) if reduction == "none" else loss
