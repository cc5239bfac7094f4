"""Checkers of lesson 07: static vs dynamic."""

from __future__ import annotations

import ast

import numpy as np

import naivegraph as ng
import naivegraph.static as ns

from ..checking import (
    Result,
    answer,
    as_array,
    blank_function,
    checker,
    close,
    correct,
    crash_message,
    failed,
    is_blank,
    not_done,
    not_yet,
    returned_blank,
    show,
)


@checker(
    "07-1",
    answer="return ng.where(x > 0, x * 2, x * -1): ng.where chooses per element. On "
    "tensors it computes at once; while tracing it records a `where` node, so the "
    "choice is made inside the graph on every run instead of once by Python.",
)
def check_where_fix(f) -> Result:
    """``f(x)``: x * 2 where x > 0, else x * -1, written so that ``ns.trace`` can record it."""
    ex = "07-1"
    bad = blank_function(ex, f)
    if bad is not None:
        return bad
    try:
        eager = f(ng.tensor([1.0, -2.0]))
    except TypeError as exc:
        if "static graph nodes do not mix" not in str(exc):
            return failed(ex, crash_message(exc))
        return not_yet(
            ex,
            [
                crash_message(exc).partition(": ")[0] + ": a static-graph op (ns.*) was "
                "given tensors. ns.* ops build nodes of a static graph you construct "
                "yourself; your function is dynamic code that must run on tensors too, "
                "and ns.trace records its ng.* ops. Choose per element with ng.where.",
            ],
            gave="a static-graph op called on tensors",
        )
    except Exception as exc:  # any error: reported to the learner, never raised
        return failed(ex, crash_message(exc))
    blank = returned_blank(ex, eager)
    if blank is not None:
        return blank
    try:
        traced = ns.trace(f, np.ones(2))
    except Exception as exc:  # any error: reported to the learner, with the library's text
        if "do not mix" in str(exc):
            return not_yet(
                ex,
                [
                    "tracing failed: your function makes a tensor while it runs (a factory "
                    "such as ng.zeros_like or ng.tensor computes its values at once), and "
                    "while tracing x is a graph node with no value yet: a tensor and a node "
                    "do not mix. Compare x with a plain Python number, which both modes "
                    "take as it is.",
                    "choose per element with a function that takes (condition, value where "
                    "true, value where false); use the ng.* one, which works in both modes.",
                ],
                gave="a function that makes a tensor while it is traced",
            )
        return not_yet(
            ex,
            [
                f"tracing failed: {_why_untraceable(exc)} The error says what to use "
                f"instead:\n{type(exc).__name__}: {_as_sentence(str(exc))}",
                "choose per element with a function that takes (condition, value where "
                "true, value where false); use the ng.* one, which works in both modes.",
            ],
            gave="a function that cannot be traced",
        )
    # entries near the threshold 0 tell a wrong threshold (x > 0.5, x >= 1, x > -0.5),
    # down to the smallest float64 numbers (x > 1e-9, x > -1e-300) and both zeros
    cases = (
        [1.0, 2.0], [-1.0, -2.0], [3.0, -1.0], [0.3, -0.3], [0.01, -0.01], [1e-6, -1e-6],
        [1e-300, -1e-300], [5e-324, -5e-324], [0.0, -0.0],
    )
    gots = []
    for feed in cases:
        stop, got = answer(ex, traced, np.array(feed))
        if stop is not None:
            return stop
        gots.append(as_array(got))
    want = [np.where(np.array(c) > 0, np.array(c) * 2, np.array(c) * -1) for c in cases]
    reshaped = next((g for g in gots if g.shape != (2,)), None)
    if reshaped is not None:
        return not_yet(
            ex,
            [f"your function returns values of shape {reshaped.shape} for an x of shape "
             "(2,): the rule gives one entry per element of x, so the result has x's "
             "shape. A reduction (a sum, a mean) at the end, or on the way, loses that."],
            gave=f"a result of shape {reshaped.shape}",
        )
    if all(_same(g, w) for g, w in zip(gots, want)):
        if not close(eager, [2.0, 2.0], shape_free=False):
            return not_yet(ex, ["traced it is right; called on a tensor (dynamic mode) it "
                                "gives something else: use ops that work in both modes."],
                           gave=show(eager))
        return correct(
            ex,
            "the choice now lives in the graph: one traced graph serves every input, and "
            "the same function still runs eagerly.",
        )
    wrong = next(k for k, (g, w) in enumerate(zip(gots, want)) if not _same(g, w))
    whole = [_same(g, np.array(c) * 2) or _same(g, np.array(c) * -1) for g, c in zip(gots, cases)]
    if all(close(g, np.array(c) * 2) for g, c in zip(gots, cases)):
        hint = "negative entries must be treated differently from positive ones."
    elif all(whole) and not all(_same(g, np.array(c) * -1) for g, c in zip(gots, cases)):
        hint = ("your function chooses one branch for the whole input: a condition on a "
                "reduction of x (its sum, its mean) decides once for every entry, as "
                "branchy's `if` did. The rule chooses per element, each entry by its own "
                "sign.")
    elif close(gots[1], cases[1]):
        hint = "where x <= 0 the entry must be multiplied by -1, not kept."
    elif wrong >= 3:
        hint = ("right for entries far from 0, wrong for entries close to it: the condition "
                "must split the entries exactly where the rule does, at x > 0.")
    else:
        hint = "check both branches: x * 2 where x > 0, x * -1 elsewhere, per element."
    case = ", ".join(f"{v:g}" for v in cases[wrong])
    got = ", ".join(f"{v:g}" for v in gots[wrong].ravel())
    return not_yet(ex, [hint], gave=f"[{got}] for x = [{case}]")


def _same(got: np.ndarray, want: np.ndarray) -> bool:
    """Equal to rounding, whatever the size of the entries: a threshold of 1e-9 is off at
    x = 1e-300, which no absolute tolerance would see."""
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=1e-12, atol=0.0))


def _as_sentence(text: str) -> str:
    """``text`` ending in a full stop, so the hint that follows starts a new sentence."""
    text = text.rstrip()
    return text if text.endswith((".", "!", "?")) else text + "."


def _why_untraceable(exc: Exception) -> str:
    """What the learner's function asked of a traced node that it cannot give."""
    if "numpy array" in str(exc):
        return ("a numpy function (np.*) computes on values at once, and a traced node has "
                "no value yet: numpy cannot record it in the graph.")
    if "indexing with a node" in str(exc):
        return ("indexing or assigning with a mask computed from x does not trace: while "
                "tracing, the mask is a node with no value yet, so Python cannot pick the "
                "elements. Choose per element with ng.where, which records the choice in "
                "the graph and also runs on tensors.")
    if isinstance(exc, AttributeError):
        return ("your function uses a method of tensors that a traced graph node does not "
                "have: while tracing, every step must be an op both modes know.")
    return "a Python `if` needs a value a traced node does not have yet."


@checker(
    "07-2",
    answer="traced: [2, 4]; eager: [10, 20]. Tracing ran scaled once, while SCALE was 2: "
    "the graph holds the number 2 as a constant, not the name SCALE. Eager mode "
    "reads SCALE on every call and sees 10.",
)
def check_trace_pitfall(traced_result, eager_result) -> Result:
    """f(x) = x * SCALE traced while SCALE = 2; then SCALE = 10: the predicted traced
    f([1, 2]) and eager f([1, 2])."""
    ex = "07-2"
    if is_blank((traced_result, eager_result)):
        return not_done(ex)
    calls, used = _cell_calls(("traced", "scaled"))
    if calls or used:
        said = (f"calls {' and '.join(calls)}" if calls else
                f"uses {' and '.join(used)} (under another name, or its graph)")
        return not_yet(
            ex,
            [f"your answer cell {said}: the exercise asks you to "
             "predict, before running anything, what each call gives. Type your "
             "prediction in as a list of numbers.",
             "work out what the traced graph holds and what eager mode reads at each call; "
             "the cell after the exercise runs both."],
            gave="results computed by running, not predicted",
        )
    typed = [name for name, v in (("traced_result", traced_result),
                                  ("eager_result", eager_result)) if _computed(v)]
    if typed:
        return not_yet(
            ex,
            [f"give {' and '.join(typed)} as a plain list of Python numbers, not an array, "
             "a numpy number or a tensor: the exercise asks you to predict each result "
             "and type it in as a list.",
             "work out what the traced graph holds and what eager mode reads at each call; "
             "the cell after the exercise runs both."],
            gave="an array or a tensor, not a plain list",
        )
    try:
        traced, eager = as_array(traced_result), as_array(eager_result)
    except Exception:  # not numbers: reported, never raised
        return failed(ex, "give each result as a list of two numbers, like [0.0, 0.0].")
    for name, got in (("traced", traced), ("eager", eager)):
        if got.shape != (2,):
            return not_yet(
                ex,
                [f"the {name} result should have one entry per element of x = [1, 2]: a "
                 f"list of two numbers, not something of shape {got.shape}."],
                gave=f"{name} {show(got)}",
            )
    right_traced = close(traced, [2.0, 4.0], shape_free=False)
    right_eager = close(eager, [10.0, 20.0], shape_free=False)
    if right_traced and right_eager:
        return correct(
            ex, "the trace froze SCALE = 2 into a constant; eager mode reads it every call."
        )
    if close(traced, [10.0, 20.0], shape_free=False) and close(eager, [2.0, 4.0],
                                                                shape_free=False):
        return not_yet(
            ex,
            ["your two predictions are swapped: traced_result is what the traced graph "
             "gives, eager_result what calling scaled gives. Which of them reads SCALE "
             "again at every call?"],
            gave="the two results swapped",
        )
    if not right_eager:
        return not_yet(
            ex,
            ["eager mode runs the Python line `x * SCALE` on every call: what does SCALE "
             "hold now?"],
            gave=f"eager {show(eager)}",
        )
    if close(traced, [10.0, 20.0]):
        hint = ["tracing ran scaled once, before SCALE changed: did it record the name SCALE "
                "or the number it held?", "look at the drawing of traced.graph above."]
    else:
        hint = ["the traced graph multiplies x by one fixed number: which one was SCALE when "
                "ns.trace ran?"]
    return not_yet(ex, hint, gave=f"traced {show(traced)}")


def _computed(value) -> bool:
    """Whether ``value`` (or an entry of a list of them) is an array, a numpy number or a
    tensor: what running the code gives, where a typed-in prediction is Python numbers."""
    if isinstance(value, (np.ndarray, np.generic, ng.Tensor)):
        return True
    return isinstance(value, (list, tuple)) and any(_computed(v) for v in value)


def _cell_calls(names: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """The names among ``names`` that the notebook cell now running calls, and those it
    otherwise reads (``t = traced``, ``traced.graph.run(...)``, ``map(scaled, ...)``).

    A prediction typed in and one computed with ``.tolist()`` are the same numbers; the
    cell's source tells them apart: a prediction needs neither function, so any read of
    one means the cell ran it another way.  Outside IPython, or when the source does not
    parse, there is no cell to read and nothing is found.
    """
    try:
        from IPython import get_ipython

        shell = get_ipython()
        source = shell.user_ns["_ih"][-1] if shell is not None else ""
        tree = ast.parse(source)
    except Exception:  # no IPython, no history, or a cell that is not Python: no calls known
        return [], []
    called, read = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func.value if isinstance(node.func, ast.Attribute) else node.func
            if isinstance(func, ast.Name):
                called.add(func.id)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            read.add(node.id)
    calls = [name for name in names if name in called]
    return calls, [name for name in names if name in read and name not in called]
