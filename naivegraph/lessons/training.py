"""The small models the lessons' figures train, in both modes, and what they cost.

``train_both_modes`` trains one MLP in dynamic mode and in static mode (its SGD step
built into the graph) on the same data; ``iteration_costs`` counts the graph nodes and
peak memory of one iteration of each; ``descent`` follows a gradient by hand.
"""

from __future__ import annotations

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


def train_both_modes(X, y, steps: int = 300, lr: float = 0.5, hidden: int = 16, seed: int = 0):
    """Train the same MLP in dynamic and static mode; return losses, predict fn, timings."""
    def init():
        rng = np.random.default_rng(seed)
        return [rng.normal(scale=1 / np.sqrt(2), size=(2, hidden)), np.zeros(hidden),
                rng.normal(scale=1 / np.sqrt(hidden), size=(hidden, 2)), np.zeros(2)]

    # dynamic
    params = [ng.tensor(p, requires_grad=True) for p in init()]
    Xt, yt = ng.tensor(X), ng.tensor(y)
    dyn_losses, dyn_times = [], []
    for _ in range(steps):
        t0 = time.perf_counter()
        W1, b1, W2, b2 = params
        loss = ng.nn.functional.cross_entropy(ng.tanh(Xt @ W1 + b1) @ W2 + b2, yt)
        for p in params:
            p.grad = None
        loss.backward()
        with ng.no_grad():
            for p in params:
                p -= lr * p.grad
        dyn_times.append(time.perf_counter() - t0)
        dyn_losses.append(loss.item())

    # static
    with ns.Graph() as g:
        xs = ns.placeholder("X", shape=(None, X.shape[1]))  # any batch size
        ys = ns.placeholder("y", shape=(None,), dtype=np.int64)
        Ws = [ns.Variable(p, name=n) for p, n in zip(init(), ("W1", "b1", "W2", "b2"))]
        logits = ns.tanh(xs @ Ws[0] + Ws[1]) @ Ws[2] + Ws[3]
        sloss = ns.cross_entropy(logits, ys)
        train_step = ns.optim.SGD(Ws, lr=lr).minimize(sloss)  # gradients + updates in the graph
    step = g.compile([xs, ys], [sloss, train_step])
    st_losses, st_times = [], []
    for _ in range(steps):
        t0 = time.perf_counter()
        loss_value, _ = step(X, y)
        st_times.append(time.perf_counter() - t0)
        st_losses.append(float(loss_value))

    def predict(points):
        W1, b1, W2, b2 = (W.value for W in Ws)
        return (np.tanh(np.asarray(points, dtype=float) @ W1 + b1) @ W2 + b2).argmax(axis=1)

    return {"dynamic": dyn_losses, "static": st_losses}, predict, \
        {"dynamic": dyn_times, "static": st_times}


def iteration_costs(X, y, hidden: int = 16):
    """Graph nodes built, and peak bytes allocated (tracemalloc), in one training iteration."""
    rng = np.random.default_rng(0)
    init = [rng.normal(size=(2, hidden)), np.zeros(hidden), rng.normal(size=(hidden, 2)),
            np.zeros(2)]
    params = [ng.tensor(p, requires_grad=True) for p in init]
    Xt, yt = ng.tensor(X), ng.tensor(y)

    def dynamic_step():
        W1, b1, W2, b2 = params
        loss = ng.nn.functional.cross_entropy(ng.tanh(Xt @ W1 + b1) @ W2 + b2, yt)
        count, seen, stack = 0, set(), [loss.grad_fn]
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            count += 1
            stack.extend(fn for fn, _ in node.next_functions)
        loss.backward()
        return count

    with ns.Graph() as g:
        xs = ns.placeholder("X", shape=X.shape)
        ys = ns.placeholder("y", shape=y.shape, dtype=np.int64)
        Ws = [ns.Variable(p, name=n) for p, n in zip(init, ("W1", "b1", "W2", "b2"))]
        loss = ns.cross_entropy(ns.tanh(xs @ Ws[0] + Ws[1]) @ Ws[2] + Ws[3], ys)
        grads = ns.gradients(loss, Ws)
    step = g.compile([xs, ys], [loss, *grads])

    def static_step():
        step(X, y)
        return 0

    nodes, memory = {}, {}
    for name, fn in (("dynamic", dynamic_step), ("static", static_step)):
        fn()  # warm up
        tracemalloc.start()
        nodes[name] = [fn()]
        memory[name] = round(tracemalloc.get_traced_memory()[1] / 1024) * 1024
        tracemalloc.stop()
    return nodes, memory
