"""Checkers of lesson 04: in-place operations."""

from __future__ import annotations

import naivegraph as ng

from ..checking import (
    Result,
    answer,
    as_bools,
    checker,
    close,
    correct,
    failed,
    is_blank,
    not_callable,
    not_done,
    show,
    wrong,
)


@checker("04-1")
def check_versions(versions) -> Result:
    """b = a + 2; b[0] = 1000; b.mul_(2); c = b * 3; b += 1: b._version after each line."""
    ex = "04-1"
    if is_blank(versions):
        return not_done(ex)
    try:
        got = [int(v) for v in versions]
    except (TypeError, ValueError):
        return failed(ex, "expected a list of five integers; hint: one _version per line.")
    want = [0, 1, 2, 2, 3]
    if got == want:
        return correct(
            ex,
            "each in-place op adds 1; out-of-place ops (like c = b * 3) leave b "
            "alone: [0, 1, 2, 2, 3].",
        )
    if got == [0, 1, 2, 3, 4]:
        hint = "c = b * 3 makes a NEW tensor; b itself is not changed."
    elif got[0] != 0:
        hint = "a fresh tensor starts at version 0."
    else:
        hint = "indexing assignment, mul_ and += are all in-place."
    return wrong(ex, str(want), str(got), hint)


@checker("04-2")
def check_reset_leaf(reset) -> Result:
    """``reset(a)`` sets every element of a leaf that requires grad to 10, and returns a."""
    ex = "04-2"
    bad = not_callable(ex, reset)
    if bad is not None:
        return bad
    a = ng.tensor([10.0, 5.0, 2.0, 3.0], requires_grad=True)
    stop, got = answer(ex, reset, a)
    if stop is not None:
        return stop
    if got is not a:
        return failed(
            ex,
            "your function returned a different tensor; hint: change `a` itself "
            "(in place, through a.data, a.detach() or under ng.no_grad()) and "
            "return it, so every reference to the leaf sees the new values.",
        )
    if not a.is_leaf or not a.requires_grad:
        return wrong(
            ex,
            "a to stay a leaf that requires grad",
            f"is_leaf={a.is_leaf}, requires_grad={a.requires_grad}",
            "change the values without recording history (no_grad or .data), and do "
            "not detach_() the leaf itself.",
        )
    if not close(a, [10.0] * 4, shape_free=False):
        return wrong(ex, "[10, 10, 10, 10]", show(a), "fill every element with 10.")
    loss = (a * a).mean()
    loss.backward()
    if not close(a.grad, [5.0] * 4):
        return wrong(
            ex,
            "a.grad = [5, 5, 5, 5] after (a*a).mean().backward()",
            show(a.grad),
            "the new values must be in place before the forward pass.",
        )
    return correct(ex, "a is still a leaf, holds 10s, and (a*a).mean() gives a.grad = 5s.")


@checker("04-3")
def check_inplace_predictions(predictions) -> Result:
    """Which of three snippets raises at backward?  (True = raises)"""
    ex = "04-3"
    if is_blank(predictions):
        return not_done(ex)
    got = as_bools(predictions)
    if got is None or len(got) != 3:
        return failed(ex, "expected three booleans, e.g. (True, False, False).")
    want = (True, False, True)
    if got == want:
        return correct(
            ex,
            "(1) mul saved b, then b changed: error. (2) add saves nothing: fine. "
            "(3) exp saves its OUTPUT, which add_ changed: error.",
        )
    hints = [
        "(1) b * b saves b to compute the gradient 2b; b[0] = 1000 bumps its version.",
        "(2) c = b + 1 does not need b's value for backward (d c / d b = 1).",
        "(3) exp saves its result (d e^x / dx = e^x): changing it in place breaks that.",
    ]
    first = next(i for i in range(3) if got[i] != want[i])
    return wrong(ex, str(want), str(got), hints[first])
