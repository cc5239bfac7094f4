"""The small models the lessons' figures train, in both modes, and what they cost.

``train_capstone`` trains lesson 9's classifier in dynamic mode and in static mode (its
Adam step built into the graph by ``build_static_classifier``); ``iteration_costs`` counts the graph nodes and peak
memory of one training step of lesson 7's MLP in each mode; ``descent`` follows a
gradient by hand.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
import tracemalloc
from typing import Callable

import numpy as np

import naivegraph as ng
import naivegraph.static as ns

def live_values(plan, count_fetched: bool = False) -> list[int]:
    """How many intermediate values a planned run holds while each of its steps runs.

    ``plan`` is a :class:`naivegraph.static.executor.Plan`; a value counts from the
    step that makes it until the step after which the plan frees it: a step counts its
    own output and the inputs it is still reading.  Fetched values are never freed (the
    caller gets them), so by default they are left out.

    >>> import naivegraph.static as ns
    >>> from naivegraph.static.executor import Plan
    >>> with ns.Graph() as g:
    ...     x = ns.placeholder("x", shape=(3,))
    ...     y = ns.exp(ns.sin(ns.cos(x)))
    >>> live_values(Plan(g, [y], [x]), count_fetched=True)
    [1, 2, 2]
    """
    counted = {plan.slot[n] for n in plan.order if isinstance(n, ns.Operation)}
    if not count_fetched:
        counted -= set(plan.fetch_slots)
    alive: set[int] = set()
    counts = []
    for _, _, out, frees in plan.steps:
        alive.add(out)
        counts.append(len(alive & counted))
        alive -= set(frees)
    return counts


def descent(f_grad: Callable, start, lr: float, steps: int) -> np.ndarray:
    p = np.asarray(start, dtype=float)
    pts = [p.copy()]
    for _ in range(steps):
        p = p - lr * np.asarray(f_grad(*p))
        pts.append(p.copy())
    return np.array(pts)


def train_step(model, optimizer, X, y) -> float:
    """One dynamic-mode training step of lesson 9 (exercise 09-2's answer, which the lesson
    runs until the learner's own passes, so a student's notebook never shows it): zero the
    gradients, cross-entropy of ``model(X)`` against ``y``, backward, step; the loss as a
    float."""
    optimizer.zero_grad()
    loss = ng.nn.functional.cross_entropy(model(X), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def derivative_table() -> dict:
    """Lesson 8's table of scalar ops, complete (exercise 08-1's answer, which the lesson
    uses until the learner's own passes): name -> (forward, derivative with respect to
    input ``i``).

    >>> forward, derivative = derivative_table()["mul"]
    >>> forward(3.0, 4.0), derivative(3.0, 4.0, 0), derivative(3.0, 4.0, 1)
    (12.0, 4.0, 3.0)
    """
    return {
        "add": (lambda a, b: a + b, lambda a, b, i: 1.0),
        "sub": (lambda a, b: a - b, lambda a, b, i: 1.0 if i == 0 else -1.0),
        "mul": (lambda a, b: a * b, lambda a, b, i: b if i == 0 else a),
        "div": (lambda a, b: a / b, lambda a, b, i: 1 / b if i == 0 else -a / b**2),
        "pow": (
            lambda a, b: a**b,
            lambda a, b, i: b * a ** (b - 1) if i == 0 else a**b * math.log(a),
        ),
        "sin": (lambda a: math.sin(a), lambda a, i: math.cos(a)),
        "cos": (lambda a: math.cos(a), lambda a, i: -math.sin(a)),
        "exp": (lambda a: math.exp(a), lambda a, i: math.exp(a)),
        "log": (lambda a: math.log(a), lambda a, i: 1 / a),
    }


def build_static_classifier(init, lr: float):
    """Lesson 9's classifier as a static graph (exercise 09-3's answer, which the rest of
    the lesson uses until the learner's passes, so a student's notebook never shows it).

    ``init`` holds W1, b1, W2, b2 in ``nn.Linear``'s layout (W is ``(out, in)``, the
    layer computes ``x @ W.T + b``).  Placeholders with a ``None`` batch; cross-entropy;
    Adam's update inside the graph.  Returns ``step(X, y) -> [loss, update]``, one
    training step, and ``classify(X) -> [logits]``, the forward pass alone.

    >>> eye, zero = np.eye(2, dtype=np.float32), np.zeros(2, dtype=np.float32)
    >>> step, classify = build_static_classifier([eye, zero, eye, zero], lr=0.1)
    >>> classify(np.array([[0.0, 2.0]], dtype=np.float32))[0].argmax(axis=1)
    array([1])
    """
    with ns.Graph() as g:
        W1, b1, W2, b2 = (ns.Variable(v, name=n) for v, n in zip(init, ("W1", "b1", "W2", "b2")))
        xs = ns.placeholder("X", shape=(None, 2), dtype=np.float32)  # as data and weights
        ys = ns.placeholder("y", shape=(None,), dtype=np.int64)
        logits = ns.tanh(xs @ ns.t(W1) + b1) @ ns.t(W2) + b2
        loss = ns.cross_entropy(logits, ys)
        train = ns.optim.Adam([W1, b1, W2, b2], lr=lr).minimize(loss)
    return g.compile([xs, ys], [loss, train]), g.compile([xs], [logits])


def train_capstone(X, y, epochs: int = 300):
    """Lesson 9's classifier, trained as lesson 9 trains it, in both modes.

    Dynamic mode: ``Linear(2, 32)``, ``Tanh``, ``Linear(32, 2)`` after
    ``ng.manual_seed(0)``, cross-entropy, ``ng.optim.Adam(lr=0.05)`` on the whole set,
    float32 like the layers (``X`` as :mod:`~naivegraph.lessons.datasets` gives it).
    Static mode: the same network written out as a graph with the same initial weights
    and a ``None`` batch, its Adam step built into the graph.  Returns the two loss
    curves and the static graph's class prediction for any batch of points.
    """
    ng.manual_seed(0)
    model = ng.nn.Sequential(ng.nn.Linear(2, 32), ng.nn.Tanh(), ng.nn.Linear(32, 2))
    init = [p.detach().numpy().copy() for p in model.parameters()]
    optimizer = ng.optim.Adam(model.parameters(), lr=0.05)
    Xt, yt = ng.tensor(X), ng.tensor(y)
    dynamic = [train_step(model, optimizer, Xt, yt) for _ in range(epochs)]

    step, classify = build_static_classifier(init, lr=0.05)
    static = [float(step(X, y)[0]) for _ in range(epochs)]

    def predict(points):
        return classify(points)[0].argmax(axis=1)

    return {"dynamic": dynamic, "static": static}, predict


def iteration_costs(X, y, batch: int = 32, lr: float = 0.5):
    """Lesson 7's MLP: graph nodes built, and peak bytes allocated (tracemalloc), in one
    training step of each mode on a batch of ``batch`` points.

    The weights and the batch are drawn as lesson 7 draws them; the static step is the
    lesson's graph, gradients and SGD updates inside it.
    """
    rng = np.random.default_rng(0)
    init = [a.astype(np.float32)  # float32, as the data and the placeholders
            for a in (rng.normal(scale=0.7, size=(2, 16)), np.zeros(16),
                      rng.normal(scale=0.25, size=(16, 2)), np.zeros(2))]
    rows = rng.choice(len(X), size=batch, replace=False)
    Xb, yb = X[rows], y[rows]
    params = [ng.tensor(p.copy(), requires_grad=True) for p in init]

    def dynamic_step():
        W1, b1, W2, b2 = params
        logits = ng.tanh(ng.tensor(Xb) @ W1 + b1) @ W2 + b2
        loss = ng.nn.functional.cross_entropy(logits, ng.tensor(yb))
        built = nodes_built(loss)
        for p in params:
            p.grad = None
        loss.backward()
        with ng.no_grad():
            for p in params:
                p -= lr * p.grad
        return built

    with ns.Graph() as g:
        xs = ns.placeholder("X", shape=(None, 2))
        ys = ns.placeholder("y", shape=(None,), dtype=np.int64)
        Ws = [ns.Variable(p.copy(), name=n) for p, n in zip(init, ("W1", "b1", "W2", "b2"))]
        loss_node = ns.cross_entropy(ns.tanh(xs @ Ws[0] + Ws[1]) @ Ws[2] + Ws[3], ys)
        train_step = ns.optim.SGD(Ws, lr=lr).minimize(loss_node)
    compiled = g.compile([xs, ys], [loss_node, train_step])

    def static_step():
        compiled(Xb, yb)
        return 0  # the graph was built once, before the first step

    nodes, memory = {}, {}
    for name, fn in (("dynamic", dynamic_step), ("static", static_step)):
        fn()  # warm up
        tracemalloc.start()
        nodes[name] = [fn()]
        memory[name] = round(tracemalloc.get_traced_memory()[1] / 1024) * 1024
        tracemalloc.stop()
    return nodes, memory


def nodes_built(loss) -> int:
    """How many grad_fn nodes (``AccumulateGrad`` included) the graph of ``loss`` holds."""
    seen, stack = set(), [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and id(node) not in seen:
            seen.add(id(node))
            stack.extend(child for child, _ in node.next_functions)
    return len(seen)


def iteration_costs_in_a_fresh_process() -> tuple[dict, dict]:
    """:func:`iteration_costs` of lesson 7's two moons, measured in a new interpreter.

    Peak memory under tracemalloc depends on what the process ran before (caches filled,
    dicts grown), so a figure that must come out the same byte for byte measures it
    where nothing ran before: a fresh Python with the fast layer on, as shipped.
    """
    program = (
        "import json; from naivegraph.lessons.datasets import two_moons; "
        "from naivegraph.lessons.training import iteration_costs; "
        "print(json.dumps(iteration_costs(*two_moons(200, seed=0))))"
    )
    env = {**os.environ, "NAIVEGRAPH_FAST": "1"}
    out = subprocess.run(
        [sys.executable, "-c", program], env=env, capture_output=True, text=True, check=True
    )
    nodes, memory = json.loads(out.stdout)
    return nodes, memory
