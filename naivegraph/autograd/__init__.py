"""``ng.autograd``: the functional autograd API, custom Functions and the old Variable."""

from __future__ import annotations

import warnings

from ..check import GradcheckError, gradcheck, gradgradcheck
from ..dynamic.anomaly_mode import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from ..dynamic.engine import backward, grad
from ..dynamic.function import Function, FunctionCtx
from ..dynamic.grad_mode import enable_grad, no_grad, set_grad_enabled
from ..dynamic.tensor import Tensor
from . import forward_ad, function, functional, graph, profiler


def Variable(data, requires_grad: bool = False, volatile: bool = False) -> Tensor:
    """The pre-0.4 PyTorch wrapper, kept so old tutorials run: it returns a Tensor.

    ``volatile=True`` no longer does anything; use ``with ng.no_grad():`` instead.

    >>> import naivegraph as ng
    >>> v = ng.autograd.Variable(ng.ones(3, 4), requires_grad=True)
    >>> type(v).__name__, v.requires_grad
    ('Tensor', True)
    """
    if volatile:
        warnings.warn(
            "volatile was removed and now has no effect. Use `with ng.no_grad():` instead.",
            UserWarning,
            stacklevel=2,
        )
    if isinstance(data, Tensor):
        t = Tensor._make(data._data, False, None, 0)
    else:
        t = Tensor(data)
    if requires_grad:
        t.requires_grad = True
    return t


__all__ = [
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "Variable",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "forward_ad",
    "function",
    "functional",
    "grad",
    "graph",
    "gradcheck",
    "profiler",
    "gradgradcheck",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "no_grad",
    "set_detect_anomaly",
    "set_grad_enabled",
]
