"""Instructions per call of the static compiled replay of the reference example, and of
the same written by hand in numpy: a before/after measure that wall-clock time on a
shared machine is too noisy to give.

    python benchmarks/instructions_static.py TREE [TREE ...]      # each tree: a checkout

For each tree, builds the compiled function as ``bench_static.py`` does (section 1),
calls it 20 times to warm up, then N = 2,000 times under ``valgrind --tool=callgrind``
in a fresh process (the tree first on ``sys.path``, PYTHONHASHSEED=0, one BLAS
thread), and prints that run's instructions minus the same script's with N = 0,
divided by N; then the same for ``bench_static.numpy_reference``.
``NAIVEGRAPH_FAST`` is passed through.
"""

from __future__ import annotations

import os
import sys

from instructions import count_instructions  # the callgrind run, shared

CALLS = 2000

WORKLOAD = """
import sys
sys.path.insert(0, {tree!r})
sys.path.insert(1, {benchmarks!r})
import bench_static as b
run = b.compiled_reference() if {which!r} == "static" else b.numpy_reference
for _ in range(20):
    run()
for _ in range({calls}):
    run()
"""


def instructions(tree: str, which: str, calls: int) -> int:
    """Instructions of one fresh process that runs ``which`` ``calls`` times."""
    benchmarks = os.path.join(os.path.abspath(tree), "benchmarks")
    return count_instructions(
        WORKLOAD.format(tree=os.path.abspath(tree), benchmarks=benchmarks, which=which, calls=calls)
    )


def per_call(tree: str, which: str) -> float:
    return (instructions(tree, which, CALLS) - instructions(tree, which, 0)) / CALLS


def main(trees: list[str]) -> None:
    print("instructions per call (thousands): reference example, loss + 3 gradients")
    for tree in trees:
        static, numpy = per_call(tree, "static"), per_call(tree, "numpy")
        print(
            f"  {tree}: static compiled {static / 1e3:,.1f}  numpy by hand {numpy / 1e3:,.1f}"
            f"  ratio {static / numpy:.2f}"
        )


if __name__ == "__main__":
    main(sys.argv[1:] or ["."])
