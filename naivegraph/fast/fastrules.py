"""Backward rules written out for a dense layer's nodes: ``MmBackward0``, ``ReluBackward0``
and cross_entropy's pair ``NllLossBackward0`` / ``LogSoftmaxBackward0``.

The op table writes each rule once for three modes (arrays, tensors with
``create_graph``, static nodes), with the library's own dispatching functions:
matmul's rule of two matrices is ``F.matmul(g, F.transpose(y, -1, -2))`` after the
vector cases, relu's ``F.where(F.le(out, 0.0), 0.0, g)``.  On arrays each of those
calls goes through ``ops.core.call``, the backend lookup and a quiet forward: in a
small MLP step, more Python per rule than numpy work.  In a plain
``backward()`` (:mod:`.fastback`, where every value is an array and numpy's error
state already ignores everything) these rules call the same numpy functions with the
same operands directly:

- matmul of two matrices: ``np.matmul(g, y.T)`` and ``np.matmul(x.T, g)`` (``y.T`` is
  the view ``np.swapaxes(y, -1, -2)`` makes: the same call, the same bits);
- relu: ``fast.where(out <= 0, 0, g)``, the selection the table's rule makes (a
  selection: the same bits whichever zero it is written with, as long as it is +0);
- nll_loss and log_softmax: :func:`naivegraph.fast.nll_loss_grad`'s and
  :func:`naivegraph.fast.log_softmax_grad`'s kernels, without the table's partial and
  the error-state switch around them.

Each rule checks what its shortcut assumes (arrays of one floating dtype, the shapes
the forward made) and otherwise returns the table's rule's answer.  :mod:`.fastback`
runs them in place of the table's (``fastback._direct_rules``).  Switch: ``on`` (and
the whole layer's ``NAIVEGRAPH_FAST=0``, which turns the fast backward off).

What it saves in an MLP step: ``benchmarks/README.md``, "The fast layer, module by
module".
"""

from __future__ import annotations

import numpy as np

from ..ops import OPS
from . import tricks as fast

#: this trick's own switch (the whole fast layer's switch turns it off too)
on: bool = True

_readable_mm = OPS["matmul"].partials
_readable_relu = OPS["relu"].partials[0]
_readable_nll = OPS["nll_loss"].partials[0]
_readable_log_softmax = OPS["log_softmax"].partials[0]


def _matrices(g, other) -> bool:
    """``g`` and the saved operand ``other``: 2-D arrays of one floating dtype."""
    return (
        type(g) is np.ndarray
        and type(other) is np.ndarray
        and g.ndim == 2
        and other.ndim == 2
        and g.dtype is other.dtype
        and g.dtype.kind == "f"
    )


def mm_grad_self(g, x, y, out):
    """Matmul's rule for ``x`` (``g @ y^T``) when both operands are matrices."""
    if on and _matrices(g, y) and len(x.shape) == 2:
        grad = np.matmul(g, y.T)
        if grad.shape == x.shape:
            return grad
    return _readable_mm[0](g, x, y, out)


def mm_grad_other(g, x, y, out):
    """Matmul's rule for ``y`` (``x^T @ g``) when both operands are matrices."""
    if on and _matrices(g, x) and len(y.shape) == 2:
        grad = np.matmul(x.T, g)
        if grad.shape == y.shape:
            return grad
    return _readable_mm[1](g, x, y, out)


def relu_grad(g, x, out):
    """Relu's rule: ``g`` where the output is not ``<= 0`` (NaN passes), else +0."""
    if (
        on
        and type(g) is np.ndarray
        and type(out) is np.ndarray
        and g.dtype is out.dtype
        and g.dtype.kind == "f"
        and g.shape == out.shape
        and g.ndim
    ):
        return fast.where(np.less_equal(out, 0.0), 0, g)
    return _readable_relu(g, x, out)


def nll_loss_grad(g, logp, target, out, reduction="mean"):
    """nll_loss's rule for a mean or a sum over a batch (N, C) of class indices."""
    if (
        on
        and fast.loss_gradients
        and type(g) is np.ndarray
        and not g.ndim
        and (reduction == "mean" or reduction == "sum")
        and type(target) is np.ndarray
    ):
        shape = logp.shape
        if (
            shape is not None
            and len(shape) == 2
            and target.shape == shape[:1]
            and None not in shape
        ):
            return fast._nll_loss_grad(g, shape, target, reduction)
    return _readable_nll(g, logp, target, out, reduction)


def log_softmax_grad(g, x, out, dim):
    """log_softmax's rule, ``g - exp(out) * sum(g, dim, keepdim=True)``, on arrays of
    one floating dtype and shape."""
    if (
        on
        and fast.loss_gradients
        and type(g) is np.ndarray
        and type(out) is np.ndarray
        and g.dtype is out.dtype
        and out.dtype.kind == "f"
        and g.shape == out.shape
        and type(dim) is int
        and -out.ndim <= dim < out.ndim
    ):
        return fast._log_softmax_grad(g, out, dim % out.ndim)
    return _readable_log_softmax(g, x, out, dim)


#: (op name, input position) -> the rule :mod:`.fastback` runs instead of the table's
RULES = {
    ("matmul", 0): mm_grad_self,
    ("matmul", 1): mm_grad_other,
    ("relu", 0): relu_grad,
    ("nll_loss", 0): nll_loss_grad,
    ("log_softmax", 0): log_softmax_grad,
}
