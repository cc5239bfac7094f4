"""Checkers of lesson 07: static vs dynamic."""

from __future__ import annotations

import numpy as np

import naivegraph as ng
import naivegraph.static as ns

from ..checking import (
    Result,
    answer,
    call_answer,
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


@checker("07-2")
def check_trace_pitfall(traced_result, eager_result) -> Result:
    """f(x) = x * SCALE traced while SCALE = 2; then SCALE = 10: traced f([1, 2]) and eager f([1, 2])."""
    ex = "07-2"
    if is_blank((traced_result, eager_result)):
        return not_done(ex)
    if not close(eager_result, [10.0, 20.0], shape_free=False):
        return wrong(
            ex,
            "eager f([1, 2]) = [10, 20]",
            show(eager_result),
            "eager mode reads SCALE every time it runs, so it sees 10.",
        )
    if close(traced_result, [10.0, 20.0]):
        return wrong(
            ex,
            "the traced graph to give [2, 4]",
            show(traced_result),
            "tracing ran f once; SCALE was read then and stored as a constant node.",
        )
    if not close(traced_result, [2.0, 4.0], shape_free=False):
        return wrong(
            ex,
            "traced f([1, 2]) = [2, 4]",
            show(traced_result),
            "the recorded graph is x * 2, whatever SCALE is later.",
        )
    return correct(ex, "the trace froze SCALE = 2 into a constant; eager mode reads it every call.")


@checker("07-1")
def check_where_fix(f) -> Result:
    """``f(x)``: x * 2 where x > 0, else x * -1, written so that ``ns.trace`` can record it."""
    ex = "07-1"
    bad = not_callable(ex, f)
    if bad is not None:
        return bad
    stop, eager = answer(ex, f, ng.tensor([1.0, -2.0]))
    if stop is not None:
        return stop
    try:
        traced = ns.trace(f, np.ones(2))
    except Exception as exc:  # any error: reported to the learner
        return failed(
            ex,
            f"tracing failed: {type(exc).__name__}: {str(exc).splitlines()[0]}; "
            "hint: no Python `if` on tensor values: choose with ng.where(cond, a, b).",
        )
    for feed, want in (
        ([1.0, 2.0], [2.0, 4.0]),
        ([-1.0, -2.0], [1.0, 2.0]),
        ([3.0, -1.0], [6.0, 1.0]),
    ):
        ok, got = call_answer(ex, traced, np.array(feed))
        if not ok:
            return got
        if not close(got, want, shape_free=False):
            return wrong(
                ex,
                f"{want} for x = {feed}",
                show(got),
                "ng.where(x > 0, x * 2, x * -1) chooses per element inside the graph.",
            )
    if not close(eager, [2.0, 2.0], shape_free=False):
        return wrong(
            ex,
            "eager f([1, -2]) = [2, 2]",
            show(eager),
            "the same function must work in dynamic mode too.",
        )
    return correct(
        ex,
        "the choice now lives in the graph: one traced graph serves every input, and "
        "the same function still runs eagerly.",
    )
