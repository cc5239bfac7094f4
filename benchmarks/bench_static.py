"""Static-mode benchmarks: replay speed, an MLP training step, and memory planning.

Run with ``python benchmarks/bench_static.py`` (``--quick`` for fewer repeats).
Times are medians over repeats of ``time.perf_counter`` after a warm-up.

1. replay: the reference example (l1..l4, loss and three gradients) compiled once and
   run per iteration, against the same written by hand in numpy, and rebuilding it
   every iteration in dynamic mode and in PyTorch eager (each when importable).
2. MLP step 784-256-10, batch 256, float32, softmax cross-entropy, forward + backward +
   SGD update: compiled static graph against the same step written by hand in numpy.
3. memory: peak traced bytes of a 100-op elementwise chain on 10^6 float64 values,
   with and without memory planning.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Callable

# One BLAS thread unless told otherwise: on a shared machine, multi-threaded matmuls
# fighting other processes make the MLP timings swing by 2x from run to run.  Both
# contenders use the same numpy BLAS, so the ratio is what matters.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import naivegraph.static as ns  # noqa: E402


def median_times(
    fns: list[Callable[[], object]], number: int, repeat: int, warmup: int = 3
) -> list[float]:
    """Median seconds per call of each function, measured interleaved.

    The functions take turns batch by batch, so a slow phase of the machine (other
    processes, CPU frequency changes) hits all of them alike instead of one.
    """
    for fn in fns:
        for _ in range(warmup):
            fn()
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, bucket in zip(fns, samples):
            start = time.perf_counter()
            for _ in range(number):
                fn()
            bucket.append((time.perf_counter() - start) / number)
    return [statistics.median(bucket) for bucket in samples]


# ---------------------------------------------------------------------------- 1. replay
def compiled_reference() -> Callable[[], object]:
    g = ns.Graph()
    with g:
        x = ns.placeholder("input", shape=(2, 2))
        w1, w2, w3 = (
            ns.Variable(2.0, name="w1"),
            ns.Variable(3.0, name="w2"),
            ns.Variable(4.0, name="w3"),
        )
        l1 = x * w1
        loss = ns.mean((l1 + w2) * (l1 * w3))
        grads = ns.gradients(loss, [w1, w2, w3])
    f = g.compile([x], [loss, *grads])
    feed = np.ones((2, 2))
    return lambda: f(feed)


def numpy_reference():
    """The example and its three gradients written by hand (bench_dynamic's numpy row)."""
    x = np.ones((2, 2))
    w1, w2, w3 = 2.0, 3.0, 4.0
    l1 = x * w1
    l2 = l1 + w2
    l3 = l1 * w3
    loss = (l2 * l3).mean()
    g4 = np.full((2, 2), 1 / 4)
    g2, g3 = g4 * l3, g4 * l2
    g1 = g2 + g3 * w3
    return loss, (g1 * x).sum(), g2.sum(), (g3 * l1).sum()


def dynamic_reference() -> Callable[[], object] | None:
    try:
        import naivegraph as ng

        _ = ng.tensor
    except (ImportError, AttributeError):
        return None
    w1 = ng.tensor(2.0, requires_grad=True)
    w2 = ng.tensor(3.0, requires_grad=True)
    w3 = ng.tensor(4.0, requires_grad=True)
    feed = np.ones((2, 2))

    def step():
        for w in (w1, w2, w3):
            w.grad = None
        x = ng.tensor(feed)
        l1 = x * w1
        loss = ((l1 + w2) * (l1 * w3)).mean()
        loss.backward()
        return loss

    return step


def torch_reference() -> Callable[[], object] | None:
    try:
        import torch
    except ImportError:
        return None
    w1, w2, w3 = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (2.0, 3.0, 4.0))
    feed = torch.ones((2, 2), dtype=torch.float64)

    def step():
        for w in (w1, w2, w3):
            w.grad = None
        l1 = feed * w1
        loss = ((l1 + w2) * (l1 * w3)).mean()
        loss.backward()
        return loss

    return step


# ---------------------------------------------------------------------------- 2. MLP
def mlp_data(seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(256, 784)).astype(np.float32)
    y = rng.integers(0, 10, size=256)
    params = [
        (rng.normal(size=(784, 256)) * 0.05).astype(np.float32),
        np.zeros(256, np.float32),
        (rng.normal(size=(256, 10)) * 0.05).astype(np.float32),
        np.zeros(10, np.float32),
    ]
    return X, y, params


def static_mlp_step(lr: float = 0.1) -> Callable[[], object]:
    X_value, y_value, params = mlp_data()
    g = ns.Graph()
    with g:
        X = ns.placeholder("X", shape=(256, 784), dtype=np.float32)
        y = ns.placeholder("y", shape=(256,), dtype=np.int64)
        W1, b1, W2, b2 = (ns.Variable(p, name=n) for p, n in zip(params, ["W1", "b1", "W2", "b2"]))
        logits = ns.relu(X @ W1 + b1) @ W2 + b2
        loss = ns.cross_entropy(logits, y)
        grads = ns.gradients(loss, [W1, b1, W2, b2])
    f = g.compile([X, y], [loss, *grads])
    variables = [W1, b1, W2, b2]

    def step():
        loss_value, *gs = f(X_value, y_value)
        for v, gv in zip(variables, gs):
            v.value -= lr * gv  # in place, as the numpy version does
        return loss_value

    return step


def numpy_mlp_step(lr: float = 0.1) -> Callable[[], object]:
    X, y, (W1, b1, W2, b2) = mlp_data()
    rows = np.arange(256)

    def step():
        h_pre = X @ W1 + b1
        h = np.maximum(h_pre, 0)
        logits = h @ W2 + b2
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        loss = -log_probs[rows, y].mean()
        d_logits = np.exp(log_probs)
        d_logits[rows, y] -= 1.0
        d_logits /= 256
        dW2, db2 = h.T @ d_logits, d_logits.sum(axis=0)
        d_h = (d_logits @ W2.T) * (h_pre > 0)
        dW1, db1 = X.T @ d_h, d_h.sum(axis=0)
        for p, gp in ((W1, dW1), (b1, db1), (W2, dW2), (b2, db2)):
            p -= lr * gp
        return loss

    return step


def check_mlp_agreement() -> float:
    """Both MLP steps must compute the same losses (else the timing means nothing)."""
    static, manual = static_mlp_step(), numpy_mlp_step()
    losses = [(float(static()), float(manual())) for _ in range(3)]
    return max(abs(a - b) for a, b in losses)


# ---------------------------------------------------------------------------- 3. memory
def chain_peak(free: bool, size: int = 10**6, n_ops: int = 100) -> int:
    g = ns.Graph()
    ops = [ns.sin, ns.cos, ns.tanh, ns.neg]
    with g:
        x = ns.placeholder("x", shape=(size,))
        y = x
        for i in range(n_ops):
            y = ops[i % 4](y)
    feed = np.ones(size)
    tracemalloc.start()
    tracemalloc.reset_peak()
    g.forward(x=feed, fetches=[y], free_intermediates=free)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


# ---------------------------------------------------------------------------- report
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args()
    repeat = 5 if args.quick else 15

    print("1. replay: reference example, loss + 3 gradients per iteration")
    rows = [
        ("static, compiled once", compiled_reference()),
        ("numpy by hand (forward + backward)", numpy_reference),
        ("dynamic, rebuilt each iteration", dynamic_reference()),
        ("PyTorch eager", torch_reference()),
    ]
    present = [(label, fn) for label, fn in rows if fn is not None]
    times = median_times([fn for _, fn in present], number=1000, repeat=repeat)
    base = times[0]
    for (label, _), t in zip(present, times):
        print(f"   {label:<34} {t * 1e6:10.1f} us   {t / base:5.2f}x static")
    print(f"   static / numpy by hand = {base / times[1]:.2f}")
    for label, fn in rows:
        if fn is None:
            print(f"   {label:<34} {'not importable':>14}")

    print("2. MLP 784-256-10, batch 256, float32: forward + backward + SGD step")
    print(f"   max |loss difference| static vs numpy over 3 steps: {check_mlp_agreement():.2e}")
    t_static, t_numpy = median_times(
        [static_mlp_step(), numpy_mlp_step()], number=5, repeat=repeat * 4
    )
    print(f"   {'static, compiled':<34} {t_static * 1e3:10.2f} ms")
    print(f"   {'hand-written numpy':<34} {t_numpy * 1e3:10.2f} ms")
    print(f"   static / numpy = {t_static / t_numpy:.3f}")

    print("3. memory: 100-op elementwise chain on 10^6 float64 (8 MB per array)")
    for label, free in (("with planning", True), ("without planning", False)):
        peak = chain_peak(free)
        print(f"   {label:<34} peak {peak / 1e6:10.1f} MB = {peak / 8e6:6.2f} arrays")


if __name__ == "__main__":
    main()
