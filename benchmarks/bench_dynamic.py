"""Dynamic mode speed, side by side with PyTorch eager, micrograd and numpy by hand.

    python benchmarks/bench_dynamic.py            # all three workloads
    python benchmarks/bench_dynamic.py --quick    # fewer repeats
    python benchmarks/bench_dynamic.py --cpu-time # CPU time: steadier on a busy machine
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_dynamic.py --cpu-time --only c

Workloads (forward + backward each):
  (a) the reference l1..l4 example (input ones(2, 2), w1=2, w2=3, w3=4)
  (b) a chain of 1,000 scalar ops
  (c) one MLP training step 784-256-10, batch 256, float32, softmax cross-entropy

Each time is the median of several repeats after a warm-up, in a fresh process; every
library is measured ``--rounds`` times, the libraries taking turns, and the best round
counts.  Ratios > 1 mean slower than the reference column named in the header.

micrograd (PyPI ``micrograd`` 0.1.0, the dev extra; skipped when absent) is a peer for
(a) only, computed element by element as a scalar engine does it: the 2x2 input as four
Python floats, w1, w2, w3 as ``Value`` leaves made once, l1..l4 per element, the loss as
the sum of the four l4 times 0.25, the leaves' ``.grad`` reset to 0 before each run.
Its recursive graph sort cannot take (b)'s 1,000-deep chain at Python's default
recursion limit, and it has no arrays for (c).

Every (workload, library) pair runs in its own fresh Python process that imports only
that library: importing PyTorch adds ~170,000 objects to the heap, and Python's cyclic
garbage collector would then bill naivegraph for scanning them (``--same-process``
shows that effect).
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import subprocess
import sys
import time
from typing import Callable

import numpy as np

import naivegraph as ng

_ONLY = os.environ.get("NAIVEGRAPH_BENCH_ONLY")
torch = None
if _ONLY in (None, "torch"):
    try:
        import torch
    except ImportError:  # PyTorch is only a yardstick
        torch = None
micrograd_engine = None
if _ONLY in (None, "micrograd"):
    try:
        from micrograd import engine as micrograd_engine
    except ImportError:  # micrograd is only a yardstick
        micrograd_engine = None


#: the clock: wall-clock time, or this process's CPU time with ``--cpu-time``
CLOCK = time.process_time if os.environ.get("NAIVEGRAPH_BENCH_CPU") == "1" else time.perf_counter


def median_time(fn: Callable[[], object], repeats: int, inner: int) -> float:
    """Median seconds per call of ``fn`` over ``repeats`` batches of ``inner`` calls."""
    fn()  # warm-up
    samples = []
    for _ in range(repeats):
        start = CLOCK()
        for _ in range(inner):
            fn()
        samples.append((CLOCK() - start) / inner)
    return statistics.median(samples)


# -- (a) the reference example --------------------------------------------------------------
def reference(lib):
    """The example in ``lib`` (naivegraph or torch: the same code runs on both)."""
    x = lib.ones([2, 2])
    w1 = lib.tensor(2.0, requires_grad=True)
    w2 = lib.tensor(3.0, requires_grad=True)
    w3 = lib.tensor(4.0, requires_grad=True)
    l1 = x * w1
    loss = ((l1 + w2) * (l1 * w3)).mean()
    loss.backward()
    return w1.grad


def micrograd_reference():
    """The reference example in micrograd, element by element, as a callable.

    The leaves are made once; each call resets their ``.grad`` (micrograd accumulates
    into it) and returns ``(loss, w1, w2, w3)``.
    """
    value = micrograd_engine.Value
    w1, w2, w3 = value(2.0), value(3.0), value(4.0)
    x = [1.0, 1.0, 1.0, 1.0]  # ones(2, 2), flattened: micrograd wraps each as it multiplies

    def step():
        w1.grad = w2.grad = w3.grad = 0
        l4 = []
        for element in x:
            l1 = element * w1
            l2 = l1 + w2
            l3 = l1 * w3
            l4.append(l2 * l3)
        loss = (l4[0] + l4[1] + l4[2] + l4[3]) * 0.25
        loss.backward()
        return loss, w1, w2, w3

    return step


def check_micrograd_reference(step) -> None:
    """Fail loudly unless micrograd's run gives naivegraph's loss and gradients."""
    loss, w1, w2, w3 = step()
    found = (loss.data, w1.grad, w2.grad, w3.grad)
    if found != (40.0, 28.0, 8.0, 10.0):
        raise AssertionError(f"micrograd's reference example gave {found}, not (40, 28, 8, 10)")


def reference_numpy():
    x = np.ones((2, 2))
    w1, w2, w3 = 2.0, 3.0, 4.0
    l1 = x * w1
    l2 = l1 + w2
    l3 = l1 * w3
    g4 = np.full((2, 2), 1 / 4)
    g2, g3 = g4 * l3, g4 * l2
    g1 = g2 + g3 * w3
    return (g1 * x).sum(), g2.sum(), (g3 * l1).sum()


# -- (b) a 1,000-op scalar chain ------------------------------------------------------------
CHAIN = 1000


def chain(lib):
    w = lib.tensor(0.5, requires_grad=True)
    y = w
    for _ in range(CHAIN // 2):
        y = y * 0.999
        y = y + 0.001
    y.backward()
    return w.grad


def chain_numpy():
    y = np.float64(0.5)
    for _ in range(CHAIN // 2):
        y = y * 0.999 + 0.001
    grad = 1.0
    for _ in range(CHAIN // 2):
        grad = grad * 0.999
    return grad


# -- (c) an MLP training step ---------------------------------------------------------------
def mlp_data(seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((256, 784)).astype(np.float32)
    y = rng.integers(0, 10, 256)
    w1 = (rng.standard_normal((784, 256)) * 0.05).astype(np.float32)
    b1 = np.zeros(256, np.float32)
    w2 = (rng.standard_normal((256, 10)) * 0.05).astype(np.float32)
    b2 = np.zeros(10, np.float32)
    return x, y, [w1, b1, w2, b2]


def mlp_numpy_step(x, y, params, lr=0.01):
    w1, b1, w2, b2 = params
    h = x @ w1 + b1
    a = np.maximum(h, 0)
    logits = a @ w2 + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    p = e / e.sum(axis=1, keepdims=True)
    n = x.shape[0]
    loss = -np.log(p[np.arange(n), y]).mean()
    d_logits = p
    d_logits[np.arange(n), y] -= 1
    d_logits /= n
    d_w2 = a.T @ d_logits
    d_b2 = d_logits.sum(axis=0)
    d_a = d_logits @ w2.T
    d_h = d_a * (h > 0)
    d_w1 = x.T @ d_h
    d_b1 = d_h.sum(axis=0)
    for p_, g in zip(params, (d_w1, d_b1, d_w2, d_b2)):
        p_ -= lr * g
    return loss


def make_mlp(lib, x, y, params):
    """One SGD step of the MLP in ``lib`` (naivegraph or torch), as a callable."""
    xs, ys = lib.from_numpy(x), lib.from_numpy(y)
    ws = [lib.from_numpy(p.copy()).requires_grad_() for p in params]
    opt = lib.optim.SGD(ws, lr=0.01)

    def step():
        w1, b1, w2, b2 = ws
        logits = (xs @ w1 + b1).relu() @ w2 + b2
        loss = lib.nn.functional.cross_entropy(logits, ys)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    return step


WORKLOADS = {
    "(a) reference l1..l4 fwd+bwd": ("reference", 200),
    "(b) 1,000-op scalar chain fwd+bwd": ("chain", 3),
    "(c) MLP 784-256-10 step, batch 256": ("mlp", 5),
}


def measure(key: str, library: str, repeats: int, inner: int) -> float | None:
    """Seconds per call of workload ``key`` run with ``library`` in this process."""
    if library == "torch" and torch is None:
        return None
    if library == "micrograd":
        if key != "reference" or micrograd_engine is None:
            return None
        fn = micrograd_reference()
        check_micrograd_reference(fn)
        return median_time(fn, repeats, inner)
    lib = {"naivegraph": ng, "torch": torch, "numpy": None}[library]
    if key == "mlp":
        x, y, params = mlp_data()
        fn = make_mlp(lib, x, y, params) if lib else (lambda: mlp_numpy_step(x, y, params))
    elif lib is None:
        fn = {"reference": reference_numpy, "chain": chain_numpy}[key]
    else:
        fn = functools.partial({"reference": reference, "chain": chain}[key], lib)
    return median_time(fn, repeats, inner)


def measure_in_subprocess(key: str, library: str, repeats: int, inner: int) -> float | None:
    """Run ``measure`` in a fresh interpreter that imports only ``library``."""
    code = (
        f"import sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r});"
        f"import bench_dynamic as b; print(repr(b.measure({key!r}, {library!r}, "
        f"{repeats}, {inner})))"
    )
    env = dict(os.environ, NAIVEGRAPH_BENCH_ONLY=library)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    return eval(out.stdout.strip().splitlines()[-1])  # a float or None, printed by us


LIBRARIES = ("naivegraph", "torch", "micrograd", "numpy")


def run(
    quick: bool = False, same_process: bool = False, rounds: int = 3, only: str = "abc"
) -> list[dict]:
    """Each (workload, library) time is the best of ``rounds`` process medians.

    The libraries take turns within each round, so a burst of load on the machine hits
    all of them rather than one; the best round is the one least disturbed.
    """
    reps = 5 if quick else 15
    measure_once = measure if same_process else measure_in_subprocess
    rows = []
    for name, (key, inner) in WORKLOADS.items():
        if name[1] not in only:
            continue
        samples: dict[str, list] = {library: [] for library in LIBRARIES}
        for _ in range(rounds):
            for library in LIBRARIES:
                if library == "micrograd" and key != "reference":
                    samples[library].append(None)  # a peer for (a) only
                    continue
                samples[library].append(measure_once(key, library, reps, inner))
        times = {
            library: None if None in found else min(found) for library, found in samples.items()
        }
        rows.append(dict(workload=name, **times))
    return rows


def _us(seconds: float | None) -> str:
    return f"{seconds * 1e6:10.1f}us" if seconds else f"{'-':>12}"


def _ratio(over: float, under: float | None) -> str:
    return f"{over / under:9.2f}" if under else f"{'-':>9}"


def format_rows(rows: list[dict]) -> str:
    head = (
        f"{'workload':38} {'naivegraph':>12} {'torch':>12} {'micrograd':>12} {'numpy':>12} "
        f"{'ng/torch':>9} {'ng/mg':>9} {'ng/numpy':>9}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        ng_time = r["naivegraph"]
        lines.append(
            f"{r['workload']:38} {_us(ng_time)} {_us(r['torch'])} {_us(r['micrograd'])} "
            f"{_us(r['numpy'])} {_ratio(ng_time, r['torch'])} "
            f"{_ratio(ng_time, r['micrograd'])} {_ratio(ng_time, r['numpy'])}"
        )
    return "\n".join(lines)


def main() -> None:
    global CLOCK
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument(
        "--same-process",
        action="store_true",
        help="run all libraries in this one process (shows GC interference)",
    )
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="time with each process's CPU time, which other jobs on the machine move less "
        "than wall-clock time (BLAS threads' time adds up: (c) then counts all of it)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="measure every library this many times, in turns (default 3)",
    )
    parser.add_argument(
        "--only",
        default="abc",
        help="the workloads to run, by letter: --only ab (default abc)",
    )
    args = parser.parse_args()
    if args.cpu_time:  # read by every process measuring, this one included
        os.environ["NAIVEGRAPH_BENCH_CPU"] = "1"
        CLOCK = time.process_time
    print(
        f"numpy {np.__version__}, torch {torch.__version__ if torch else 'not installed'}, "
        f"micrograd {'installed' if micrograd_engine else 'not installed'}, "
        f"threads: torch {torch.get_num_threads() if torch else '-'}, "
        f"best of {args.rounds} rounds, {'CPU' if args.cpu_time else 'wall-clock'} time"
    )
    print(format_rows(run(args.quick, args.same_process, args.rounds, args.only)))


if __name__ == "__main__":
    main()
