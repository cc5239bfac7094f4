"""CPU time of each part of ``bench_dynamic.py``'s MLP step (workload (c)), per step.

Each part is timed with ``time.process_time_ns`` over 10 blocks of 100 steps; the
switches named on the command line (``module:attribute``) are on in one block and off
in the next, and numpy by hand (``mlp_numpy_step``) runs after each pair:

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_mlp_parts.py \\
        naivegraph.fast.fastlinear:enabled
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads its BLAS
sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).parent)]

from bench_dynamic import mlp_data, mlp_numpy_step  # noqa: E402

import naivegraph as ng  # noqa: E402

PARTS = ["x @ w1", "+ b1", "relu", "@ w2", "+ b2", "cross_entropy", "zero_grad"]
PARTS += ["backward", "step"]
BLOCKS, STEPS = 10, 100


def switch(names: list[str], value: bool) -> None:
    for name in names:
        module, attribute = name.split(":")
        setattr(importlib.import_module(module), attribute, value)


def main() -> None:
    switches = sys.argv[1:]
    x, y, params = mlp_data()
    xs, ys = ng.from_numpy(x), ng.from_numpy(y)
    ws = [ng.from_numpy(p.copy()).requires_grad_() for p in params]
    opt = ng.optim.SGD(ws, lr=0.01)
    clock = time.process_time_ns

    def step(totals: list[int]) -> None:
        w1, b1, w2, b2 = ws
        t0 = clock()
        a = xs @ w1
        t1 = clock()
        h = a + b1
        t2 = clock()
        r = h.relu()
        t3 = clock()
        m = r @ w2
        t4 = clock()
        logits = m + b2
        t5 = clock()
        loss = ng.nn.functional.cross_entropy(logits, ys)
        t6 = clock()
        opt.zero_grad()
        t7 = clock()
        loss.backward()
        t8 = clock()
        opt.step()
        t9 = clock()
        times = (t0, t1, t2, t3, t4, t5, t6, t7, t8, t9)
        for i in range(len(PARTS)):
            totals[i] += times[i + 1] - times[i]

    totals = {True: [0] * len(PARTS), False: [0] * len(PARTS)}
    by_hand = 0
    for _ in range(BLOCKS):
        for on in (True, False):
            switch(switches, on)
            for _ in range(STEPS):
                step(totals[on])
        for _ in range(STEPS):
            start = clock()
            mlp_numpy_step(x, y, params)
            by_hand += clock() - start
    steps = BLOCKS * STEPS
    print(f"us per step, {steps} steps each; switches: {' '.join(switches) or 'none'}")
    print(f"{'part':14s} {'on':>9s} {'off':>9s}")
    for i, part in enumerate(PARTS):
        print(
            f"{part:14s} {totals[True][i] / steps / 1e3:9.1f} {totals[False][i] / steps / 1e3:9.1f}"
        )
    on, off = (sum(totals[v]) / steps / 1e3 for v in (True, False))
    print(f"{'total':14s} {on:9.1f} {off:9.1f}")
    print(f"numpy by hand {by_hand / steps / 1e3:.1f}; on / numpy {on * 1e3 * steps / by_hand:.3f}")


if __name__ == "__main__":
    main()
