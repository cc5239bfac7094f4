"""CPU time of the backward pass alone of ``bench_dynamic.py``'s (b), per op.

    python benchmarks/bench_chain_backward.py            # best of 60 chains
    python benchmarks/bench_chain_backward.py --runs 200

Builds (b)'s 1,000-op chain (``y = y * 0.999; y = y + 0.001``, 500 times) and times
``y.backward()`` only, with ``time.process_time_ns`` (CPU time: waiting for a core on a
loaded machine is not counted), the best of ``--runs`` fresh chains.  The forward is
left out: a change to the order or the pass shows here without the forward's noise.
"""

from __future__ import annotations

import argparse
import time

import naivegraph as ng

CHAIN = 1000


def chain_for_backward():
    """The leaf and the output of (b)'s chain, built but not run backward."""
    w = ng.tensor(0.5, requires_grad=True)
    y = w
    for _ in range(CHAIN // 2):
        y = y * 0.999
        y = y + 0.001
    return w, y


def best_backward_ns(runs: int) -> int:
    best = None
    for _ in range(runs):
        _, y = chain_for_backward()
        start = time.process_time_ns()
        y.backward()
        took = time.process_time_ns() - start
        best = took if best is None else min(best, took)
    assert best is not None
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    args = parser.parse_args()
    w, y = chain_for_backward()
    y.backward()
    assert w.grad is not None and 0.6 < w.grad.item() < 0.61  # 0.999 ** 500
    print(f"(b) backward: {best_backward_ns(args.runs) / CHAIN / 1000:.3f} us an op of CPU")


if __name__ == "__main__":
    main()
