"""Custom autograd Functions built around a learner's backward (x ** 3 and x @ w, the
lesson 12 exercises), with the right backward of each and the phrases of the linear
answer that no hint may state."""

from __future__ import annotations

import naivegraph as ng

LINEAR_SECRETS = ("grad_output @ w.T", "x.T @ grad_output", "w.T", "x.T")


def cube_with(backward):
    """A Function computing x ** 3 whose backward is ``backward``."""

    class Cube(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

    Cube.backward = staticmethod(backward)
    return Cube


def cube_right(ctx, grad_output):
    (x,) = ctx.saved_tensors
    return 3 * x**2 * grad_output


def linear_with(backward):
    """A Function computing x @ w whose backward is ``backward``."""

    class Linear(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x @ w

    Linear.backward = staticmethod(backward)
    return Linear


def linear_right(ctx, grad_output):
    x, w = ctx.saved_tensors
    grad_x = grad_w = None
    if ctx.needs_input_grad[0]:
        grad_x = grad_output @ w.T
    if ctx.needs_input_grad[1]:
        grad_w = x.T @ grad_output
    return grad_x, grad_w
