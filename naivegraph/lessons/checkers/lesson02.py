"""Checkers of lesson 02: leaf tensors."""

from __future__ import annotations

from typing import Any

import naivegraph as ng

from ..checking import (
    Result,
    answer,
    as_bools,
    checker,
    correct,
    failed,
    is_blank,
    not_callable,
    not_done,
    wrong,
)


@checker("02-1")
def check_leaf_flags(is_leaf, requires_grad) -> Result:
    """(is_leaf, requires_grad) of a, b, c, d in: a = ones(3,4, rg=True); b = zeros; c = a + b; d = c.sum()."""
    ex = "02-1"
    if is_blank((is_leaf, requires_grad)):
        return not_done(ex)
    want_leaf, want_rg = (True, True, False, False), (True, False, True, True)
    got_leaf, got_rg = as_bools(is_leaf), as_bools(requires_grad)
    if got_leaf is None or got_rg is None or len(got_leaf) != 4 or len(got_rg) != 4:
        return failed(
            ex,
            "expected two tuples of four booleans (for a, b, c, d), e.g. "
            "(True, False, True, True); hint: write True/False, not strings.",
        )
    if got_rg != want_rg:
        return wrong(
            ex,
            f"requires_grad = {want_rg}",
            str(got_rg),
            "an op's output requires grad as soon as ONE input does; b was created "
            "without requires_grad, so it does not.",
        )
    if got_leaf != want_leaf:
        return wrong(
            ex,
            f"is_leaf = {want_leaf}",
            str(got_leaf),
            "a tensor is a leaf when it has no grad_fn: created by you (a, b), not "
            "by an op that records history (c, d). A tensor that does not require "
            "grad is always a leaf.",
        )
    return correct(
        ex,
        "a and b are leaves (made by you); c and d require grad because a does, and "
        "are not leaves because an op made them.",
    )


def _fn_name(x) -> Any:
    if x is None or isinstance(x, str):
        return x
    if isinstance(x, tuple) and len(x) == 2:
        return _fn_name(x[0])
    if hasattr(x, "name") and callable(x.name):
        return x.name()
    return type(x).__name__


@checker("02-2")
def check_next_functions(z_next, y_next) -> Result:
    """Names in z.grad_fn.next_functions and y.grad_fn.next_functions for y = w * x; z = y + b."""
    ex = "02-2"
    if (
        z_next is Ellipsis
        or y_next is Ellipsis
        or is_blank(z_next, False)
        or is_blank(y_next, False)
    ):
        return not_done(ex)
    try:
        z_names = [_fn_name(v) for v in z_next]
        y_names = [_fn_name(v) for v in y_next]
    except TypeError:
        return failed(
            ex,
            "expected two lists, e.g. ['AddBackward0', None]; hint: one entry per "
            "input of the op, in order.",
        )
    if z_names != ["MulBackward0", "AccumulateGrad"]:
        return wrong(
            ex,
            "z: ['MulBackward0', 'AccumulateGrad']",
            str(z_names),
            "z = y + b: the first input y was made by a multiplication, so its node "
            "is y.grad_fn; the second input b is a leaf that requires grad, so its node "
            "is the AccumulateGrad that will store b.grad.",
        )
    if y_names != ["AccumulateGrad", None]:
        return wrong(
            ex,
            "y: ['AccumulateGrad', None]",
            str(y_names),
            "y = w * x: w requires grad (AccumulateGrad); x does not, so nothing "
            "needs a gradient there and the entry is None.",
        )
    return correct(
        ex,
        "next_functions lists one (node, index) per input: the grad_fn of a computed "
        "input, AccumulateGrad for a leaf that requires grad, None otherwise.",
    )


@checker("02-3")
def check_find_leaves(find_leaves) -> Result:
    """``find_leaves(t)`` returns the leaf tensors that ``t``'s gradient reaches."""
    ex = "02-3"
    bad = not_callable(ex, find_leaves)
    if bad is not None:
        return bad
    a = ng.tensor([1.0, 2.0], requires_grad=True)
    b = ng.tensor(3.0, requires_grad=True)
    c = ng.tensor([5.0, 6.0])  # no grad: must not be reported
    cases = [
        ("(a * b + c).sum()", (a * b + c).sum(), {id(a), id(b)}),
        ("(a.exp() * a).mean()", (a.exp() * a).mean(), {id(a)}),
        ("(b * b * b)", b * b * b, {id(b)}),
    ]
    names = {id(a): "a", id(b): "b", id(c): "c"}
    for text, tensor, want in cases:
        stop, got = answer(ex, find_leaves, tensor)
        if stop is not None:
            return stop
        try:
            got_ids = {id(t) for t in got}
        except TypeError:
            return failed(
                ex,
                f"expected a list of tensors, got {type(got).__name__}; hint: "
                "collect `node.variable` of every AccumulateGrad you meet.",
            )
        if got_ids != want:
            shown = sorted(names.get(i, "<not a leaf>") for i in got_ids)
            return wrong(
                ex,
                f"{sorted(names[i] for i in want)} for {text}",
                str(shown),
                "walk grad_fn.next_functions with a stack; skip None entries; an "
                "AccumulateGrad node's .variable is the leaf; visit each node once "
                "and each leaf once.",
            )
    return correct(ex, "your walk finds exactly the leaves that receive a gradient.")
