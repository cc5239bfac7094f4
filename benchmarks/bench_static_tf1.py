"""The TensorFlow 1 two-layer network as one compiled step with in-graph updates.

    python benchmarks/bench_static_tf1.py            # N=64, 1000-100-10 (the tutorial's size)
    python benchmarks/bench_static_tf1.py --quick    # fewer repeats

Three ways to take one training step of the model of PyTorch's tutorial
("tf_two_layer_net.py" / "two_layer_net_autograd.py"): sum-of-squares loss, ReLU,
plain gradient descent, float64.

* numpy by hand: forward, the hand-derived backward, ``w -= lr * grad`` in place;
* static: one compiled function whose outputs are the loss and whose ``updates``
  are the assignments, built with ``ns.gradients`` on a ``(None, D_in)`` placeholder;
* dynamic: the autograd loop (forward, ``backward()``, update under ``no_grad``).

Targets (issue "Static mode, for real"): static <= 1.05 x numpy, and at least 2 x
faster than dynamic.  Each figure is the median of ``--repeats`` timings of
``--steps`` steps, after one warm-up step.

Each contender runs in a fresh interpreter: in one process, a contender's speed
depended on what ran before it (the numpy step took 1,450-1,850 us first and 690-830 us
after the static one), because glibc's malloc returns freed 800 KB arrays to the system
or keeps them depending on the heap's history, and a step that allocates them anew pays
the page faults.  ``MALLOC_TRIM_THRESHOLD_`` and ``MALLOC_MMAP_THRESHOLD_`` (glibc
settings, passed through) show that share: set to 1000000000, numpy by hand and the
dynamic loop no longer pay it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import naivegraph as ng  # noqa: E402
import naivegraph.static as ns  # noqa: E402

N, D_IN, H, D_OUT = 64, 1000, 100, 10
LR = 1e-6


def data():
    rng = np.random.default_rng(0)
    return (
        rng.standard_normal((D_IN, H)),
        rng.standard_normal((H, D_OUT)),
        rng.standard_normal((N, D_IN)),
        rng.standard_normal((N, D_OUT)),
    )


def numpy_step_factory(w1_init, w2_init, x, y):
    w1, w2 = w1_init.copy(), w2_init.copy()

    def step():
        h = x.dot(w1)
        h_relu = np.maximum(h, 0)
        y_pred = h_relu.dot(w2)
        loss = np.square(y_pred - y).sum()
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.T.dot(grad_y_pred)
        grad_h = grad_y_pred.dot(w2.T)
        grad_h[h < 0] = 0
        grad_w1 = x.T.dot(grad_h)
        np.subtract(w1, LR * grad_w1, out=w1)  # w1 -= lr * grad_w1, in the closure's array
        np.subtract(w2, LR * grad_w2, out=w2)
        return loss

    return step


def static_step_factory(w1_init, w2_init, x_value, y_value):
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, D_IN))
        y = ns.placeholder("y", shape=(None, D_OUT))
        w1, w2 = ns.Variable(w1_init, name="w1"), ns.Variable(w2_init, name="w2")
        y_pred = ns.relu(x @ w1) @ w2
        loss = ns.sum((y_pred - y) ** 2)
        grad_w1, grad_w2 = ns.gradients(loss, [w1, w2])
    compiled = g.compile([x, y], [loss], updates=[(w1, w1 - LR * grad_w1), (w2, w2 - LR * grad_w2)])
    return lambda: compiled(x_value, y_value)[0]


def dynamic_step_factory(w1_init, w2_init, x_value, y_value):
    w1 = ng.tensor(w1_init, requires_grad=True)
    w2 = ng.tensor(w2_init, requires_grad=True)
    x, y = ng.tensor(x_value), ng.tensor(y_value)

    def step():
        loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
        loss.backward()
        with ng.no_grad():
            w1.sub_(LR * w1.grad)
            w2.sub_(LR * w2.grad)
            w1.grad = None
            w2.grad = None
        return loss

    return step


def seconds_per_step(step, steps: int, repeats: int) -> float:
    step()  # warm-up (the static plan is built at compile time already)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            step()
        times.append((time.perf_counter() - start) / steps)
    return statistics.median(times)


CONTENDERS = {
    "numpy by hand": numpy_step_factory,
    "static, compiled step with updates": static_step_factory,
    "dynamic autograd loop": dynamic_step_factory,
}


def in_fresh_process(name: str, quick: bool) -> float:
    """Seconds per step of contender ``name``, measured by a new interpreter."""
    command = [sys.executable, os.path.abspath(__file__), "--only", name]
    output = subprocess.run(
        command + (["--quick"] if quick else []), capture_output=True, text=True, check=True
    ).stdout
    return float(output)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", choices=CONTENDERS, help="time one contender, print seconds")
    args = parser.parse_args()
    steps, repeats = (10, 5) if args.quick else (50, 15)
    if args.only:
        print(seconds_per_step(CONTENDERS[args.only](*data()), steps, repeats))
        return
    results = {name: in_fresh_process(name, args.quick) for name in CONTENDERS}
    base = results["numpy by hand"]
    print(f"one training step, N={N}, {D_IN}-{H}-{D_OUT}, float64 (median of {repeats})")
    for name, seconds in results.items():
        print(f"  {name:36s} {seconds * 1e6:9.1f} us   {seconds / base:5.2f} x numpy")
    static = results["static, compiled step with updates"]
    dynamic = results["dynamic autograd loop"]
    print(f"  static is {dynamic / static:.2f} x faster than dynamic")


if __name__ == "__main__":
    main()
