"""Checkers of lesson 13: from static graphs to compilers.

Each checker rebuilds the lesson's graph and asks the library for the answer (the
compiled plan, ``ns.optimize``, ``ns.trace``), so the expected values are never typed
in here and follow the library if it changes."""

from __future__ import annotations

import re

import numpy as np

import naivegraph.static as ns

from ..checking import PRINTED_FORM, Result, checker, correct, failed, is_blank, not_done, not_yet
from .lesson10 import _runs_instead_of_predicting

F64 = np.float64


# -- 13-1 ----------------------------------------------------------------------------
def _freeing_graph():
    with ns.Graph("freeing") as g:
        x = ns.placeholder("x", shape=(3,), dtype=F64)
        w = ns.Variable(np.array([1.0, 2.0, 3.0]), name="w")
        m = x * w
        e = m.exp()
        s = m.sin()
        t = e * s
        total = t.sum()
    return g, x, e, total


def _frees() -> list[tuple[int, list[str]]]:
    """(step, names freed after it) for every step of the lesson's plan, in order."""
    g, x, e, total = _freeing_graph()
    plan = g.compile([x], [total, e], optimize=False).plan
    return [
        (i + 1, [plan.order[slot].name for slot in freed])
        for i, (_, _, _, freed) in enumerate(plan.steps)
    ]


FREED_FIRST_ANSWER = """("mul_1", 3): %mul_1 (x * w) is read by exp (step 2) and by sin
(step 3), so it dies after step 3; %exp_1 is an output (fetched), so it is never freed,
and the inputs belong to the caller."""


@checker("13-1", answer=FREED_FIRST_ANSWER, predicts=True)
def check_freed_first(answer) -> Result:
    """``(name, step)``: the first value the plan frees, and after which step."""
    ex = "13-1"
    if is_blank(answer):
        return not_done(ex)
    ran = _runs_instead_of_predicting(ex, ("compile", "listing", "Plan"), "the compiler's "
                                      "planner", "a value is freed after the last step that "
                                      "reads it, unless it is fetched.")
    if ran is not None:
        return ran
    try:
        name, step = answer
    except (TypeError, ValueError):
        return failed(
            ex,
            'answer a pair ("name", step), e.g. ("add_1", 2): a name from '
            "the listing and a step number.",
        )
    if isinstance(step, str) and not isinstance(name, str):
        return not_yet(
            ex,
            ["the pair is the wrong way round: answer (name, step), the name first, "
             "then the step's number."],
            gave=repr(answer),
        )
    problem = _pair_problem(name, step)
    if problem is not None:
        return failed(ex, f"hint: {problem}")
    name, step = name.strip().removeprefix("%"), int(step)
    frees = _frees()
    first_step, first_names = next((s, n) for s, n in frees if n)
    if name in first_names and step == first_step:
        return correct(ex, "a value lives until the step that reads it last, unless it is fetched.")
    gave = f"({name!r}, {step})"
    last_use = {n: s for s, names in frees for n in names}
    if name in ("x", "w"):
        hint = (
            "an input or a Variable belongs to the caller (and w keeps its value "
            "across runs): the plan frees only intermediate values."
        )
    elif name == "exp_1":
        hint = (
            "look at the outputs compile was given: a value the caller fetches is "
            "handed back, never freed."
        )
    elif name in first_names:
        hint = (
            "right value; count the steps again: a value is freed after the step "
            "that reads it LAST."
        )
    elif name in last_use:
        hint = (
            f"%{name} is freed, but another value dies earlier: go through the steps "
            "in order and ask, at each, which value was just read for the last time."
        )
    elif name == "sum_1":
        hint = "the sum is the output total: fetched, never freed."
    else:
        hint = "use a name from the listing (without %), of a value the plan computes."
    return not_yet(
        ex,
        [
            hint,
            "for each intermediate, find its readers in the listing; it dies after the "
            "last of them, unless compile returns it.",
        ],
        gave=gave,
    )


def _pair_problem(name, step) -> str | None:
    """What is wrong with the form of ``(name, step)``, or None: a name is the string
    the listing prints, a step a whole number (3.7 is not a step, nor is True)."""
    if not isinstance(name, str):
        what = "a node" if hasattr(name, "op") else f"a {type(name).__name__}"
        return (
            f"the name is {what}: write it as a string, as the listing prints it "
            "(without the %)."
        )
    if isinstance(step, str):
        return "write the step as a number, without quotes."
    if isinstance(step, (bool, np.bool_)) or not isinstance(
        step, (int, np.integer, float, np.floating)
    ):
        return "the step is a whole number: its number in the listing, counted from 1."
    if not np.isfinite(step) or float(step) != int(step):
        return "the step is a whole number: its number in the listing, counted from 1."
    return None


# -- 13-2 ----------------------------------------------------------------------------
def careless_graph():
    """Lesson 13's carelessly written graph: a ``* 1.0``, a ``2.0 * 3.0`` of constants,
    the same ``(a * c).exp()`` twice, and a ``+ 0.0``."""
    with ns.Graph("careless") as g:
        x = ns.placeholder("x", shape=(3,), dtype=F64)
        a = x * F64(1.0)
        c = ns.constant(F64(2.0)) * ns.constant(F64(3.0))
        y = (a * c).exp() + (a * c).exp()
        z = (y + F64(0.0)).sum()
    return g, z


CLEANING = (
    ns.passes.constant_folding,
    ns.passes.algebraic_simplification,
    ns.passes.common_subexpression_elimination,
    ns.passes.dead_node_elimination,
)


def _removed_by_pass() -> dict[str, int]:
    g, z = careless_graph()
    _, report = ns.optimize(g, passes=list(CLEANING), fetches=[z])
    return {r.name: r.removed for r in report.passes}


NODES_REMOVED_ANSWER = """6: simplification removes x * 1.0 (1), CSE merges the second
a * c and then the second exp (2), dead-node elimination drops the three constants
nobody reads once 2.0 * 3.0 is folded and x * 1.0 is gone (3); folding replaces a node
without removing one, and y + 0.0 stays (at y = -0.0 it gives +0.0)."""


@checker("13-2", answer=NODES_REMOVED_ANSWER, predicts=True)
def check_nodes_removed(removed) -> Result:
    """How many nodes the four cleaning passes remove from the lesson's graph."""
    ex = "13-2"
    if is_blank(removed):
        return not_done(ex)
    ran = _runs_instead_of_predicting(ex, ("optimize", "compile"), "the passes",
                                      "go through the listing pass by pass, as the "
                                      "lesson describes each one.")
    if ran is not None:
        return ran
    if isinstance(removed, bool) or not isinstance(removed, (int, np.integer, float)):
        return failed(ex, "answer with one number: how many nodes fewer the new graph has.")
    if not np.isfinite(removed) or float(removed) != int(removed):
        return failed(ex, "a count of nodes is a whole number.")
    by_pass = _removed_by_pass()
    want = sum(by_pass.values())
    got = int(removed)
    if got == want:
        return correct(
            ex,
            "one by simplification, two by CSE, three dead constants; "
            "folding removes nothing itself and y + 0.0 stays.",
        )
    kept_zero = (
        "y + 0.0 is not an identity bit for bit: at y = -0.0 it gives +0.0, so "
        "the simplification keeps it (and its constant)."
    )
    hints = {
        want + 1: kept_zero,
        want + 2: (  # also what ns.optimize removes with fusion: name both slips
            "is fusion in your count? It is not among the four passes run here. And " + kept_zero
        ),
        want - by_pass["dead_node_elimination"]: (
            "what happens to a constant once the node that read it is folded or "
            "simplified away? Nothing reads it any more."
        ),
        want - 1: (
            "count the duplicates again: once the two a * c are merged, the two exp "
            "of them are equal too."
        ),
        want - 2: (
            "count the duplicates again: once the two a * c are merged, the two exp "
            "of them are equal too."
        ),
    }
    size = len(careless_graph()[0].nodes)
    if got < 0:
        hint = (
            "a number of nodes removed is 0 or more: the cleaning passes only take "
            "nodes away. How many fewer does new have than g2?"
        )
    elif got >= size:
        hint = (
            f"the listing has {size} nodes and the input x stays, so fewer than {size} "
            f"can go: the answer is a count from 0 to {size - 1}."
        )
    else:
        hint = hints.get(got) or (
            "go pass by pass: what does folding do to 2.0 * 3.0, what does "
            "simplification do to x * 1.0 and to y + 0.0, which nodes are equal, "
            "and which nodes does no output need in the end?"
        )
    return not_yet(
        ex,
        [
            hint,
            "folding replaces a node by a constant and removes nothing itself; the "
            "nodes it no longer needs are removed by dead-node elimination.",
        ],
        gave=str(got),
    )


# -- 13-3 ----------------------------------------------------------------------------
def _head(x):
    if x.shape[0] == 1:
        return x.tanh().sum()
    return (x - x.mean(dim=0)).relu().sum()


def _traced_head():
    traced = ns.trace(_head, np.ones((1, 3)))
    for rows in (8, 8, 1, 2):
        traced(np.ones((rows, 3)))
    baked = "tanh" if " = tanh " in str(traced.graph) else "relu"
    return baked, traced.cache_size


BAKED_ANSWER = """("tanh", 3): the example has 1 row, so the trace ran the `if` branch and
recorded tanh; the calls with 8 rows (twice), 1 row and 2 rows add graphs for the new
shapes (8, 3) and (2, 3) only: 3 graphs."""


def _whole_number(value) -> bool:
    """Whether ``value`` is a whole number (3 or 3.0; not 3.7, "3" or True)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, np.integer, float, np.floating)
    ):
        return False
    return bool(np.isfinite(value)) and float(value) == int(value)


def _op_name(op) -> str:
    """The op's name however it is written: "tanh", "x.tanh()", "ns.tanh", "F.tanh", or
    the function itself, ns.relu or np.tanh (the module or tensor it is called on does
    not change which op it is)."""
    if callable(op) and getattr(op, "__name__", None):  # ns.relu, ng.relu, np.tanh
        op = op.__name__
    text = str(op).strip().strip("'\"").lower().removesuffix("()")
    if _whole_number(_as_number(text)):
        return text
    *owners, name = text.split(".")
    if any(owner.removesuffix("()") in ("tanh", "relu") for owner in owners):
        return text  # "relu.tanh" names two ops, neither as a whole word
    return name


def _as_number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


# What a traced function shows of the graph it keeps: reading them reads the answer.
_TRACE_INSIDES = ("graph", "nodes", "outputs", "inputs", "op", "op_name")


@checker("13-3", answer=BAKED_ANSWER, predicts=True)
def check_baked_branch(answer) -> Result:
    """``(op, count)``: the activation in the example's trace, and how many graphs."""
    ex = "13-3"
    if is_blank(answer):
        return not_done(ex)
    ran = _runs_instead_of_predicting(ex, ("trace", "cache_size", "graphs", *PRINTED_FORM), "the "
                                      "traced function", "which path the example's "
                                      "shape takes, and which calls bring a new shape.",
                                      reads=_TRACE_INSIDES)
    if ran is not None:
        return ran
    try:
        op, count = answer
        op = _op_name(op)
    except (TypeError, ValueError):
        return failed(ex, 'answer a pair (op, count), e.g. ("sigmoid", 1).')
    if isinstance(count, str) and _whole_number(_as_number(op)):
        return not_yet(
            ex,
            ["the pair is the wrong way round: answer (op, count), the op's name "
             "first, then the number of graphs."],
            gave=repr(answer),
        )
    if isinstance(count, str):
        return failed(ex, "the count of graphs is a whole number: write it without quotes.")
    if not _whole_number(count):  # int(3.7) would quietly make it 3
        return failed(ex, "the count of graphs is a whole number: how many graphs the "
                          "traced function holds (not True, not a fraction).")
    count = int(count)
    want_op, want_count = _traced_head()
    if re.fullmatch(r"%?[a-z_]+_\d+", op):
        return failed(ex, "that is a node's name from a listing (an op and a number): "
                          "give the op, not the node's name.")
    if op not in ("tanh", "relu"):
        return failed(ex, 'the op is one of the two activations of head: "tanh" or "relu".')
    if op == want_op and count == want_count:
        return correct(
            ex,
            "the example's shape chose the branch; each new shape is a new "
            "trace, a known one reuses its graph.",
        )
    if op != want_op:
        hint = (
            "which shape did the example have? The `if` ran once, while tracing, with that shape."
        )
    elif count == 5:
        hint = (
            "a call with a shape the traced function has seen reuses its graph: "
            "count the distinct shapes, the example's included."
        )
    elif count == 4:
        hint = (
            "one graph per distinct input shape: the example's shape (1, 3) comes "
            "again later and reuses its graph."
        )
    elif count == 1:
        hint = "a graph has fixed shapes: a call with a new shape traces the function again."
    elif count == 2:
        hint = "list every distinct shape the function was called with, the example's too."
    else:
        hint = "count the distinct input shapes, the example's (1, 3) included."
    return not_yet(
        ex,
        [
            hint,
            "the trace is specialised to the shape (and dtype) of its inputs, like "
            "jax.jit's cache.",
        ],
        gave=repr(answer),
    )
