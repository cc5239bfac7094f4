"""Instruction counts of the dynamic workloads, for before/after comparisons that
wall-clock time on a shared machine is too noisy to make.

    python benchmarks/instructions.py TREE [TREE ...]      # each tree: a checkout
    python benchmarks/instructions.py --default-dtype float64 TREE ...   # not float32

For each tree, runs (a) 1,000 x the reference example and (b) 15 x the 1,000-op chain of
``bench_dynamic.py`` under ``valgrind --tool=callgrind`` in a fresh process (the tree
first on ``sys.path``, PYTHONHASHSEED=0, one BLAS thread, one warm-up of each
workload), and prints that run's instructions minus the same script's with no workload
(imports and warm-up).  ``NAIVEGRAPH_FAST`` is passed through.

    python benchmarks/instructions.py --peers TREE

also counts the same workloads in micrograd ((a) only, element by element as
``bench_dynamic.py`` runs it) and PyTorch eager, and prints naivegraph's count over
theirs: a ratio that the machine's load does not move, unlike wall-clock time (it
weighs every instruction alike, so it is a proxy for time, not time).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

WORKLOAD = """
import sys
sys.path.insert(0, {tree!r})
sys.path.insert(1, {benchmarks!r})
import naivegraph as ng
import bench_dynamic as b
if {dtype!r}:
    ng.set_default_dtype(getattr(ng, {dtype!r}))
b.reference(ng); b.chain(ng)
which = {which!r}
if which == "a":
    for _ in range(1000):
        b.reference(ng)
elif which == "b":
    for _ in range(15):
        b.chain(ng)
"""


PEER_WORKLOAD = """
import sys
sys.path.insert(0, {tree!r})
sys.path.insert(1, {benchmarks!r})
import os
os.environ["NAIVEGRAPH_BENCH_ONLY"] = {library!r}
import bench_dynamic as b
which = {which!r}
if {library!r} == "micrograd":
    run = b.micrograd_reference()
    b.check_micrograd_reference(run)
    if which == "a":
        for _ in range(1000):
            run()
else:
    b.reference(b.torch); b.chain(b.torch)
    if which == "a":
        for _ in range(1000):
            b.reference(b.torch)
    elif which == "b":
        for _ in range(15):
            b.chain(b.torch)
"""


def peer_instructions(tree: str, library: str, which: str) -> int:
    benchmarks = os.path.dirname(os.path.abspath(__file__))
    return count_instructions(
        PEER_WORKLOAD.format(
            tree=os.path.abspath(tree), benchmarks=benchmarks, library=library, which=which
        )
    )


def instructions(tree: str, which: str, dtype: str = "") -> int:
    benchmarks = os.path.dirname(os.path.abspath(__file__))
    return count_instructions(
        WORKLOAD.format(tree=os.path.abspath(tree), benchmarks=benchmarks, which=which, dtype=dtype)
    )


def count_instructions(source: str) -> int:
    """Instructions of a fresh process that runs ``source`` under callgrind
    (PYTHONHASHSEED=0, one BLAS thread)."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as script:
        script.write(source)
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1")
    result = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            script.name,
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    os.unlink(script.name)
    found = re.search(r"Collected : (\d+)", result.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{result.stderr[-2000:]}")
    return int(found.group(1))


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description="instructions of workloads (a) and (b)")
    parser.add_argument("trees", nargs="*", default=["."])
    parser.add_argument("--default-dtype", default="", choices=["float32", "float64"])
    parser.add_argument(
        "--peers", action="store_true", help="also micrograd's (a) and torch's (a) and (b)"
    )
    args = parser.parse_args(argv)
    dtype = args.default_dtype
    print("instructions (millions): (a) 1,000 x reference, (b) 15 x 1,000-op chain")
    for tree in args.trees:
        base = instructions(tree, "0", dtype)
        a, b = (instructions(tree, which, dtype) - base for which in ("a", "b"))
        print(f"  {tree}: (a) {a / 1e6:,.1f}  (b) {b / 1e6:,.1f}", flush=True)
        if args.peers:
            print_peers(tree, a, b)


def print_peers(tree: str, a: int, b: int) -> None:
    """micrograd's and torch's counts of the same workloads, and naivegraph's over theirs."""
    base = peer_instructions(tree, "micrograd", "0")
    micrograd_a = peer_instructions(tree, "micrograd", "a") - base
    print(f"  micrograd: (a) {micrograd_a / 1e6:,.1f}  ng / micrograd {a / micrograd_a:.2f}")
    base = peer_instructions(tree, "torch", "0")
    torch_a, torch_b = (peer_instructions(tree, "torch", which) - base for which in ("a", "b"))
    print(
        f"  torch: (a) {torch_a / 1e6:,.1f}  (b) {torch_b / 1e6:,.1f}  "
        f"ng / torch (a) {a / torch_a:.2f}  (b) {b / torch_b:.2f}",
        flush=True,
    )


if __name__ == "__main__":
    main(sys.argv[1:])
