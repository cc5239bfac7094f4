"""The robust regression losses of the op table, ``smooth_l1_loss`` and ``huber_loss``,
and their functions for both modes (added to the one surface of
:mod:`naivegraph.ops.functions`).

Both are quadratic near zero and linear beyond a threshold (``beta``, ``delta``), as
torch defines them; each is one node (``SmoothL1LossBackward0``, ``HuberLossBackward0``)
whose gradient is the difference clamped to the threshold.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .core import defop, promote
from .table import F, _check_floating, _count, one_sample_target_error


def _reduce(loss, reduction: str):
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def _smooth_l1(x, y, beta=1.0, reduction="mean"):
    _check_floating("smooth_l1_cpu", np.result_type(*promote(x, y)))
    z = np.abs(np.subtract(*promote(x, y)))
    loss = np.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta).astype(z.dtype, copy=False)
    return _reduce(loss, reduction)


def _huber(x, y, delta=1.0, reduction="mean"):
    _check_floating("huber_cpu", np.result_type(*promote(x, y)))
    z = np.abs(np.subtract(*promote(x, y)))
    loss = np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)).astype(z.dtype, copy=False)
    return _reduce(loss, reduction)


def _scaled(g, diff, reduction):
    return g / _count(diff, None) if reduction == "mean" else g


def _smooth_l1_partial(sign: int):
    def partial(g, x, y, out, beta=1.0, reduction="mean"):
        diff = (x - y) if sign > 0 else (y - x)
        return _scaled(g, diff, reduction) * F.clamp(diff / beta, min=-1.0, max=1.0)

    return partial


def _huber_partial(sign: int):
    def partial(g, x, y, out, delta=1.0, reduction="mean"):
        diff = (x - y) if sign > 0 else (y - x)
        return _scaled(g, diff, reduction) * F.clamp(diff, min=-delta, max=delta)

    return partial


defop(
    "smooth_l1_loss",
    _smooth_l1,
    [_smooth_l1_partial(+1), _smooth_l1_partial(-1)],
    saves=(0, 1),
    elementwise=True,
    doc="``0.5 d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (d = x - y).",
)
defop(
    "huber_loss",
    _huber,
    [_huber_partial(+1), _huber_partial(-1)],
    saves=(0, 1),
    elementwise=True,
    doc="``0.5 d**2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)`` (d = x - y).",
)


def add_loss_functions(define: Callable, operand: Callable, checks: dict) -> None:
    """Define ``smooth_l1_loss`` and ``huber_loss`` through ``define`` (``make_functions``);
    ``checks`` holds its argument checks (``check_reduction``, ``check_same_shape``)."""

    @define
    def smooth_l1_loss(input: Any, target: Any, reduction: str = "mean", beta: float = 1.0) -> Any:
        """``torch.nn.functional.smooth_l1_loss``: quadratic below ``beta``, linear above;
        ``beta=0`` is the L1 loss (computed as ``|input - target|`` and reduced, as torch).

        >>> import naivegraph as ng
        >>> ng.nn.functional.smooth_l1_loss(ng.tensor([0.5, 3.0]), ng.tensor([0.0, 0.0])).item()
        1.3125
        """
        checks["check_reduction"](reduction)
        checks["check_same_shape"]("smooth_l1_loss", input, target)
        if beta < 0:
            raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
        input = operand(input)
        if beta == 0:
            return _reduce((input - target).abs(), reduction)
        return F.smooth_l1_loss(input, target, beta=float(beta), reduction=reduction)

    @define
    def huber_loss(input: Any, target: Any, reduction: str = "mean", delta: float = 1.0) -> Any:
        """``torch.nn.functional.huber_loss``: quadratic below ``delta``, linear above.

        >>> import naivegraph as ng
        >>> ng.nn.functional.huber_loss(ng.tensor([0.5, 3.0]), ng.tensor([0.0, 0.0])).item()
        1.3125
        """
        checks["check_reduction"](reduction)
        checks["check_same_shape"]("huber_loss", input, target)
        if delta <= 0:
            raise RuntimeError("huber_loss does not support non-positive values for delta.")
        return F.huber_loss(operand(input), target, delta=float(delta), reduction=reduction)


# ----------------------------------------------------------------------------------
# nll_loss with class weights, an ignored class and (N, C, d1, ...) inputs
# ----------------------------------------------------------------------------------
def _picked(logp, target, ignore_index):
    """(-logp at each target class, the mask of targets that count, the safe targets)."""
    logp, target = np.asarray(logp), np.asarray(target)
    valid = target != ignore_index
    safe = np.where(valid, target, 0)
    classes = logp.shape[1]
    if safe.size and (safe.min() < 0 or safe.max() >= classes):
        wrong = safe.max() if safe.max() >= classes else safe.min()
        raise IndexError(f"Target {int(wrong)} is out of bounds: classes are 0..{classes - 1}")
    picked = -np.take_along_axis(logp, np.expand_dims(safe, 1), axis=1)[:, 0]
    return picked, valid, safe


def _nll_loss_nd(logp, target, weight=None, reduction="mean", ignore_index=-100):
    if np.ndim(logp) == 1:  # one unbatched sample (C,) and its target: a batch of one
        loss = _nll_loss_nd(
            np.asarray(logp)[None], np.asarray(target).reshape(1), weight, reduction, ignore_index
        )
        return loss[0] if reduction == "none" else loss
    picked, valid, safe = _picked(logp, target, ignore_index)
    dtype = np.result_type(logp)
    w = np.ones(safe.shape, dtype) if weight is None else np.asarray(weight, dtype)[safe]
    w = np.where(valid, w, 0).astype(dtype, copy=False)
    losses = np.where(valid, picked * w, 0).astype(dtype, copy=False)
    if reduction == "none":
        return losses
    total = losses.sum(dtype=dtype)
    return total / w.sum(dtype=dtype) if reduction == "mean" else total


def _class_mask(target, num_classes, ignore_index=-100):
    """Boolean (N, C, d1, ...): True at each counted target's class."""
    target = np.asarray(target)
    if target.ndim == 0:  # one unbatched sample: (C,)
        return (target == np.arange(num_classes)) & (target != ignore_index)
    classes = np.arange(num_classes).reshape((1, -1) + (1,) * (target.ndim - 1))
    return (np.expand_dims(target, 1) == classes) & np.expand_dims(target != ignore_index, 1)


defop(
    "class_mask",
    _class_mask,
    doc="Boolean (N, C, ...) mask, True at each target's class unless it is ignored.",
)


def _nll_nd_partial(g, logp, target, *rest, reduction="mean", ignore_index=-100):
    # torch writes -weight * g at the counted targets into zeros: every other class (and
    # every ignored target) gets +0.0 whatever g is, hence where() rather than a product
    weight = rest[0] if len(rest) == 2 else None
    rank = len(logp.shape)
    if rank == 1 and len(target.shape) == 1:
        raise RuntimeError(one_sample_target_error(logp.shape, target.shape))
    classes = logp.shape[1] if rank > 1 else logp.shape[0]  # (C,): one unbatched sample
    mask = F.class_mask(target, num_classes=classes, ignore_index=ignore_index)
    per_class = mask
    if weight is not None:
        shape = (classes,) if rank == 1 else (1, classes) + (1,) * (rank - 2)
        per_class = F.where(mask, F.reshape(weight, shape=shape), 0.0)
    if reduction == "none" and rank > 1:
        scale = -F.unsqueeze(g, dim=1)
    elif reduction == "mean":
        scale = -(g / F.sum(per_class))
    else:
        scale = -g
    return F.where(mask, scale if weight is None else scale * per_class, 0.0)


defop(
    "nll_loss_nd",
    _nll_loss_nd,
    [_nll_nd_partial, None, None],
    saves=(1, 2),
    doc="nll_loss with class ``weight``, an ``ignore_index`` and inputs (N, C, d1, ...): "
    "'mean' divides by the summed weights of the counted targets, as torch.",
)
