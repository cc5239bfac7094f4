"""Losses and activations as functions (``ng.nn.functional``, usually imported as F).

The losses and activations are those of the one function surface of both modes
(:mod:`naivegraph.ops.functions`, as ``ng.relu`` and ``ns.mse_loss`` are), so they
work on dynamic tensors and static nodes and check their arguments the same way.
"""

from __future__ import annotations

from ..dynamic.functions import (
    avg_pool2d,
    batch_norm,
    conv2d,
    cross_entropy,
    huber_loss,
    log_softmax,
    max_pool2d,
    mse_loss,
    nll_loss,
    relu,
    sigmoid,
    smooth_l1_loss,
    softmax,
    tanh,
)
from ..ops import OPS
from .losses import binary_cross_entropy, binary_cross_entropy_with_logits


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


__all__ = [
    "avg_pool2d",
    "batch_norm",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "conv2d",
    "cross_entropy",
    "huber_loss",
    "linear",
    "log_softmax",
    "max_pool2d",
    "mse_loss",
    "nll_loss",
    "relu",
    "sigmoid",
    "smooth_l1_loss",
    "softmax",
    "tanh",
]
