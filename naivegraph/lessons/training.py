"""The small models the lessons' figures train, in both modes, and what they cost.

``train_capstone`` trains lesson 9's classifier in dynamic mode and in static mode (its
Adam step built into the graph); ``iteration_costs`` counts the graph nodes and peak
memory of one training step of lesson 7's MLP in each mode; ``descent`` follows a
gradient by hand.
"""

from __future__ import annotations

import json
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
    """How many intermediate values a planned run holds after each of its steps.

    ``plan`` is a :class:`naivegraph.static.executor.Plan`; a value counts from the
    step that makes it until the plan frees it.  Fetched values are never freed (the
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


def train_capstone(X, y, epochs: int = 300):
    """Lesson 9's classifier, trained as lesson 9 trains it, in both modes.

    Dynamic mode: ``Linear(2, 32)``, ``Tanh``, ``Linear(32, 2)`` after
    ``ng.manual_seed(0)``, cross-entropy, ``ng.optim.Adam(lr=0.05)`` on the whole set.
    Static mode: the same network written out as a graph with the same initial weights
    and a ``None`` batch, its Adam step built into the graph.  Returns the two loss
    curves and the static graph's class prediction for any batch of points.
    """
    ng.manual_seed(0)
    model = ng.nn.Sequential(ng.nn.Linear(2, 32), ng.nn.Tanh(), ng.nn.Linear(32, 2))
    init = [p.detach().numpy().copy() for p in model.parameters()]
    optimizer = ng.optim.Adam(model.parameters(), lr=0.05)
    Xt, yt = ng.tensor(X), ng.tensor(y)
    dynamic = []
    for _ in range(epochs):
        optimizer.zero_grad()
        loss = ng.nn.functional.cross_entropy(model(Xt), yt)
        loss.backward()
        optimizer.step()
        dynamic.append(loss.item())

    with ns.Graph() as g:
        xs = ns.placeholder("X", shape=(None, 2))
        ys = ns.placeholder("y", shape=(None,), dtype=np.int64)
        W1, b1, W2, b2 = (ns.Variable(v, name=n) for v, n in zip(init, ("W1", "b1", "W2", "b2")))
        logits = ns.tanh(xs @ ns.t(W1) + b1) @ ns.t(W2) + b2
        loss_node = ns.cross_entropy(logits, ys)
        train = ns.optim.Adam([W1, b1, W2, b2], lr=0.05).minimize(loss_node)
    step = g.compile([xs, ys], [loss_node, train])
    classify = g.compile([xs], [logits])
    static = [float(step(X, y)[0]) for _ in range(epochs)]

    def predict(points):
        return classify(np.asarray(points, dtype=float))[0].argmax(axis=1)

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
