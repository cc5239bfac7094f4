"""Time against depth: forward + backward of an N-op chain in dynamic and static mode.

    python benchmarks/bench_scale.py [--max-depth N]

Each depth (1e3, 1e4, ... up to --max-depth) builds a chain of negations, runs it
forward and backward, and prints seconds and microseconds per op.  The last column
compares time/depth with the smallest size measured: ~1x at every size means linear;
a ratio growing with depth means worse than linear.  The last rows time drawing the
DOT source of a dynamic chain (``ng.render``, nothing collapsed).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import naivegraph as ng
import naivegraph.static as ns


def dynamic(n: int) -> tuple[float, float]:
    start = time.perf_counter()
    x = ng.tensor(2.0, requires_grad=True)
    y = x
    for _ in range(n):
        y = -y
    built = time.perf_counter()
    y.backward()
    return built - start, time.perf_counter() - built


def static(n: int, with_backward: bool) -> tuple[float, float, float | None]:
    start = time.perf_counter()
    g = ns.Graph()
    with g:
        w = ns.Variable(2.0, name="w")
        y = w
        for _ in range(n):
            y = -y
    built = time.perf_counter()
    g.forward(fetches=[y])
    ran = time.perf_counter()
    backward = None
    if with_backward:
        g.backward(y)
        backward = time.perf_counter() - ran
    return built - start, ran - built, backward


def draw(n: int) -> float:
    """Seconds to produce the DOT source of an n-op dynamic chain's forward view."""
    from naivegraph.render import render

    x = ng.tensor(2.0, requires_grad=True)
    y = x
    for _ in range(n):
        y = -y
    start = time.perf_counter()
    _ = render(y, params={"x": x, "y": y}, max_nodes=None).source  # the DOT text is the work
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-depth", type=float, default=1e6)
    parser.add_argument(
        "--render-max-depth", type=float, default=1e5, help="largest chain drawn as DOT"
    )
    args = parser.parse_args()
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
