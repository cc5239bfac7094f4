"""Checkers of lesson 06: static graphs."""

from __future__ import annotations

import os
from fractions import Fraction

import numpy as np

import naivegraph.static as ns
from naivegraph.static.executor import CompiledFunction, Plan

from ..checking import (
    Result,
    answer,
    as_array,
    cell_computes,
    checker,
    close,
    correct,
    failed,
    hint_for,
    is_blank,
    is_tensor,
    not_callable,
    not_done,
    not_yet,
    show,
)
from ..library_calls import LibraryCalls


# ----------------------------------------------------------------------------- 06-1
@checker(
    "06-1",
    answer="loss = ns.mean((x * w1 + w2) * (x * w1 * w3)): l1 = x * w1, l2 = l1 + w2, "
    "l3 = l1 * w3, l4 = l2 * l3, and the loss averages l4 into one number. Built from "
    "the placeholder x, the same graph gives 40 for a feed of ones and 112 for twos.",
)
def check_static_model(graph, x, loss) -> Result:
    """The l1..l4 model built in a static graph: placeholder x, Variables w1..w3, node loss."""
    ex = "06-1"
    if is_blank(loss) or is_blank(graph) or is_blank(x):
        return not_done(ex)
    if not hasattr(loss, "inputs") or not hasattr(graph, "forward"):
        return failed(
            ex,
            f"loss should be a node of your static graph, got {type(loss).__name__}; hint: "
            "build it inside `with g2:` from x and the Variables with ns ops.",
        )
    outside = [n for n in (x, loss) if getattr(n, "graph", graph) is not graph]
    read = _other_placeholder(graph, x, loss)
    if outside == [x] and read:
        owner = getattr(x.graph, "name", "another graph")
        return not_yet(
            ex,
            [
                f"the x you handed to the checker is the placeholder {x.name!r} of "
                f"{owner}, an earlier graph, while your loss reads the placeholder "
                f"{read!r} of the graph you handed over: the name x still holds what an "
                "earlier cell put in it. Hand over the placeholder your loss is built from.",
                "the checker feeds the placeholder you give it; the loss must read that "
                "very node.",
            ],
            gave=f"an x of {owner}",
        )
    if outside:
        owner = getattr(outside[0].graph, "name", "another graph")
        names = " and ".join(getattr(n, "name", "?") for n in outside)
        verb = "belongs" if len(outside) == 1 else "belong"
        they = "it was" if len(outside) == 1 else "they were"
        return not_yet(
            ex,
            [
                f"{names} {verb} to {owner}, not to the graph you handed over: {they} "
                "built outside the graph's `with` block. Build them inside `with g2:` "
                "(a cell that builds them outside it, run again, builds them in the "
                "default graph once more; ns.reset_default_graph() clears what an "
                "earlier run left there).",
                "the placeholder, the Variables and the loss all belong inside `with g2:`.",
            ],
            gave=f"nodes of {owner}",
        )
    stale = _unread_placeholders(graph, x, loss)
    place = {id(n): k for k, n in enumerate(getattr(graph, "nodes", ()))}
    stale_at = next(
        (k for k, n in enumerate(getattr(graph, "nodes", ())) if getattr(n, "name", None) == stale),
        -1,
    )
    if stale and place.get(id(x), len(place)) < stale_at:  # made after x: an extra one
        return not_yet(
            ex,
            [
                f"your graph also holds the placeholder {stale!r}, which your loss does "
                "not read: a run needs a feed for every placeholder of the graph, and the "
                f"checker feeds only the x you handed over. Leave {stale!r} out of the "
                "graph.",
            ],
            gave=f"a graph with the placeholder {stale!r} that the loss does not read",
        )
    if stale and not _read_in(graph, stale):  # made before x, and nothing reads it
        return not_yet(
            ex,
            [
                f"your graph holds two placeholders: {stale!r}, which nothing in the "
                f"graph reads, and {x.name!r}, which your loss reads. A run needs a feed "
                "for every placeholder of the graph, and the checker feeds only the x "
                "you handed over. The model has one input: one placeholder, the one "
                "the loss is built from.",
                f"leave the unread placeholder {stale!r} out of the graph, or build the "
                "loss from it.",
            ],
            gave=f"a graph with a second placeholder, {stale!r}, that nothing reads",
        )
    if stale:
        return not_yet(
            ex,
            [
                f"the graph you handed over also holds the placeholder {stale!r}, which "
                "your loss does not read: it is not a new graph. A name given to a graph "
                "that already exists (g2 = g) names the same graph, nodes and all, and a "
                "run needs a feed for every placeholder it holds. The exercise builds the "
                "model in a new, empty graph.",
                "ns.Graph() makes a new graph; build the model inside its `with` block.",
            ],
            gave=f"a graph that also holds the placeholder {stale!r}",
        )
    values = []
    for feed in (np.ones((2, 2)), 2.0 * np.ones((2, 2)), _MIXED_FEED):
        try:
            graph.forward({x: feed})
            values.append(loss.value)
        except Exception as exc:  # any error: reported to the learner, whole
            other = _other_placeholder(graph, x, loss)
            if other:
                return not_yet(
                    ex,
                    [
                        f"your loss does not read the placeholder {x.name!r} handed to the "
                        f"checker: it reads the placeholder {other!r}, which the feed of "
                        f"{x.name!r} leaves empty.",
                        "build the loss from the placeholder you hand to the checker.",
                    ],
                    gave=f"a loss that reads the placeholder {other!r}",
                )
            return failed(ex, f"running your graph failed: {type(exc).__name__}: {exc}")
    got = as_array(values[0])
    if got.shape != ():
        return not_yet(
            ex,
            [
                f"your loss is an array of shape {got.shape}; a loss is one number. "
                "Which step of the toy model turns l4 into a single value?",
                "reduce l4 to one number the way lesson 1 did (not a sum).",
            ],
            gave=f"an array of shape {got.shape}",
        )
    if close(values[0], 160.0) and close(values[1], 448.0):
        return not_yet(
            ex,
            ["your loss adds up the four elements of l4; the toy model averages them."],
            gave=show(values[0]),
        )
    if close(values[0], 40.0) and close(values[1], 40.0):
        return not_yet(
            ex,
            [
                "a feed of twos gave the same loss as a feed of ones: does your loss read the "
                "placeholder x, or a number you typed?"
            ],
            gave="the same loss for every feed",
        )
    frozen = _frozen_variables(loss)
    if frozen:
        return not_yet(
            ex,
            [
                f"your loss reads the Variable {frozen}, made with trainable=False: a "
                "Variable that is not trainable gets no gradient and never trains, so it "
                "is a constant of the graph, not a weight of the model.",
                "every weight of the model must be one of the Variables the cell makes, "
                "as the cell makes them.",
            ],
            gave=f"a loss with the non-trainable Variable {frozen}",
        )
    if close(values[0], 40.0) and close(values[1], 112.0):
        unread = _unread_variables(graph, loss)
        if _reads_a_variable(loss) and unread:
            return not_yet(
                ex,
                [
                    f"the numbers are right, but your loss does not read the Variable "
                    f"{unread}: a weight typed in as a number never gets a gradient and "
                    "never trains.",
                    "every weight of the model must be one of the Variables the cell makes.",
                ],
                gave=f"a loss without the Variable {unread}",
            )
        if not _reads_a_variable(loss):
            return not_yet(
                ex,
                [
                    "the numbers are right, but your loss reads the weights as numbers typed "
                    "into it: a graph's parameters are Variables, which keep their values "
                    "across runs and get gradients.",
                    "build the loss from the Variables w1, w2 and w3 the cell makes.",
                ],
                gave="a loss without Variables",
            )
        extra = _extra_variables(loss)
        if extra:
            return not_yet(
                ex,
                [
                    f"the numbers are right, but your loss also reads the Variable {extra}, "
                    "which the model does not have: every Variable a loss reads is a "
                    "parameter that gets a gradient and trains, so the model would no "
                    "longer be the toy model once it trains.",
                    "the model has three weights, the Variables w1, w2 and w3 the cell "
                    "makes, and nothing else is a Variable.",
                ],
                gave=f"a loss with the extra Variable {extra}",
            )
        turned = _transposes(loss)
        if not close(values[2], _MIXED_LOSS) and turned:
            return not_yet(
                ex,
                [
                    "right for feeds whose elements are all equal, wrong for a feed of "
                    f"different numbers: your loss transposes a step ({turned}), so l4 "
                    "pairs an element of one factor with the element across the diagonal "
                    "of the other. In the model each element of x goes through l1..l4 on "
                    "its own, element by element, and only the loss reduces them.",
                    "the steps of lesson 1: l1 scales x by w1, l2 adds w2 to l1, l3 scales "
                    "l1 by w3, l4 multiplies l2 and l3, and the loss averages l4.",
                ],
                gave="a loss with a transposed step",
            )
        if not close(values[2], _MIXED_LOSS):
            return not_yet(
                ex,
                [
                    "right for feeds whose elements are all equal and positive, wrong "
                    "for a feed of different numbers, some negative: each element of x "
                    "must go through l1..l4 on its own, and only the loss reduces them. "
                    "A reduction taken earlier, another reduction than the average, or a "
                    "step that changes signs (abs, relu) agrees on some feeds only.",
                    "the steps of lesson 1: l1 scales x by w1, l2 adds w2 to l1, l3 scales "
                    "l1 by w3, l4 multiplies l2 and l3, and the loss averages l4.",
                ],
                gave="a loss that is wrong for a feed of different numbers",
            )
        off = _off_gradient(graph, x, loss)
        if off:
            return not_yet(
                ex,
                [
                    f"the numbers are right, but changing the Variable {off} does not change "
                    "your loss the way it changes the model's: your loss reads it, yet its "
                    "gradient is wrong (a weight multiplied by 0, or divided by itself, has "
                    "no effect), so it would never train as the model's does.",
                    "the steps of lesson 1: l1 scales x by w1, l2 adds w2 to l1, l3 scales "
                    "l1 by w3, l4 multiplies l2 and l3, and the loss averages l4.",
                ],
                gave=f"a loss whose gradient with respect to {off} is wrong",
            )
        drift = _float64_drift(graph, x, loss)
        if drift:
            return not_yet(
                ex,
                [
                    f"the numbers round to the model's, but computed in float64 your loss "
                    f"{drift}: it is a function near the model, not the model. A term "
                    "added or a factor applied, however small, changes the loss and the "
                    "gradients every training step follows.",
                    "the steps of lesson 1 and nothing else: l1 scales x by w1, l2 adds w2 "
                    "to l1, l3 scales l1 by w3, l4 multiplies l2 and l3, and the loss "
                    "averages l4.",
                ],
                gave="a loss a tiny amount away from the model's",
            )
        elsewhere = _elsewhere(graph, x, loss)
        if elsewhere == "feeds":
            return not_yet(
                ex,
                [
                    "right for the feeds of small whole numbers, wrong for other feeds "
                    "(fractions, large numbers): your loss is the model only for some "
                    "inputs. A term that vanishes at whole numbers, or a step that clamps "
                    "or cuts off large entries, is not part of the model.",
                    "the steps of lesson 1 and nothing else: l1 scales x by w1, l2 adds w2 "
                    "to l1, l3 scales l1 by w3, l4 multiplies l2 and l3, and the loss "
                    "averages l4.",
                ],
                gave="a loss that is wrong for other feeds",
            )
        if elsewhere == "weights":
            return not_yet(
                ex,
                [
                    "right at the weights 2, 3 and 4, and its slope along each weight is "
                    "right there too, but your loss is wrong once the weights take other "
                    "values: a term that is zero at these weights and has a zero slope "
                    "there (the square of a weight minus its value, or a product of two "
                    "such differences), or a step that clamps or cuts off large weights, "
                    "changes the loss as soon as training moves the weights.",
                    "the steps of lesson 1 and nothing else: l1 scales x by w1, l2 adds w2 "
                    "to l1, l3 scales l1 by w3, l4 multiplies l2 and l3, and the loss "
                    "averages l4.",
                ],
                gave="a loss that is wrong for other values of the weights",
            )
        rows = _batch_off(graph, x, loss)
        if rows:
            return not_yet(
                ex,
                [
                    f"right for a batch of 2 rows, wrong for a batch of {rows}: your x "
                    "takes any number of rows, and the loss must average l4 over all the "
                    "elements it gets, however many. A count typed into the loss fits one "
                    "batch size only.",
                    "reduce l4 to one number the way lesson 1 did, with a reduction that "
                    "counts the elements itself.",
                ],
                gave=f"a loss that is wrong for a batch of {rows} rows",
            )
        return correct(
            ex,
            "the graph gives 40 for ones and 112 for twos, and the model's value and "
            "gradients for every other feed and weight tried: built once, run many times.",
        )
    if close(values[0], 40.0):
        return not_yet(
            ex,
            [
                "right for a feed of ones, wrong for a feed of twos: with ones, x * x and "
                "x are the same, so a factor of x too many (or too few) hides. Which step "
                "multiplies by x, and how often?",
                "the steps of lesson 1: l1 scales x by w1, l2 adds w2 to l1, l3 scales l1 "
                "by w3, l4 multiplies l2 and l3, and the loss averages l4.",
            ],
            gave=show(values[1]) + " for a feed of twos",
        )
    unread = _unread_variables(graph, loss)
    if unread and _reads_a_variable(loss):
        return not_yet(
            ex,
            [
                f"your loss does not read the Variable {unread}: the model uses each of "
                "the three weights, and a step that should use this one uses something "
                "else (a number typed in, another node) or is missing.",
                "the steps of lesson 1: l1 scales x by w1, l2 adds w2 to l1, l3 scales l1 "
                "by w3, l4 multiplies l2 and l3, and the loss averages l4.",
            ],
            gave=f"a loss without the Variable {unread}",
        )
    return not_yet(
        ex,
        [
            "run your graph with ones and compare with what the graph g of the cells "
            "above printed for ones.",
            "the steps of lesson 1: l1 scales x by w1, l2 adds w2 to l1, l3 scales l1 by w3, "
            "l4 multiplies l2 and l3, and the loss averages l4.",
        ],
        gave=show(values[0]) + " for a feed of ones",
    )


def _other_placeholder(graph, x, loss) -> str:
    """The name of a placeholder other than ``x`` that ``loss`` reads, or ""."""
    seen, stack = set(), [loss]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if getattr(node, "kind", None) == "placeholder" and node is not x:
            return str(node.name)
        stack.extend(getattr(node, "inputs", ()))
    return ""


def _unread_placeholders(graph, x, loss) -> str:
    """The name of a placeholder of ``graph``, other than ``x``, that ``loss`` does not
    read (a graph built before, given a second name), or ""."""
    read, stack = set(), [loss]
    while stack:
        node = stack.pop()
        if id(node) not in read:
            read.add(id(node))
            stack.extend(getattr(node, "inputs", ()))
    for node in getattr(graph, "placeholders", ()):
        if node is not x and id(node) not in read:
            return str(node.name)
    return ""


def _read_in(graph, name: str) -> bool:
    """Whether a node of ``graph`` reads the node called ``name`` (a graph built before
    has ops on its placeholder; a placeholder made and left alone has none)."""
    return any(
        getattr(i, "name", None) == name
        for node in getattr(graph, "nodes", ())
        for i in getattr(node, "inputs", ())
    )


def _batch_off(graph, x, loss) -> int:
    """For a placeholder whose first dimension is free (None), a batch size (3 or 5
    rows) where ``loss`` is not the mean of l4 at the weights 2, 3, 4, or 0."""
    shape = getattr(x, "shape", None)
    if not shape or shape[0] is not None:
        return 0
    for rows in (3, 5):
        feed = np.arange(1.0, 2.0 * rows + 1.0).reshape(rows, 2) / 2.0
        want = float(np.mean((feed * 2.0 + 3.0) * (feed * 2.0 * 4.0)))
        try:
            graph.forward({x: feed})
            got = float(as_array(loss.value))
        except Exception:  # a loss that only takes two rows is not the mean
            return rows
        if not close(got, want):
            return rows
    return 0


# A feed of different numbers, some negative: a loss that reduces x too early (the mean
# of x, a max) agrees with the model on feeds of equal elements only, and one that
# takes abs() or relu() somewhere on positive feeds only (at x = -1, l2 and l3 differ in
# sign).
_MIXED_FEED = np.array([[1.0, -1.0], [3.0, -4.0]])
_MIXED_LOSS = float(np.mean((_MIXED_FEED * 2.0 + 3.0) * (_MIXED_FEED * 2.0 * 4.0)))


# Each weight of the cell, by its value: its name there, and the model's gradient with
# respect to it for a feed of ones.
_GRADIENT_AT_ONES = {2.0: ("w1", 28.0), 3.0: ("w2", 8.0), 4.0: ("w3", 10.0)}


def _float64_loss(loss, feeds: dict, weights: dict | None = None) -> float:
    """The loss computed from its graph in float64, op by op (the graph runs in float32,
    which rounds a term of 1e-9 away): ``feeds`` and ``weights`` map placeholders and
    Variables to the numbers to use; a Variable not in ``weights`` keeps its value."""
    weights = weights or {}
    values: dict = {}

    def value(node):
        if node in values:
            return values[node]
        if isinstance(node, ns.Placeholder):
            got = np.asarray(feeds[node], dtype=np.float64)
        elif isinstance(node, ns.Variable):
            got = np.asarray(weights.get(node, node.value), dtype=np.float64)
        elif not node.inputs and node.op_name == "constant":
            got = node.value
            if isinstance(got, (np.ndarray, np.generic)) and got.dtype.kind == "f":
                got = np.asarray(got, dtype=np.float64)
        else:
            args = node.args_for([value(i) for i in node.inputs])
            got = node.op.forward(*args, **node.attrs)
        values[node] = got
        return got

    return float(value(loss))


# Feeds of fractions, of mixed signs and of large numbers, and weights other than the
# cell's: a loss that is the model only at whole-number feeds up to 4 (a polynomial that
# vanishes there, a clamp, a cut-off at |x| < 10) or only at the weights 2, 3, 4 (a term
# (w1 - 2) ** 2, whose value and slope there are 0) differs at one of these points.
#
# The last feeds and weights spread over the sizes float32 carries the model at: entries
# of both signs from 5e-3 up to 9e12, weights of both signs up to about 1e6, so a clamp or
# a cut-off of x or of a weight (clamp(x, -1e4, 1e4), where(x > 1e5), clamp(w1, -10,
# 10), where(w1 > 100)) changes the loss or a gradient at one of them.  The loss grows as
# x**2 * w**3: the largest of these points give about 1e27, far below float32's 3e38,
# with room for the model written in any order.  A clamp or a cut-off at a threshold
# beyond every probe (x at 1e13, a weight at 1e7) still passes: no finite set of points
# tells a function from one that differs only past them.
_RNG = np.random.default_rng(6)
_OTHER_FEEDS = (
    _RNG.uniform(-1.0, 1.0, (2, 2)),
    _RNG.normal(0.0, 7.0, (2, 2)),
    _RNG.uniform(-1000.0, 1000.0, (2, 2)),
    np.array([[3.7e11, -8.3e9], [-6.1e7, 4.4e5]]),
    np.array([[-9.2e12, 2.9e3], [5.3e-3, -1.7e1]]),
)
_SMALL_WEIGHTS = tuple(tuple(_RNG.uniform(-5.0, 5.0, 3)) for _ in range(3))
# (feed, (w1, w2, w3)): each weight other than the cell's, with a feed small enough for
# the loss to stay inside float32 at it.
_WEIGHT_POINTS = (
    (np.ones((2, 2)), _SMALL_WEIGHTS[0]),
    (_OTHER_FEEDS[0], _SMALL_WEIGHTS[1]),
    (_OTHER_FEEDS[1], _SMALL_WEIGHTS[2]),
    (_OTHER_FEEDS[2], _SMALL_WEIGHTS[0]),
    (np.ones((2, 2)), (-1.3e2, 7.9e5, 2.6e2)),
    (np.array([[-2.4e-2, 6.6e2], [1.9e4, -5.8e5]]), (8.8e5, -4.1e1, -3.3e3)),
    (np.array([[7.3e5, -1.1e-1], [-3.2e2, 8.0]]), (3.1e1, 2.2e4, 9.7e5)),
)


def model_values(feed, w1: float, w2: float, w3: float) -> tuple[list[float], list[float]]:
    """The toy model's loss and its gradients with respect to w1, w2, w3, in float64, and
    for each the size of its terms: rounding in any order of the steps (a dozen of them,
    each off by at most 1.1e-16 of its terms) stays below 1e-14 of that size, where a
    cancellation could make it large next to the value."""
    x = np.asarray(feed, dtype=np.float64)
    l1, l3 = x * w1, x * w1 * w3
    l2 = l1 + w2
    big2 = np.abs(l1) + abs(w2)
    values = [
        float(np.mean(l2 * l3)),
        float(np.mean(x * l3 + l2 * x * w3)),
        float(np.mean(l3)),
        float(np.mean(l2 * l1)),
    ]
    sizes = [
        float(np.mean(big2 * np.abs(l3))),
        float(np.mean(np.abs(x * l3) + big2 * np.abs(x * w3))),
        float(np.mean(np.abs(l3))),
        float(np.mean(big2 * np.abs(l1))),
    ]
    return values, sizes


def agrees(got: float, want: float, size: float, exact: bool) -> bool:
    """``got`` equals the model's ``want`` to the rounding of float64 (``exact``) or of
    float32, relative to the ``size`` of the terms."""
    tolerance = (1e-14 if exact else 1e-4) * size + 1e-300
    return bool(np.isfinite(got)) and abs(got - want) <= tolerance


def _weights_of(node) -> dict:
    """The Variables ``node`` reads that stand for w1, w2, w3, by their value in the cell
    (2, 3, 4): ``{value: Variable}``, of each value the one made first in its graph (the
    cell's; one made later with the same value, a w1b, is an extra)."""
    found: dict = {}
    for v in _read_variables(node):
        try:
            key = float(v.value)
        except Exception:  # an array Variable: not one of the cell's weights
            continue
        if key in (2.0, 3.0, 4.0) and (key not in found or _made_before(v, found[key])):
            found[key] = v
    return found


def _made_before(a, b) -> bool:
    """Whether Variable ``a`` was made before ``b`` in their graph (False when that
    cannot be told)."""
    nodes = list(getattr(getattr(a, "graph", None), "nodes", ()))
    place = {id(n): k for k, n in enumerate(nodes)}
    return id(a) in place and id(b) in place and place[id(a)] < place[id(b)]


def _read_variables(node) -> list:
    """The Variables ``node`` is computed from, in the order first met."""
    stack, seen, found = [node], set(), []
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, ns.Variable):
            found.append(current)
        stack.extend(getattr(current, "inputs", ()))
    return found


def _extra_variables(loss) -> str:
    """The names of the Variables the loss reads besides the three weights, as words."""
    weights = {id(v) for v in _weights_of(loss).values()}
    extra = [v for v in _read_variables(loss) if id(v) not in weights]
    return " and ".join(str(getattr(v, "name", "?")) for v in extra)


def _values_at(graph, placeholder, nodes, feed, weights: dict) -> tuple[list[float], bool]:
    """The values of ``nodes`` for ``feed``, with each Variable of ``weights`` set to its
    number: in float64 op by op when every op takes it (then ``True``), else by running
    the graph in float32 with the Variables set for the run and put back."""
    try:
        return [_float64_loss(n, {placeholder: feed}, weights) for n in nodes], True
    except Exception:  # an op the float64 run cannot take: run the graph itself
        pass
    before = {v: v.value for v in weights}
    try:
        for v, value in weights.items():
            v.value = np.asarray(value, dtype=np.asarray(before[v]).dtype)
        run = getattr(graph, "run", None)
        got = run(list(nodes), {placeholder: feed}) if run else None
        return [float(as_array(g)) for g in got], False
    finally:
        for v, value in before.items():
            v.value = value


def _elsewhere(graph, x, loss) -> str:
    """Where the loss leaves the model: ``"feeds"`` when it differs for a feed of
    fractions or large numbers at the cell's weights, ``"weights"`` when it differs for
    other values of the weights, ``""`` when nowhere tried."""
    weights = _weights_of(loss)
    if len(weights) != 3:
        return ""
    w1, w2, w3 = weights[2.0], weights[3.0], weights[4.0]
    points = [("feeds", feed, (2.0, 3.0, 4.0)) for feed in _OTHER_FEEDS] + [
        ("weights", feed, values) for feed, values in _WEIGHT_POINTS
    ]
    for where, feed, values in points:
        try:
            (got,), exact = _values_at(graph, x, [loss], feed, dict(zip((w1, w2, w3), values)))
        except Exception:  # a graph that fails on such a feed is not the model there
            return where
        want, size = model_values(feed, *values)
        if not agrees(got, want[0], size[0], exact):
            return where
    return ""


def _float64_drift(graph, x, loss) -> str:
    """What differs, in float64, between the loss and the model's: its value on a feed, or
    its slope along a weight, as words; empty when none does.

    The feeds and weights are small whole numbers, so the model's loss is exact in float64
    whatever order its steps are written in; the loss is quadratic in each weight, so a
    central difference with a step of 0.5 is exact too.  A term of 1e-9 moves them by far
    more than the rounding of float64 (about 1e-14 here).
    """
    try:
        for feed in (np.ones((2, 2)), 2.0 * np.ones((2, 2)), _MIXED_FEED):
            want = float(np.mean((feed * 2.0 + 3.0) * (feed * 2.0 * 4.0)))
            # exact in float64 whatever the order: a few units in the last place at
            # most (4e-15 of 40 is 22 of them); a term of 1e-12 or a factor 1 + 1e-13
            # is more
            if not close(_float64_loss(loss, {x: feed}), want, atol=0.0, rtol=4e-15):
                return "differs from the model's by a tiny amount for a feed"
        for v in [n for n in getattr(graph, "nodes", ()) if isinstance(n, ns.Variable)]:
            name, want = _GRADIENT_AT_ONES.get(float(v.value), (None, None))
            if name is None:
                continue
            sides = [
                _float64_loss(loss, {x: np.ones((2, 2))}, {v: float(v.value) + step})
                for step in (0.5, -0.5)
            ]
            if not close(sides[0] - sides[1], want, atol=0.0, rtol=1e-12):
                return f"changes with {name} by a tiny amount more or less than the model's"
    except Exception:  # an op the float64 run cannot take: the float32 checks decide
        return ""
    return ""


def _off_gradient(graph, x, loss) -> str:
    """The names of the Variables whose gradient differs from the model's, as words.

    The loss is quadratic in each weight, so a central difference with a wide step is
    exact; the Variables are put back as they were.
    """
    off = []
    for v in [n for n in getattr(graph, "nodes", ()) if isinstance(n, ns.Variable)]:
        try:
            old = v.value
            name, want = _GRADIENT_AT_ONES[float(old)]
        except Exception:  # not one of the cell's weights: not a weight of the model
            continue
        try:
            sides = []
            for step in (0.5, -0.5):
                v.value = old + step
                graph.forward({x: np.ones((2, 2))})
                sides.append(float(loss.value))
            got = sides[0] - sides[1]
        except Exception:  # a graph that fails when a weight moves: its gradient is off
            got = float("nan")
        finally:
            v.value = old
        if not close(got, want, atol=1e-3):
            off.append(name)
    try:
        graph.forward({x: np.ones((2, 2))})  # leave the values of the weights as they are
    except Exception:  # it ran with these weights above; nothing more to report
        pass
    return " and ".join(off)


def _unread_variables(graph, loss) -> str:
    """The names of the graph's Variables the loss is not computed from, as words."""
    read, stack = set(), [loss]
    while stack:
        current = stack.pop()
        if id(current) not in read:
            read.add(id(current))
            stack.extend(getattr(current, "inputs", ()))
    unread = [
        n for n in getattr(graph, "nodes", ()) if isinstance(n, ns.Variable) and id(n) not in read
    ]
    return " and ".join(str(getattr(n, "name", "?")) for n in unread)


def _graph_of(loss) -> list:
    """The nodes ``loss`` is computed from, itself included."""
    found, seen, stack = [], set(), [loss]
    while stack:
        current = stack.pop()
        if id(current) not in seen:
            seen.add(id(current))
            found.append(current)
            stack.extend(getattr(current, "inputs", ()))
    return found


def _frozen_variables(loss) -> str:
    """The names of the Variables made with trainable=False that ``loss`` reads, as words."""
    frozen = [
        n for n in _graph_of(loss) if isinstance(n, ns.Variable) and not getattr(n, "trainable", 1)
    ]
    return " and ".join(str(getattr(n, "name", "?")) for n in frozen)


# Ops that swap the axes of their input: in the model no element meets another's.
_TRANSPOSING = {"t", "transpose", "permute", "swapaxes", "adjoint"}


def _transposes(loss) -> str:
    """The transposing ops ``loss`` is computed with, as words ("t", "transpose")."""
    ops = sorted({str(getattr(n, "op_name", "")) for n in _graph_of(loss)} & _TRANSPOSING)
    return " and ".join(ops)


def _reads_a_variable(node) -> bool:
    """Whether a Variable is among the nodes ``node`` is computed from."""
    stack, seen = [node], set()
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, ns.Variable):
            return True
        stack.extend(getattr(current, "inputs", ()))
    return False


# ----------------------------------------------------------------------------- 06-2
_RIGHT_06_2 = {1.0: [40.0, 28.0, 8.0, 10.0], 2.0: [112.0, 88.0, 16.0, 28.0]}


@checker(
    "06-2",
    answer="f = g.compile(inputs=[x], outputs=[loss, dw1, dw2, dw3]): the placeholder x "
    "becomes the argument, and one call computes the loss and the three symbolic "
    "gradients (40, 28, 8, 10 for ones).",
)
def check_compiled_step(f, g=None) -> Result:
    """``f(x)`` compiled from the graph ``g`` returns [loss, d loss/d w1, d loss/d w2,
    d loss/d w3]; without ``g``, from whichever graph holds the Variables it reads."""
    ex = "06-2"
    misused = _graph_not_function(ex, f)
    if misused is not None:
        return misused
    if isinstance(f, (list, tuple)) and f and not any(callable(v) for v in f):
        return not_yet(
            ex,
            [
                "you called the compiled function: f holds what one call returned. Keep "
                "what compile returns (the function itself), without calling it.",
                _COMPILE_NUDGE,
            ],
            gave="the results of a call, not a function",
        )
    if isinstance(f, Plan):
        return not_yet(
            ex,
            [
                "that is the compiled function's plan (its .plan): the schedule of the "
                "steps it runs and of the values it frees, which the compiled function "
                "reads at each call. A plan is not called; the compiled function is.",
                "give what compile returns, without taking an attribute of it.",
            ],
            gave="a Plan, not a compiled function",
        )
    bad = not_callable(ex, f)
    if bad is not None:
        return bad
    outs = {}
    weights = _variables(f)
    before = [v.value.copy() for v in weights]
    for scale in (1.0, 2.0):
        stop, out = answer(ex, f, scale * np.ones((2, 2)))
        moved = _restore(weights, before)
        if stop is not None:
            return stop
        if moved:
            return not_yet(
                ex,
                [
                    "calling f changed the Variables' values: your compiled function also "
                    "updates the weights (updates=), so every call would move them. The "
                    "exercise asks f to compute and return values only. (The checker put "
                    "the weights back as they were.)",
                    "compile with the inputs and the outputs to fetch, and nothing else.",
                ],
                gave="a function that changes the weights at each call",
            )
        shaped = _shaped_output(out)
        if shaped is not None and shaped[0] == 1:
            return not_yet(
                ex,
                [
                    f"the first output of f is an array of shape {shaped[1]}, not one "
                    "number: the first output fetched is not the loss, which is an "
                    "average, a single number. It is a node the loss is computed from "
                    "(an intermediate of the graph), or another node of g.",
                    "the first node in outputs= is the loss node itself; the three "
                    "gradients follow it.",
                ],
                gave=f"a first output of shape {shaped[1]}",
            )
        if shaped is not None:
            return not_yet(
                ex,
                [
                    f"output {shaped[0]} of f is an array of shape {shaped[1]}, not one "
                    "number: the gradient with respect to a Variable has that Variable's "
                    "shape (w1, w2 and w3 are single numbers), so that gradient is with "
                    "respect to another node (the placeholder x, say), or that output is "
                    "not the loss.",
                    "ns.gradients(loss, [...]) differentiates by the nodes in the list: "
                    "list the three Variables.",
                ],
                gave=f"an output of shape {shaped[1]}",
            )
        try:
            outs[scale] = [float(as_array(v)) for v in out]
        except Exception:  # a single array, or non-numbers: reported, never raised
            return failed(
                ex,
                f"f should return a list of numbers (one per output), got {show(out)}; "
                "hint: list the nodes to fetch in outputs=[...].",
            )
    ones, twos = outs[1.0], outs[2.0]
    moved_weights = _weights_moved(g)
    if moved_weights and not close(ones, _RIGHT_06_2[1.0]):
        return not_yet(
            ex,
            [
                f"the Variable {moved_weights} of g no longer holds the value the cell "
                "that built g gave it: a line run since changed it, so every output of f "
                "is computed with the changed weight. Run the cell that builds g again "
                "(and the cells after it), then compile.",
                "compiling fetches the nodes you list; it computes with the values g's "
                "Variables hold when f runs.",
            ],
            gave=f"outputs computed with a changed {moved_weights}",
        )
    if len(ones) != 4:
        return not_yet(
            ex,
            ["f should return the loss and one gradient per Variable."],
            gave=f"{len(ones)} output(s)",
        )
    if close(ones, _RIGHT_06_2[1.0]) and close(twos, _RIGHT_06_2[2.0]):
        if not isinstance(f, ns.CompiledFunction):
            return _not_compiled(ex, f)
        off = _compiled_off(f)
        if off:
            return not_yet(ex, *off)
        if not _follows(f, g):
            return not_yet(
                ex,
                [
                    "the numbers are right, but f must be compiled from g: yours reads "
                    "Variables of another graph (a copy of the model, with Variables of "
                    "its own under the same names), so once g's Variables train, f still "
                    "computes with the values its own Variables keep.",
                    _TRAINS_WITH_G,
                ],
                gave="a function compiled from another graph than g",
            )
        return correct(
            ex, "one compiled function returns the loss and all three symbolic gradients."
        )
    if close(ones, _RIGHT_06_2[1.0]):
        return not_yet(
            ex,
            [
                "f gives the same numbers whatever it is fed: the compiled "
                "function must feed its argument to the placeholder."
            ],
            gave="the right numbers for ones, wrong ones for twos",
        )
    fetched_variables = _fetched_variables(f)
    if fetched_variables:
        return not_yet(ex, *fetched_variables)
    if close(sorted(ones), sorted(_RIGHT_06_2[1.0])):
        return not_yet(
            ex,
            [
                "the right numbers in a different order: the loss first, then "
                "the gradients in the order of w1, w2, w3."
            ],
            gave="the right numbers in another order",
        )
    fetched = [
        next((i for i, r in enumerate(_RIGHT_06_2[1.0][1:]) if close(v, r)), None) for v in ones[1:]
    ]
    if (
        close(ones[0], _RIGHT_06_2[1.0][0])
        and None not in fetched
        and len(set(fetched)) < len(fetched)
    ):
        missing = [f"w{i + 1}" for i in range(3) if i not in fetched]
        return not_yet(
            ex,
            [
                "one gradient is fetched twice and another is missing: the gradient "
                f"with respect to {' and '.join(missing)} is not among the outputs.",
                "outputs= lists the nodes to fetch: the loss, then one gradient per Variable.",
            ],
            gave="a gradient fetched twice",
        )
    if close(ones[0], _RIGHT_06_2[1.0][0]) and close(twos[0], _RIGHT_06_2[2.0][0]):
        right = np.asarray(_RIGHT_06_2[1.0][1:])
        ratios = np.asarray(ones[1:]) / right
        scaled = bool(np.allclose(ratios, ratios[0])) and not close(ratios[0], 1.0)
        return not_yet(
            ex,
            [
                "your loss is right, but the gradients are not those of the loss: "
                + (
                    "all of them are the loss's gradients times one same factor, so "
                    "ns.gradients was given a multiple of the loss (2 * loss, say), not "
                    "the loss node itself."
                    if scaled
                    else "ns.gradients was given another node than the loss, or the "
                    "gradients were changed after it."
                ),
                "ns.gradients(loss, [w1, w2, w3]) differentiates its first argument: give "
                "it the very loss node you fetch.",
            ],
            gave="gradients of another quantity than the loss",
        )
    if close(ones[1:], _RIGHT_06_2[1.0][1:]) and close(twos[1:], _RIGHT_06_2[2.0][1:]):
        return not_yet(
            ex,
            [
                "the three gradients are right, but the first output fetched is not the "
                "loss: it is another node of g (a node the loss is computed from, say).",
                "the first node in outputs= is the loss node itself; the three "
                "gradients follow it.",
            ],
            gave="a first output that is not the loss",
        )
    return not_yet(
        ex,
        [
            "fetch the loss node and the gradient nodes that ns.gradients returned.",
            "outputs= lists the nodes to fetch: loss, then dw1, dw2, dw3.",
        ],
        gave=show(ones),
    )


def _fetched_variables(f) -> tuple[list[str], str] | None:
    """The hint (hints, gave) for a compiled function that fetches Variables themselves
    where the gradients belong: their values, the weights, not d loss / d weight."""
    outputs = list(getattr(f, "outputs", ()) or ()) if isinstance(f, ns.CompiledFunction) else []
    found = [
        (k + 1, node) for k, node in enumerate(outputs)
        if k > 0 and getattr(node, "kind", None) == "variable"
    ]
    if not found:
        return None
    places = _listed([str(k) for k, _ in found])
    names = _listed([repr(getattr(node, "name", "?")) for _, node in found])
    one = len(found) == 1
    return (
        [
            f"output{'' if one else 's'} {places} of f {'is' if one else 'are'} the "
            f"Variable{'' if one else 's'} {names} {'itself' if one else 'themselves'}: "
            "fetching a Variable gives the value it holds (the weight itself, the same "
            "whatever f is fed), not a gradient. The gradients are other nodes of g: "
            "the ones ns.gradients made from the loss.",
            "after the loss, fetch the gradient nodes, in the order of w1, w2, w3.",
        ],
        f"the Variable{'' if one else 's'} {names} where the gradients belong",
    )


def _listed(words: list[str]) -> str:
    """``words`` joined as a sentence lists them: "a", "a and b", "a, b and c"."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


# Where a run of a static graph goes, whichever layer runs it (the plain executor or the
# fast one): a function that calls into neither never ran the graph.
_RUNNERS = {
    "static": os.path.dirname(ns.__file__),
    "fast": os.path.join(os.path.dirname(os.path.dirname(ns.__file__)), "fast"),
}


def _not_compiled(ex: str, f) -> Result:
    """The hint for a callable ``f`` that gives the right numbers but is not a compiled
    function: what it is, found by calling it once more and watching what it runs (a
    compiled function it wraps, a run of the graph, or nothing of the graph at all)."""
    gave = f"a {type(f).__name__}, not a compiled function"
    with LibraryCalls({"compiled": CompiledFunction.__call__}) as wrapped:
        with LibraryCalls(packages=_RUNNERS, any_caller=True) as ran:
            try:
                f(np.ones((2, 2)))
            except Exception:  # it gave the right numbers twice: its hint is below
                pass
    if wrapped.called:
        return not_yet(
            ex,
            [
                "the numbers are right, but f is a Python function around a compiled "
                "function: it calls the compiled function and passes on (or converts) "
                "what it returns. The compiled function itself is what the exercise "
                "asks for: give it as it is, without a function around it.",
                "keep what compile returns under the name f.",
            ],
            gave=f"a {type(f).__name__} around a compiled function",
        )
    if not ran.called:
        return not_yet(
            ex,
            [
                "the numbers are right, but f does not use the graph at all: it computes "
                "the loss and the gradients itself (a closed form worked out by hand), "
                "so it would stay the same whatever g holds, and nothing of g is "
                "compiled. The exercise asks the graph to compile itself into one "
                "callable, planned once for every call.",
                "the graph has a method that takes the inputs and the outputs to fetch.",
            ],
            gave=f"a {type(f).__name__} that does not run the graph",
        )
    return not_yet(
        ex,
        [
            "the numbers are right, but f is a Python function that drives the "
            "graph run by run; the exercise asks the graph to compile itself into "
            "one callable, planned once for every call.",
            "the graph has a method that takes the inputs and the outputs to fetch.",
        ],
        gave=gave,
    )


def _shaped_output(out) -> tuple[int, tuple] | None:
    """The first output of ``f`` (its place, from 1, and its shape) that holds more
    than one number, or None: a gradient taken with respect to another node."""
    if not isinstance(out, (list, tuple)):
        return None
    for place, value in enumerate(out, start=1):
        try:
            array = as_array(value)
        except Exception:  # not numbers: reported by the caller
            return None
        if np.size(array) > 1:
            return place, tuple(np.shape(array))
    return None


_TRAINS_WITH_G = (
    "compile the graph g of the cells above: its outputs read the Variables w1, w2, w3, "
    "and ns.gradients added the nodes of the three gradients to it."
)


def _compiled_off(f) -> tuple[list[str], str] | None:
    """``(hints, gave)`` when the compiled function ``f`` gives the right numbers for
    feeds of ones and twos but is not the model's step elsewhere: outputs that do not
    read the graph's Variables (numbers typed in), right only for feeds whose elements
    are equal, or a tiny amount away from the model; None when it is the step."""
    placeholder = next(iter(getattr(f, "inputs", []) or []), None)
    outputs = list(getattr(f, "outputs", []))
    weights: dict = {}
    for node in outputs:
        for value, v in _weights_of(node).items():
            weights.setdefault(value, v)
    extra = {id(v) for node in outputs for v in _read_variables(node)} - {
        id(v) for v in weights.values()
    }
    if len(weights) != 3 or extra:
        return [
            "the numbers are right, but the outputs of f do not follow the Variables w1, "
            "w2 and w3: f was compiled from a graph with the weights typed in as numbers "
            "(or with Variables of its own), so once the weights train, f still computes "
            "with the old ones.",
            _TRAINS_WITH_G,
        ], "a function whose outputs do not read the Variables"
    w = (weights[2.0], weights[3.0], weights[4.0])
    points = [("feeds", feed, (2.0, 3.0, 4.0)) for feed in _OTHER_FEEDS] + [
        ("weights", feed, values) for feed, values in _WEIGHT_POINTS
    ]
    for where, feed, values in points:
        want, sizes = model_values(feed, *values)
        try:
            got, exact = _values_at(f.graph, placeholder, outputs, feed, dict(zip(w, values)))
        except Exception:  # a function that fails on such a feed is not the step there
            got, exact = [float("nan")] * 4, True
        if all(agrees(g, v, z, exact) for g, v, z in zip(got, want, sizes)):
            continue
        # within 1e-4 of the size of the terms (float64): near the model, no other function
        wide = 1e10 if exact else 1e8
        loose = all(agrees(g, v, z * wide, exact) for g, v, z in zip(got, want, sizes))
        if loose:
            return [
                "the numbers round to the model's, but computed in float64 the outputs of "
                "f are a tiny amount away from its loss and gradients: a factor or a term "
                "however small changes every step of training.",
                _TRAINS_WITH_G,
            ], "outputs a tiny amount away from the model's"
        if where == "feeds":
            return [
                "right for feeds of ones and of twos, wrong for a feed of different "
                "numbers (fractions, large numbers, both signs): outputs computed from a "
                "reduction of x taken too early (its mean) agree only for feeds whose "
                "elements are all equal, and a step that clamps or cuts off large "
                "entries only for feeds below its threshold.",
                _TRAINS_WITH_G,
            ], "outputs that are wrong for a feed of different numbers"
        return [
            "right for the weights 2, 3 and 4, wrong once the Variables take other "
            "values: the outputs of f must be the loss and gradients of the graph's "
            "Variables, whatever their values.",
            _TRAINS_WITH_G,
        ], "outputs that do not follow the Variables' values"
    return None


# Values of g's weights, exact in float32, that the checks above never try: f compiled
# from g computes with them once they are assigned.
_MOVED_WEIGHTS = (1.5, -2.5, 0.5)


def _follows(f, g) -> bool:
    """Whether the outputs of ``f`` follow the Variables of ``g`` (no ``g``, or not a
    graph: nothing to compare with): with g's weights set to other values, f returns the
    model's loss and gradients at them.  The Variables are put back as they were."""
    if not isinstance(g, ns.Graph):
        return True
    found: dict = {}
    for v in (n for n in g.nodes if isinstance(n, ns.Variable)):
        try:
            key = float(v.value)
        except Exception:  # an array Variable: not one of the cell's weights
            continue
        if key in (2.0, 3.0, 4.0):
            found.setdefault(key, v)
    if len(found) != 3:
        return True  # g no longer holds the cell's weights: the numbers above decided
    weights = [found[2.0], found[3.0], found[4.0]]
    before = [v.value.copy() for v in weights]
    try:
        for v, value in zip(weights, _MOVED_WEIGHTS):
            v.value = np.asarray(value, dtype=v.value.dtype)
        got = [float(as_array(o)) for o in f(_MIXED_FEED)]
    except Exception:  # a function that fails once g's weights move does not follow them
        return False
    finally:
        _restore(weights, before)
    want, sizes = model_values(_MIXED_FEED, *_MOVED_WEIGHTS)
    return len(got) == 4 and all(agrees(a, b, z, False) for a, b, z in zip(got, want, sizes))


_CELL_WEIGHTS = {"w1": 2.0, "w2": 3.0, "w3": 4.0}


def _weights_moved(g) -> str:
    """The names of g's Variables w1, w2, w3 that no longer hold the value the lesson's
    cell gave them (2, 3, 4), as words ("" for none, or when g is no graph)."""
    if not isinstance(g, ns.Graph):
        return ""
    moved = []
    for v in (n for n in g.nodes if isinstance(n, ns.Variable)):
        want = _CELL_WEIGHTS.get(str(getattr(v, "name", "")))
        try:
            if want is not None and float(v.value) != want:
                moved.append(str(v.name))
        except Exception:  # an array Variable under that name: not the cell's weight
            moved.append(str(v.name))
    return " and ".join(moved)


def _variables(f) -> list:
    """The Variables of the graph a compiled function runs (none for other callables)."""
    graph = getattr(f, "graph", None)
    return [n for n in getattr(graph, "nodes", ()) if isinstance(n, ns.Variable)]


def _restore(weights: list, before: list) -> bool:
    """Put the Variables back as they were; whether any had changed."""
    moved = False
    for v, old in zip(weights, before):
        try:
            if not np.array_equal(v.value, old):
                moved = True
                v.value = old
        except Exception:  # a Variable the call broke: leave it, the check reports the call
            moved = True
    return moved


_COMPILE_NUDGE = (
    "compiling is one call on the graph g, given the placeholder to feed and the four "
    "nodes to fetch; it runs the optimisation passes itself."
)


def _graph_not_function(ex: str, f) -> Result | None:
    """A graph (g, or the one ns.optimize made), or the (graph, report) pair ns.optimize
    returns, where the compiled function was asked."""
    parts = f if isinstance(f, tuple) else (f,)
    if any(isinstance(p, ns.OptimizationReport) for p in parts):
        return not_yet(
            ex,
            [
                "that is what ns.optimize returns: a rewritten graph and a report of what "
                "each pass removed, nothing you can call. The exercise asks for g compiled "
                "into a function of x that returns the loss and the three gradients.",
                _COMPILE_NUDGE,
            ],
            gave="the result of ns.optimize",
        )
    if isinstance(f, ns.Graph):
        return not_yet(
            ex,
            [
                "you gave a graph, not a function: a graph (g, or the optimised one "
                "ns.optimize makes) does not run when called. The exercise asks for g "
                "compiled into a function of x that returns the loss and the three "
                "gradients.",
                _COMPILE_NUDGE,
            ],
            gave="a Graph",
        )
    return None


# ----------------------------------------------------------------------------- 06-3
@checker(
    "06-3",
    answer="2: in a chain each value is read only by the next op, so the plan frees it "
    "right after that op. While an op runs, only its input and its output exist.",
    predicts=True,
)
def check_memory_plan(peak_values) -> Result:
    """Most intermediate values alive at once when a planned run executes a chain of ops."""
    ex = "06-3"
    if is_blank(peak_values):
        return not_done(ex)
    if (
        isinstance(peak_values, np.ndarray)
        and peak_values.shape == ()
        and (peak_values.dtype.kind in "biuf")
    ):
        peak_values = peak_values.item()  # np.array(2) is one number, as 2 is
    if isinstance(peak_values, Fraction) and peak_values.denominator == 1:
        peak_values = int(peak_values)  # Fraction(2) is the whole number 2
    if isinstance(peak_values, (bool, np.bool_)):
        return failed(
            ex,
            f"give a whole number, got {peak_values}, a bool (True or "
            "False): count the values and type the count.",
        )
    if isinstance(peak_values, (list, tuple, np.ndarray)) and np.size(peak_values) == 1:
        return failed(
            ex,
            f"give ONE number, not a {type(peak_values).__name__} of one number: "
            "type the count alone, without brackets.",
        )
    if is_tensor(peak_values):
        return failed(
            ex,
            "give the count as a plain number, not a tensor: a count of values is a "
            "Python number you type as it is, with no ng.tensor(...) around it.",
        )
    if isinstance(peak_values, (complex, np.complexfloating)):
        return failed(
            ex,
            f"give a whole number, got {peak_values!r}, a complex number: a count is "
            "a whole number with no imaginary part (no j).",
        )
    whole = isinstance(peak_values, (int, np.integer)) or (
        isinstance(peak_values, (float, np.floating)) and float(peak_values).is_integer()
    )
    if isinstance(peak_values, bool) or not whole:
        if isinstance(peak_values, (str, bytes, np.str_)):
            return failed(
                ex,
                f"give a whole number, got the text {peak_values!r}; "
                "type the number without quotes.",
            )
        shown = repr(float(peak_values)) if _is_number(peak_values) else show(peak_values)
        return failed(ex, f"give a whole number, got {shown}: a count has no fractional part.")
    got = int(peak_values)
    if got < 0:
        return failed(
            ex, "give a count of values, not a negative number: a count cannot be negative."
        )
    ran = cell_computes(calls=("Plan", "live_values", "compile", "listing"))
    if ran:
        return not_yet(
            ex,
            [
                f"your cell runs the planner instead of predicting: it calls {ran}. The "
                "exercise asks you to PREDICT the count from the chain, and to type it; "
                "the cell after the check runs the plan for you.",
                "count the values alive while ONE op of the chain runs.",
            ],
            gave=f"a cell that calls {ran}",
        )
    if got == 2:
        return correct(
            ex,
            "in a chain each value is needed only by the next op: the planner keeps "
            "the input of the running op and its output, then frees the input.",
        )
    hint = hint_for(
        got,
        [
            (
                (7,),
                "that many would stay alive without a plan. The plan frees a value "
                "after the last op that reads it: who reads each value here?",
            ),
            (
                (6,),
                "that counts the values of nearly the whole chain, as if few were freed. "
                "The plan frees a value after the last op that reads it: who reads each "
                "value here?",
            ),
            (
                (8,),
                "that is more than the chain's 7 values, and more than stay alive even "
                "without a plan. The plan frees a value after the last op that reads it: "
                "who reads each value here?",
            ),
            ((1,), "while an op runs, its input must still exist when its output is made."),
            ((0,), "every op makes a value; count what exists while one op runs."),
        ],
        "count the values alive while ONE op of the chain runs.",
    )
    return not_yet(
        ex, [hint, "each value of the chain has exactly one reader: the next op."], gave=str(got)
    )


def _is_number(value) -> bool:
    """A real number, shown with every digit it has (2 + 1e-12 is not shown as 2)."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )
