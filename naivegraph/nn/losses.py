"""Binary cross-entropy losses built from existing tensor ops (no op-table entries).

They follow ``torch.nn.functional``'s names, arguments, values and error messages.
``binary_cross_entropy`` is one custom node (``BinaryCrossEntropyBackward``) carrying
torch's gradient formula; the logits form is a composition of ops (``ExpBackward0``,
``LogBackward0``, ...) where torch has one node.
"""

from __future__ import annotations

import numpy as np

from ..dynamic import functions as _functions
from ..dynamic.function import Function, _node_class
from ..dynamic.tensor import Tensor


def _check_reduction(reduction: str) -> None:
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(
            f"{reduction} is not a valid value for reduction: use 'mean', 'sum' or 'none'"
        )


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return loss
    return loss.mean() if reduction == "mean" else loss.sum()


def _as_tensor(value, name: str) -> Tensor:
    if isinstance(value, Tensor):
        return value
    raise TypeError(
        f"{name} must be a Tensor, not {type(value).__name__}: wrap it with ng.tensor(...)"
    )


def _torch_size(shape: tuple) -> str:
    return f"torch.Size({list(shape)})"


# torch's EPSILON of the BCE gradient is the float 1e-12 (9.99999996e-13 as a double).
_BCE_EPSILON = float(np.float32(1e-12))


def _clamped_log(x: Tensor) -> Tensor:
    return x.log().clamp(min=-100)


class BinaryCrossEntropy(Function):
    """Elementwise BCE with torch's own gradient, ``(p - t) / max(p (1 - p), 1e-12)``.

    Composing the loss from ``log`` and ``clamp`` would give 0 * inf = NaN at p = 0 or 1
    (a saturated sigmoid), where torch's formula stays finite.
    """

    @staticmethod
    def forward(ctx, input: Tensor, target: Tensor) -> Tensor:
        ctx.save_for_backward(input, target)
        ctx.save_for_forward(input, target)
        return -(target * _clamped_log(input) + (1 - target) * _clamped_log(1 - input))

    @staticmethod
    def jvp(ctx, input_tangent: Tensor, target_tangent: Tensor) -> Tensor:
        """Forward mode: the same partial derivatives as backward, times the tangents."""
        input, target = ctx.saved_tensors
        slope = (input - target) / ((1 - input) * input).clamp(min=_BCE_EPSILON)
        return input_tangent * slope + target_tangent * (
            _clamped_log(1 - input) - _clamped_log(input)
        )

    @staticmethod
    def backward(ctx, grad: Tensor):
        input, target = ctx.saved_tensors
        grad_input = grad_target = None
        if ctx.needs_input_grad[0]:
            grad_input = grad * (input - target) / ((1 - input) * input).clamp(min=_BCE_EPSILON)
        if ctx.needs_input_grad[1]:
            grad_target = grad * (_clamped_log(1 - input) - _clamped_log(input))
        return grad_input, grad_target


def binary_cross_entropy(
    input: Tensor, target: Tensor, weight: Tensor | None = None, reduction: str = "mean"
) -> Tensor:
    """``-(t * log(p) + (1 - t) * log(1 - p))`` for probabilities ``p`` in [0, 1].

    Each log is clamped at -100 as in torch, so ``p`` of exactly 0 or 1 gives a loss of
    100, not infinity.

    >>> import naivegraph as ng
    >>> from naivegraph.nn.losses import binary_cross_entropy
    >>> binary_cross_entropy(ng.tensor([0.5, 0.9]), ng.tensor([1.0, 1.0]))
    tensor(0.3993)
    """
    _check_reduction(reduction)
    input, target = _as_tensor(input, "input"), _as_tensor(target, "target")
    if input.shape != target.shape:
        raise ValueError(
            f"Using a target size ({_torch_size(target.shape)}) that is different "
            f"to the input size ({_torch_size(input.shape)}) is deprecated. Please "
            "ensure they have the same size."
        )
    values = input.detach()._data
    if np.any(~((values >= 0) & (values <= 1))):
        raise RuntimeError(
            "all elements of input should be between 0 and 1: pass "
            "probabilities (apply sigmoid first), or use "
            "binary_cross_entropy_with_logits on the raw scores"
        )
    loss = BinaryCrossEntropy.apply(input, target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """Binary cross-entropy of ``sigmoid(input)``, computed stably from the logits.

    ``log(1 + exp(-x))`` is written as ``m + log(exp(-m) + exp(-x - m))`` with
    ``m = max(-x, 0)``, so no ``exp`` overflows for logits of any size.

    >>> import naivegraph as ng
    >>> from naivegraph.nn.losses import binary_cross_entropy_with_logits as bce
    >>> bce(ng.tensor([1000.0, -1000.0]), ng.tensor([0.0, 1.0]))
    tensor(1000.)
    """
    _check_reduction(reduction)
    input, target = _as_tensor(input, "input"), _as_tensor(target, "target")
    if input.shape != target.shape:
        raise ValueError(
            f"Target size ({_torch_size(target.shape)}) must be the same as input "
            f"size ({_torch_size(input.shape)})"
        )
    if any(isinstance(w, Tensor) and w.requires_grad for w in (weight, pos_weight)):
        # a trainable weight gets its gradient through the composed formula
        return _reduce(_logits_loss(input, target, weight, pos_weight), reduction)
    return BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction)


def _softplus_neg(x: Tensor) -> Tensor:
    """``log(1 + exp(-x))`` as ``m + log(exp(-m) + exp(-x - m))``, ``m = max(-x, 0)``."""
    shift = (-x).clamp(min=0)
    return shift + ((-shift).exp() + (-x - shift).exp()).log()


def _logits_loss(input: Tensor, target: Tensor, weight, pos_weight) -> Tensor:
    """The elementwise loss ``(1 - t) x + (1 + (pw - 1) t) log(1 + exp(-x))``, weighted."""
    if pos_weight is None:
        loss = (1 - target) * input + _softplus_neg(input)
    else:
        log_weight = (pos_weight - 1) * target + 1
        loss = (1 - target) * input + log_weight * _softplus_neg(input)
    return loss if weight is None else loss * weight


class BinaryCrossEntropyWithLogits(Function):
    """The loss as one node, reduction included, as torch records it
    (``BinaryCrossEntropyWithLogitsBackward0``); d/dx is ``(1 - t) - lw sigmoid(-x)``."""

    @staticmethod
    def forward(ctx, input, target, weight, pos_weight, reduction: str) -> Tensor:
        ctx.save_for_backward(input, target)
        ctx.save_for_forward(input, target)
        ctx.weight, ctx.pos_weight, ctx.reduction = weight, pos_weight, reduction
        return _reduce(_logits_loss(input, target, weight, pos_weight), reduction)

    @staticmethod
    def jvp(ctx, input_tangent: Tensor, target_tangent: Tensor, *_) -> Tensor:
        """Forward mode: each element's partial derivatives (backward's) times the
        tangents, weighted and reduced as the loss is."""
        input, target = ctx.saved_tensors
        weight, pos_weight = ctx.weight, ctx.pos_weight
        log_weight = 1 if pos_weight is None else (pos_weight - 1) * target + 1
        d_input = (1 - target) - log_weight * (-input).sigmoid()
        d_target = (
            -input if pos_weight is None else -input + (pos_weight - 1) * _softplus_neg(input)
        )
        change = input_tangent * d_input + target_tangent * d_target
        return _reduce(change if weight is None else change * weight, ctx.reduction)

    @staticmethod
    def backward(ctx, grad: Tensor):
        input, target = ctx.saved_tensors
        weight, pos_weight = ctx.weight, ctx.pos_weight
        if ctx.reduction == "mean":
            grad = grad / input.numel()
        scale = grad if weight is None else grad * weight
        grad_input = grad_target = None
        if ctx.needs_input_grad[0]:
            log_weight = 1 if pos_weight is None else (pos_weight - 1) * target + 1
            grad_input = scale * ((1 - target) - log_weight * (-input).sigmoid())
        if ctx.needs_input_grad[1]:
            grad_target = (
                -input if pos_weight is None else (-input + (pos_weight - 1) * _softplus_neg(input))
            )
            grad_target = scale * grad_target
        return grad_input, grad_target, None, None, None


# torch's name for the node, with its overload number
_node_class(BinaryCrossEntropyWithLogits).__name__ = "BinaryCrossEntropyWithLogitsBackward0"


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    ignore_index: int = -100,
    reduction: str = "mean",
) -> Tensor:
    """``nn.functional.nll_loss`` (log-probabilities (N, C, ...), class indices (N, ...)),
    re-exported so the loss modules take all their functions from here."""
    return _functions.nll_loss(input, target, weight, ignore_index, reduction)
