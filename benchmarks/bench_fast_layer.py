"""What each trick of the fast layer (``naivegraph/fast/``) buys, measured.

    python benchmarks/bench_fast_layer.py                # all tricks on, all off, each off
    python benchmarks/bench_fast_layer.py --quick        # fewer repeats
    python benchmarks/bench_fast_layer.py --tree OLD     # also time another checkout

Runs the naivegraph workloads of ``bench_dynamic.py`` ((a) reference example, (b)
1,000-op scalar chain, (c) MLP step) and (d) a 100,000-op chain, each in a fresh
process, with the fast layer on, off (``NAIVEGRAPH_FAST=0``), and with one trick at a
time replaced by its plain fallback.  ``--tree`` times the same workloads on another
source tree (e.g. ``git worktree add /tmp/old <commit>``) to compare before and after.
Each figure is the best of ``--rounds`` process medians; the configurations take turns.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# Each trick and its plain fallback: what the fast layer does when it is off.
FALLBACKS = {
    "paused_gc": ("paused_gc", lambda: contextlib.nullcontext()),
    "is_unshared": ("is_unshared", lambda value: False),
    "quiet_numpy": ("quiet_numpy", False),  # np.errstate around every forward and VJP
    "number_operand": ("promotes_to_itself", lambda x, y: False),  # the full promotion rule
}

WORKLOADS = {
    "(a) reference fwd+bwd": ("reference", 200),
    "(b) 1,000-op chain fwd+bwd": ("chain", 3),
    "(c) MLP step": ("mlp", 5),
    "(d) 100,000-op chain fwd+bwd": ("long_chain", 1),
}


def long_chain(ng) -> object:
    w = ng.tensor(0.5, requires_grad=True)
    y = w
    for _ in range(50_000):
        y = y * 0.999
        y = y + 0.001
    y.backward()
    return w.grad


def measure(key: str, off: tuple, repeats: int, inner: int) -> float:
    """Seconds per call of workload ``key`` with the tricks in ``off`` replaced."""
    import bench_dynamic as b

    import naivegraph as ng

    if off:
        from naivegraph.fast import tricks

        for trick in off:
            name, plain = FALLBACKS[trick]
            setattr(tricks, name, plain)
    if key == "mlp":
        x, y, params = b.mlp_data()
        fn = b.make_mlp(ng, x, y, params)
    elif key == "long_chain":
        fn = functools.partial(long_chain, ng)
    else:
        fn = functools.partial({"reference": b.reference, "chain": b.chain}[key], ng)
    return b.median_time(fn, repeats if key != "long_chain" else 3, inner)


def measure_in_subprocess(
    key: str, off: tuple, repeats: int, inner: int, tree: str, env_off: bool = False
) -> float:
    code = (
        f"import sys; sys.path[:0] = [{tree!r}, {HERE!r}]; import bench_fast_layer as f; "
        f"print(repr(f.measure({key!r}, {off!r}, {repeats}, {inner})))"
    )
    env = dict(os.environ, NAIVEGRAPH_BENCH_ONLY="naivegraph")
    if env_off:
        env["NAIVEGRAPH_FAST"] = "0"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, cwd=tree
    )
    return float(out.stdout.strip().splitlines()[-1])


def configurations(tree: str | None) -> dict:
    """name -> (tricks off, NAIVEGRAPH_FAST=0?, source tree)."""
    configs = {"fast layer on": ((), False, ROOT), "fast layer off": ((), True, ROOT)}
    for trick in FALLBACKS:
        configs[f"without {trick}"] = ((trick,), False, ROOT)
    if tree:
        configs[f"tree {os.path.basename(os.path.abspath(tree))}"] = ((), False, tree)
    return configs


def run(quick: bool, rounds: int, tree: str | None) -> dict:
    reps = 5 if quick else 15
    configs = configurations(tree)
    table: dict = {}
    for workload, (key, inner) in WORKLOADS.items():
        samples: dict[str, list] = {name: [] for name in configs}
        for _ in range(rounds):
            for name, (off, env_off, source) in configs.items():
                samples[name].append(measure_in_subprocess(key, off, reps, inner, source, env_off))
        table[workload] = {name: min(found) for name, found in samples.items()}
    return table


def format_table(table: dict) -> str:
    lines = []
    for workload, times in table.items():
        base = times["fast layer on"]
        lines.append(workload)
        for name, seconds in times.items():
            lines.append(f"  {name:28} {seconds * 1e3:10.3f} ms   {seconds / base:6.3f} x on")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--rounds", type=int, default=3, help="processes per configuration")
    parser.add_argument("--tree", help="another source tree to time the same way")
    args = parser.parse_args()
    print(format_table(run(args.quick, args.rounds, args.tree)))


if __name__ == "__main__":
    main()
