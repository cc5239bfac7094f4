"""Whole-function derivatives built on ``autograd.grad``: Jacobians and Hessians."""

from __future__ import annotations

from typing import Callable

import numpy as np

from .engine import grad
from .functions import stack
from .tensor import Tensor


def _prepare(inputs):
    single = isinstance(inputs, Tensor)
    inputs = (inputs,) if single else tuple(inputs)
    for x in inputs:
        if not isinstance(x, Tensor):
            raise TypeError(f"jacobian/hessian inputs must be Tensors, got {type(x).__name__}")
    # An integer input cannot require grad: torch raises here too (no zero Jacobian).
    return single, tuple(x.detach().requires_grad_(True) for x in inputs)


def jacobian(func: Callable, inputs, create_graph: bool = False):
    """d func(inputs) / d inputs, shaped ``output.shape + input.shape``.

    >>> import naivegraph as ng
    >>> J = ng.autograd.functional.jacobian(lambda x: x ** 2, ng.tensor([1., 2.]))
    >>> J
    tensor([[2., 0.],
            [0., 4.]])
    """
    single, xs = _prepare(inputs)
    out = func(*xs)
    if not isinstance(out, Tensor):
        raise TypeError("jacobian: the function must return a single Tensor")
    rows = [[] for _ in xs]
    flat = out.reshape(-1) if out.ndim else out.reshape(1)
    for k in range(flat.shape[0]):
        if not out.requires_grad:
            grads = (None,) * len(xs)
        else:
            grads = grad(
                flat[k], xs, retain_graph=True, create_graph=create_graph, allow_unused=True
            )
        for i, (x, g) in enumerate(zip(xs, grads)):
            rows[i].append(
                g if g is not None else Tensor._make(np.zeros(x.shape, x.dtype), False, None, 0)
            )
    results = tuple(stack(r).reshape(out.shape + x.shape) for r, x in zip(rows, xs))
    return results[0] if single else results


def hessian(func: Callable, inputs):
    """Second derivatives of a scalar function, shaped ``input.shape + input.shape``.

    >>> import naivegraph as ng
    >>> ng.autograd.functional.hessian(lambda x: (x ** 3).sum(), ng.tensor([1., 2.]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    single, xs = _prepare(inputs)

    def gradients(*args):
        out = func(*args)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError("hessian: the function must return a single-element tensor")
        return grad(out, args, create_graph=True, allow_unused=True)

    # Row block i is the Jacobian of dfunc/dx_i with respect to every input.
    blocks = []
    for i, x in enumerate(xs):

        def ith(*args, i=i, x=x):
            g = gradients(*args)[i]  # None: func does not depend on x_i
            return g if g is not None else Tensor._make(np.zeros(x.shape, x.dtype), False, None, 0)

        blocks.append(jacobian(ith, xs))
    return blocks[0][0] if single else tuple(tuple(row) for row in blocks)
