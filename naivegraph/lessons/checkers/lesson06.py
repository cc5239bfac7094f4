"""Checkers of lesson 06: static graphs."""

from __future__ import annotations

import numpy as np

from ..checking import (
    Result,
    answer,
    as_array,
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


@checker("06-1")
def check_static_model(graph, x, loss) -> Result:
    """The l1..l4 model built in a static graph: placeholder x, Variables w1..w3, node loss."""
    ex = "06-1"
    if is_blank(loss) or is_blank(graph) or is_blank(x):
        return not_done(ex)
    if not hasattr(loss, "inputs") or not hasattr(graph, "forward"):
        return failed(
            ex,
            f"expected a static node for loss, got {type(loss).__name__}; hint: "
            "build it from x and the Variables with +, * and ns.mean.",
        )
    try:
        graph.forward({x: np.ones((2, 2))})
        value = loss.value
    except Exception as exc:  # any error: reported to the learner
        return failed(ex, f"running the graph failed: {type(exc).__name__}: {exc}")
    if not close(value, 40.0):
        return wrong(
            ex,
            "loss = 40 for x = ones(2, 2)",
            show(value),
            "l1 = x * w1, l2 = l1 + w2, l3 = l1 * w3, loss = mean(l2 * l3).",
        )
    try:
        graph.forward({x: 2 * np.ones((2, 2))})
        value2 = loss.value
    except Exception as exc:  # any error: reported to the learner
        return failed(ex, f"running the graph failed: {type(exc).__name__}: {exc}")
    if not close(value2, (4 + 3) * (4 * 4)):
        return wrong(
            ex,
            "loss = 112 for x = 2 * ones(2, 2)",
            show(value2),
            "use the placeholder x, not a constant, so new feeds change the result.",
        )
    return correct(ex, "the graph gives 40 for ones and 112 for twos: built once, run twice.")


@checker("06-2")
def check_compiled_step(f) -> Result:
    """``f(x)`` compiled from the graph returns [loss, d loss/d w1, d loss/d w2, d loss/d w3]."""
    ex = "06-2"
    bad = not_callable(ex, f)
    if bad is not None:
        return bad
    stop, out = answer(ex, f, np.ones((2, 2)))
    if stop is not None:
        return stop
    try:
        values = [float(as_array(v)) for v in out]
    except Exception:  # any error: reported to the learner
        return failed(
            ex,
            f"expected a list of 4 scalars, got {show(out)}; hint: "
            "outputs=[loss, *ns.gradients(loss, [w1, w2, w3])].",
        )
    if len(values) != 4:
        return wrong(ex, "4 outputs", f"{len(values)}", "fetch loss and the three gradients.")
    if not close(values, [40.0, 28.0, 8.0, 10.0]):
        return wrong(
            ex,
            "[40, 28, 8, 10]",
            show(values),
            "list the outputs as loss, then the gradients in the order w1, w2, w3.",
        )
    ok, out2 = call_answer(ex, f, 2 * np.ones((2, 2)))
    if not ok:
        return out2
    # l1 = 2x*... at x = 2: l1 = 4, l2 = 7, l3 = 16; dw1 = x*(l3 + l2*w3) summed/4 = 2*(16+28)=88
    if not close([float(as_array(v)) for v in out2], [112.0, 88.0, 16.0, 28.0]):
        return wrong(
            ex,
            "[112, 88, 16, 28] for x = 2 * ones",
            show(out2),
            "the compiled function must use its argument as the placeholder feed.",
        )
    return correct(ex, "one compiled function returns the loss and all three symbolic gradients.")


@checker("06-3")
def check_memory_plan(peak_values) -> Result:
    """Most intermediate values alive at once when a planned run executes a chain of ops."""
    ex = "06-3"
    if is_blank(peak_values):
        return not_done(ex)
    try:
        got = int(peak_values)
    except (TypeError, ValueError):
        return failed(ex, "expected an integer.")
    if got == 2:
        return correct(
            ex,
            "in a chain each value is needed only by the next op: the planner keeps "
            "the input of the running op and its output, then frees the input.",
        )
    hint = (
        (
            "without a plan every one would stay alive; with a plan, count the values alive while "
            "ONE op runs: its input and its output."
        )
        if got != 1
        else "while an op runs, both its input and its output exist."
    )
    return wrong(ex, "2", str(got), hint)
