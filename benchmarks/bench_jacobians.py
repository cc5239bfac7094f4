"""jacfwd against jacrev: the cost crossover of forward and reverse mode.

    python benchmarks/bench_jacobians.py [--quick]

f: R^n -> R^m, f(x) = tanh(W x) with a fixed W of shape (m, n).  jacrev runs one VJP per
output (m passes), jacfwd one JVP per input (n passes), so jacfwd wins when n << m and
jacrev when n >> m.  A naivegraph JVP is one pass in forward mode
(``ng.autograd.forward_ad``), so the crossover sits near n = m.  torch.func is timed
beside it where installed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import naivegraph as ng  # noqa: E402

SHAPES = [(2, 64), (8, 64), (32, 32), (64, 8), (64, 2)]  # (n inputs, m outputs)


def seconds(call, repeats: int) -> float:
    call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    repeats = 3 if parser.parse_args().quick else 9
    try:
        import torch
    except ImportError:
        torch = None
    print("ms per Jacobian of f(x) = tanh(W x), f: R^n -> R^m (median)")
    header = f"  {'n':>3} {'m':>3}   {'ng jacfwd':>9} {'ng jacrev':>9}"
    print(header + (f"   {'torch fwd':>9} {'torch rev':>9}" if torch else ""))
    for n, m in SHAPES:
        rng = np.random.default_rng(n * 100 + m)
        w, x = rng.normal(size=(m, n)), rng.normal(size=n)
        row = _naivegraph_times(w, x, repeats)
        if torch is not None:
            row += _torch_times(torch, w, x, repeats)
        print(f"  {n:>3} {m:>3}   " + "   ".join(f"{t * 1e3:9.2f}" for t in row))


def _naivegraph_times(w: np.ndarray, x: np.ndarray, repeats: int) -> list[float]:
    W, X = ng.tensor(w), ng.tensor(x)

    def f(v):
        return ng.tanh(W @ v)

    return [
        seconds(lambda: ng.func.jacfwd(f)(X), repeats),
        seconds(lambda: ng.func.jacrev(f)(X), repeats),
    ]


def _torch_times(torch, w: np.ndarray, x: np.ndarray, repeats: int) -> list[float]:
    W, X = torch.tensor(w), torch.tensor(x)

    def f(v):
        return torch.tanh(W @ v)

    return [
        seconds(lambda: torch.func.jacfwd(f)(X), repeats),
        seconds(lambda: torch.func.jacrev(f)(X), repeats),
    ]


if __name__ == "__main__":
    main()
