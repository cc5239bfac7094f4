"""Checkers of lesson 03: getting at gradients."""

from __future__ import annotations

import numpy as np

import naivegraph as ng

from ..checking import (
    Result,
    answer,
    checker,
    close,
    correct,
    failed,
    hint_for,
    is_blank,
    not_callable,
    not_done,
    show,
    wrong,
)


@checker("03-1")
def check_double_hook(hook) -> Result:
    """A tensor hook that doubles the gradient flowing through it."""
    ex = "03-1"
    bad = not_callable(ex, hook)
    if bad is not None:
        return bad
    v = ng.tensor([0.0, 1.0, 2.0], requires_grad=True)
    seen = []

    def spy(g):
        seen.append(g)
        return _hooked(g)

    def _hooked(g):
        return hook(g)

    v.register_hook(spy)
    try:
        v.backward(ng.tensor([1.0, 2.0, 3.0]))
    except Exception as exc:  # any error: reported to the learner
        return failed(
            ex,
            f"backward failed with your hook: {type(exc).__name__}: {exc}; hint: the "
            "hook gets the gradient tensor and returns a tensor of the same shape.",
        )
    if v.grad is None:
        return failed(
            ex,
            "v.grad is None after backward; hint: return a tensor (or None to keep "
            "the gradient as it is).",
        )
    got = v.grad
    if close(got, [1.0, 2.0, 3.0]):
        if hook(ng.tensor([1.0])) is None:
            return not_done(
                ex,
                "(your hook returned None, so the gradient was not changed: "
                "`return` the new gradient.)",
            )
        return wrong(ex, "[2, 4, 6]", show(got), "return the new gradient from the hook.")
    if not close(got, [2.0, 4.0, 6.0]):
        return wrong(ex, "[2, 4, 6]", show(got), "double every element: `return grad * 2`.")
    return correct(ex, "a hook that returns a tensor replaces the gradient: v.grad = [2, 4, 6].")


@checker("03-2")
def check_accumulated_grad(x_grad) -> Result:
    """x = 3 (requires grad); y = x ** 2; y.backward(retain_graph=True) twice: x.grad?"""
    ex = "03-2"
    if is_blank(x_grad):
        return not_done(ex)
    if close(x_grad, 12.0):
        return correct(ex, "each backward adds 2x = 6 into x.grad: 6 + 6 = 12.")
    hint = hint_for(
        x_grad,
        [
            ((6.0,), "backward does not overwrite .grad, it adds to it; zero it between steps."),
            (
                (9.0, 18.0),
                "the gradient of x**2 is 2x, not x**2; then remember the second backward.",
            ),
        ],
        "d(x**2)/dx = 2x = 6 at x = 3; what happens to .grad after a second backward?",
    )
    return wrong(ex, "12", show(x_grad), hint)


@checker("03-3")
def check_manual_gradient(gradf) -> Result:
    """``gradf(x)``: the derivative of x**2 * exp(x), written by hand."""
    ex = "03-3"
    bad = not_callable(ex, gradf)
    if bad is not None:
        return bad
    xs = np.array([[-1.5, -0.3, 0.0, 0.4], [1.0, 1.7, -2.2, 0.9], [2.5, -0.8, 0.1, 1.3]])
    want = 2 * xs * np.exp(xs) + xs**2 * np.exp(xs)
    stop, got = answer(ex, gradf, ng.tensor(xs))
    if stop is not None:
        return stop
    if close(got, want, shape_free=False):
        return correct(ex, "2x e^x + x^2 e^x matches what autograd computes.")
    if close(got, 2 * xs * np.exp(xs)):
        hint = "product rule: you have (x^2)' e^x; add x^2 (e^x)'."
    elif close(got, xs**2 * np.exp(xs)):
        hint = "that is f(x) itself; the derivative of e^x is e^x, but x^2 also changes."
    else:
        hint = "(u v)' = u' v + u v' with u = x^2 and v = e^x."
    return wrong(ex, "2x e^x + x^2 e^x (e.g. 2.7183*3 = 8.1548 at x = 1)", show(got), hint)


@checker("03-4")
def check_second_derivative(first, second) -> Result:
    """f(x) = x**3 at x = 3: first and second derivatives via autograd.grad(create_graph=True)."""
    ex = "03-4"
    if is_blank((first, second)):
        return not_done(ex)
    if not close(first, 27.0):
        return wrong(ex, "first derivative 27", show(first), "d(x^3)/dx = 3x^2 = 27 at x = 3.")
    if close(second, 18.0):
        return correct(ex, "f'(3) = 27 and f''(3) = 18: differentiate the graph that computed f'.")
    hint = hint_for(
        second,
        [
            ((6.0,), "6x, evaluated at x = 3."),
            (
                (27.0, 54.0),
                "differentiate the first derivative (built with create_graph=True) once "
                "more; do not reuse x.grad, which accumulates.",
            ),
        ],
        "d(3x^2)/dx = 6x.",
    )
    return wrong(ex, "second derivative 18", show(second), hint)


@checker("03-5")
def check_vector_backward(x_grad) -> Result:
    """x = [1, 2, 3]; y = x * x; y.backward(gradient=[1, 0.1, 0.01]): x.grad?"""
    ex = "03-5"
    if is_blank(x_grad):
        return not_done(ex)
    want = [2.0, 0.4, 0.06]
    if close(x_grad, want, shape_free=False):
        return correct(ex, "backward(v) computes v^T J = v * 2x = [2, 0.4, 0.06].")
    hint = hint_for(
        x_grad,
        [
            (
                ([2.0, 4.0, 6.0],),
                "you computed 2x; each element is weighted by the matching entry of `gradient`.",
            ),
            (([1.0, 0.2, 0.03],), "d(x*x)/dx is 2x, not x."),
        ],
        "x.grad[i] = gradient[i] * dy[i]/dx[i].",
    )
    return wrong(ex, "[2, 0.4, 0.06]", show(x_grad), hint)
