"""Lessons 10 to 13 as the checker tests use them: the lesson-10 network at its own
sizes with an update a learner writes, and answers several tests hand to the checkers."""

from __future__ import annotations

import numpy as np

import naivegraph as ng
import naivegraph.static as ns

LR = 1e-6
UPDATE_SECRETS = ("assign(w1 - ", "learning_rate * grad_w1")


def lesson_network(update, after=None):
    """The lesson's network at its own sizes (1000 -> 100 -> 10, float32)."""
    rng = np.random.default_rng(0)
    w1_init, w2_init = (rng.standard_normal(s).astype(np.float32) for s in ((1000, 100), (100, 10)))
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 1000))
        y = ns.placeholder("y", shape=(None, 10))
        w1 = ns.Variable(w1_init, name="w1")
        w2 = ns.Variable(w2_init, name="w2")
        loss = ns.sum((ns.matmul(ns.relu(ns.matmul(x, w1)), w2) - y) ** 2.0)
        grad_w1, grad_w2 = ns.gradients(loss, [w1, w2])
        new_w1, new_w2 = update(w1, grad_w1, loss, x), update(w2, grad_w2, loss, x)
    if after is not None:
        after(w1, w2)
    return g, x, y, w1, w2, new_w1, new_w2, LR


def sum_to_shape(grad, shape):
    """12: the right sum_to_shape, summing only the axes a broadcast stretched."""
    extra = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=stretched, keepdims=True)


def sum_by_hand(grad, shape):
    """12: a right sum_to_shape that sums every size-1 axis, stretched or not."""
    grad = grad.sum(axis=tuple(range(grad.ndim - len(shape))))
    return grad.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)


def jacobian_forward(f, x):
    """11: the right forward-mode Jacobian, one jvp per input direction."""
    n = x.shape[0]
    columns = [ng.func.jvp(f, (x,), (ng.eye(n, dtype=x.dtype)[i],))[1] for i in range(n)]
    return ng.stack(columns, dim=1)


def cube_dividing_by_x(ctx, grad_output):
    """12: a cube backward that divides by x (wrong where x is 0)."""
    (x,) = ctx.saved_tensors
    return 3 * x**3 / x * grad_output
