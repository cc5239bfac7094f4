"""Time against depth: forward + backward of an N-op chain in dynamic and static mode.

    python benchmarks/bench_scale.py [--max-depth N]

Each depth (1e3, 1e4, ... up to --max-depth) builds a chain of negations, runs it
forward and backward, and prints seconds and microseconds per op.  The last column
compares time/depth with the smallest size measured: ~1x at every size means linear;
a ratio growing with depth means worse than linear.  The last rows time drawing the
DOT source of a dynamic chain (``ng.render``, nothing collapsed).

    python benchmarks/bench_scale.py --against-torch 1e6

compares one dynamic chain with PyTorch eager instead: forward and backward seconds and
the peak memory the graph adds, each library in a fresh process, in turns.  With
``--with-static`` the static chain (``g.backward`` after ``g.forward``) is a third
contender: its forward column is building the graph plus running it.  N is the size
flag: a million ops takes about a minute per round on a 2-core machine.

    python benchmarks/bench_scale.py --against-torch 1e6 --with-static --op muladd

runs that comparison on ``bench_dynamic.py``'s (b) chain instead of negations
(``y = y * 0.999; y = y + 0.001``, N ops in all): the fast layer gives a negation a
leaner node than other ops, so the two chains can differ.  ``--cpu-time`` times each
process's CPU time (``time.process_time``) instead of the wall clock, which waiting for a
core on a loaded machine does not count.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import naivegraph as ng
import naivegraph.static as ns

OPS = ("neg", "muladd")
clock = time.perf_counter  # --cpu-time: time.process_time


def grow(y, n: int, op: str):
    """``y`` after an n-op chain: n negations, or n / 2 of ``y * 0.999`` then ``+ 0.001``."""
    if op == "neg":
        for _ in range(n):
            y = -y
    else:
        for _ in range(n // 2):
            y = y * 0.999
            y = y + 0.001
    return y


def dynamic(n: int) -> tuple[float, float]:
    start = clock()
    x = ng.tensor(2.0, requires_grad=True)
    y = x
    for _ in range(n):
        y = -y
    built = clock()
    y.backward()
    return built - start, clock() - built


def static(n: int, with_backward: bool, op: str = "neg") -> tuple[float, float, float | None]:
    start = clock()
    g = ns.Graph()
    with g:
        w = ns.Variable(2.0, name="w")
        y = grow(w, n, op)
    built = clock()
    g.forward(fetches=[y])
    ran = clock()
    backward = None
    if with_backward:
        g.backward(y)
        backward = clock() - ran
    return built - start, ran - built, backward


def draw(n: int) -> float:
    """Seconds to produce the DOT source of an n-op dynamic chain's forward view."""
    from naivegraph.render import render

    x = ng.tensor(2.0, requires_grad=True)
    y = x
    for _ in range(n):
        y = -y
    start = clock()
    _ = render(y, params={"x": x, "y": y}, max_nodes=None).source  # the DOT text is the work
    return clock() - start


# -- against PyTorch: one deep chain, time and memory ----------------------------------------
def _resident_bytes() -> int:
    """This process's resident memory now (Linux)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def chain_cost(
    library: str, n: int, op: str = "neg", cpu_time: bool = False
) -> tuple[float, float, int]:
    """(forward s, backward s, peak bytes the graph added) of an n-op chain (``grow``).

    Peak memory is the process's high-water mark (``ru_maxrss``) less its resident memory
    before the chain: it counts what PyTorch's C++ allocates too, which tracemalloc would
    not see.  Run in a fresh process per measurement, or the high-water mark is stale.
    """
    import resource

    global clock
    clock = time.process_time if cpu_time else time.perf_counter
    lib = ng
    if library == "torch":
        import torch as lib  # type: ignore[no-redef]
    if library == "static":
        return _static_chain_cost(n, op)
    before = _resident_bytes()
    start = clock()
    x = lib.tensor(2.0, requires_grad=True)
    y = grow(x, n, op)
    built = clock()
    y.backward()
    done = clock()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    return built - start, done - built, peak


def _static_chain_cost(n: int, op: str) -> tuple[float, float, int]:
    """``chain_cost`` of the static chain: (build + forward s, backward s, peak bytes)."""
    import resource

    before = _resident_bytes()
    build, forward, backward = static(n, with_backward=True, op=op)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    return build + forward, backward or 0.0, peak


def against_torch(
    n: int, rounds: int, with_static: bool = False, op: str = "neg", cpu_time: bool = False
) -> None:
    """Each library ``rounds`` times in turn, each time in a fresh process."""
    seconds = "CPU seconds" if cpu_time else "seconds"
    print(
        f"{n:,}-op {op} chain, forward + backward, fresh process each ({rounds} rounds, {seconds}):"
    )
    print(f"{'library':<12}{'forward s':>11}{'backward s':>12}{'total s':>10}{'peak MB':>10}")
    totals: dict[str, list[tuple[float, int]]] = {"naivegraph": [], "torch": []}
    if with_static:
        totals["static"] = []
    for _ in range(rounds):
        for library in totals:
            code = (
                f"import sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r});"
                "import bench_scale as b; "
                f"print(repr(b.chain_cost({library!r}, {n}, {op!r}, {cpu_time!r})))"
            )
            out = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            )
            forward, backward, peak = eval(out.stdout.strip().splitlines()[-1])
            totals[library].append((forward + backward, peak))
            print(
                f"{library:<12}{forward:>11.3f}{backward:>12.3f}{forward + backward:>10.3f}"
                f"{peak / 1e6:>10.1f}",
                flush=True,
            )
    ng_time = statistics.median(t for t, _ in totals["naivegraph"])
    torch_time = statistics.median(t for t, _ in totals["torch"])
    ng_peak = statistics.median(p for _, p in totals["naivegraph"])
    torch_peak = statistics.median(p for _, p in totals["torch"])
    print(
        f"medians: naivegraph / torch time {ng_time / torch_time:.2f}, "
        f"memory {ng_peak / torch_peak:.2f}"
    )
    if with_static:
        static_time = statistics.median(t for t, _ in totals["static"])
        static_peak = statistics.median(p for _, p in totals["static"])
        print(
            f"medians: static / torch time {static_time / torch_time:.2f}, "
            f"memory {static_peak / torch_peak:.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-depth", type=float, default=1e6)
    parser.add_argument(
        "--render-max-depth", type=float, default=1e5, help="largest chain drawn as DOT"
    )
    parser.add_argument(
        "--against-torch",
        type=float,
        default=None,
        metavar="N",
        help="only compare an N-op dynamic chain with PyTorch (time and peak memory)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds of --against-torch")
    parser.add_argument(
        "--with-static", action="store_true", help="--against-torch: the static chain too"
    )
    parser.add_argument(
        "--op",
        choices=OPS,
        default="neg",
        help="--against-torch: the chain's op, negation or (b)'s multiply-add (default neg)",
    )
    parser.add_argument(
        "--cpu-time", action="store_true", help="--against-torch: CPU time, not the wall clock"
    )
    args = parser.parse_args()
    if args.against_torch:
        against_torch(
            int(args.against_torch), args.rounds, args.with_static, args.op, args.cpu_time
        )
        return
    depths = [10**k for k in range(3, 8) if 10**k <= args.max_depth]

    print(
        f"{'mode':<16}{'depth':>9}{'build/fwd s':>13}{'backward s':>12}{'us/op':>9}"
        f"{'vs smallest':>13}"
    )
    rows: dict[str, list[tuple[int, float]]] = {}

    def report(mode, n, first, second):
        total = first + (second or 0.0)
        per_op = total / n
        base = rows.setdefault(mode, [])
        ratio = per_op / base[0][1] if base else 1.0
        base.append((n, per_op))
        back = "-" if second is None else f"{second:.3f}"
        print(
            f"{mode:<16}{n:>9}{first:>13.3f}{back:>12}{per_op * 1e6:>9.2f}{ratio:>12.2f}x",
            flush=True,
        )

    for n in depths:
        report("dynamic", n, *dynamic(n))
    for n in depths:
        build, forward, backward = static(n, with_backward=False)
        report("static fwd", n, build + forward, None)
    for n in depths:
        build, forward, backward = static(n, with_backward=True)
        report("static fwd+bwd", n, build + forward, backward)
    for n in depths:
        if n <= args.render_max_depth:
            report("render DOT", n, draw(n), None)

    print()
    for mode, points in rows.items():
        ratios = [p / points[0][1] for _, p in points]
        verdict = "linear" if max(ratios) < 2.0 else "NOT linear"
        print(
            f"{mode:<16} time/depth from {points[0][0]} to {points[-1][0]}: x{ratios[-1]:.2f} "
            f"-> {verdict}"
        )


if __name__ == "__main__":
    main()
