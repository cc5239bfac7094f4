"""Variants of table ops that take torch's extra arguments: ``addmm(beta=, alpha=)`` and
``sum(dtype=)``.  Each is one node, as in torch (``AddmmBackward0``, ``SumBackward0``),
not a cast or a scaling recorded before the op.
"""

from __future__ import annotations

import numpy as np

from .core import OPS, defop, summed_to
from .table import F, _restore


def _addmm_scaled(bias, mat1, mat2, beta=1, alpha=1):
    product = OPS["addmm"].forward(np.zeros((), np.result_type(bias)), mat1, mat2)
    np.broadcast_to(bias, product.shape)  # torch checks the input's shape even for beta=0
    if beta == 0:  # torch ignores the input then, NaN and inf included
        return product * alpha if alpha != 1 else product
    return np.asarray(bias) * beta + (product * alpha if alpha != 1 else product)


defop(
    "addmm_scaled",
    _addmm_scaled,
    [
        lambda g, bias, mat1, mat2, out, beta=1, alpha=1: summed_to(g * beta, bias),
        lambda g, bias, mat1, mat2, out, beta=1, alpha=1: F.matmul(g, F.t(mat2)) * alpha,
        lambda g, bias, mat1, mat2, out, beta=1, alpha=1: F.matmul(F.t(mat1), g) * alpha,
    ],
    saves={0: (), 1: (2,), 2: (1,)},
    doc="``beta * bias + alpha * (mat1 @ mat2)`` (``torch.addmm(..., beta=, alpha=)``).",
)


def _sum_typed(x, dim=None, keepdim=False, dtype=None):
    return OPS["sum"].forward(np.asarray(x).astype(dtype), dim=dim, keepdim=keepdim)


defop(
    "sum_typed",
    _sum_typed,
    [lambda g, x, out, dim=None, keepdim=False, dtype=None: _restore(g, x, dim, keepdim)],
    saves=(),
    doc="The sum in ``dtype`` (``x.sum(dtype=...)``); the gradient comes back in x's dtype.",
)
