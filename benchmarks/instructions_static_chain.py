"""Instructions per node of building, running and differentiating a static negation
chain (the million-op chain of ``bench_scale.py``, shorter), for before/after
comparisons that wall clock on a shared machine is too noisy to make.

    python benchmarks/instructions_static_chain.py TREE [N]

Each phase is one fresh process under callgrind (``instructions.count_instructions``):
build only, build + forward, build + forward + backward, and an empty graph; the
differences divided by N (default 20,000) are each phase's cost per node, cyclic
garbage collection included.  ``NAIVEGRAPH_FAST`` is passed through.
"""

from __future__ import annotations

import os
import sys

from instructions import count_instructions

WORKLOAD = """
import sys
sys.path.insert(0, {tree!r})
import naivegraph.static as ns

def chain(n):
    g = ns.Graph()
    with g:
        y = ns.Variable(2.0, name="w")
        for _ in range(n):
            y = -y
    return g, y

g, y = chain(50)
g.forward(fetches=[y])
g.backward(y)
phase = {phase!r}
g, y = chain(0 if phase == "none" else {n})
if phase in ("forward", "backward"):
    g.forward(fetches=[y])
if phase == "backward":
    g.backward(y)
"""


def main(tree: str, n: int) -> None:
    tree = os.path.abspath(tree)
    counts = {
        phase: count_instructions(WORKLOAD.format(tree=tree, phase=phase, n=n))
        for phase in ("none", "build", "forward", "backward")
    }
    build = counts["build"] - counts["none"]
    forward = counts["forward"] - counts["build"]
    backward = counts["backward"] - counts["forward"]
    print(
        f"{tree} n={n:,}: instructions per node: build {build / n:,.0f}, "
        f"forward {forward / n:,.0f}, backward {backward / n:,.0f}"
    )


if __name__ == "__main__":
    main(
        sys.argv[1] if len(sys.argv) > 1 else ".",
        int(float(sys.argv[2])) if len(sys.argv) > 2 else 20_000,
    )
