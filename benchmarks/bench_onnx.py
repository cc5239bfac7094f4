"""The MLP's compiled static step in naivegraph beside the same graph in ONNX Runtime.

    python benchmarks/bench_onnx.py            # needs: pip install naivegraph[export]
    python benchmarks/bench_onnx.py --quick

The model of the lessons (2-16-2, tanh, cross-entropy on integer labels, float64),
with its gradients from ``ns.gradients``: one compiled naivegraph function (optimised
graph) and the same forward + backward graph exported with ``ns.to_onnx`` and run by
ONNX Runtime (one thread).  No target: the point is to show what a production engine
does with the very same graph.  Each figure is the median of ``--repeats`` timings of
``--calls`` calls, for batch sizes 32 and 1024 (one exported model serves both: the
batch dimension is ``None``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import naivegraph.static as ns  # noqa: E402


def build():
    rng = np.random.default_rng(0)
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 2))
        y = ns.placeholder("y", shape=(None,), dtype=np.int64)
        w1 = ns.Variable(rng.normal(scale=0.7, size=(2, 16)), name="w1")
        b1 = ns.Variable(np.zeros(16), name="b1")
        w2 = ns.Variable(rng.normal(scale=0.25, size=(16, 2)), name="w2")
        b2 = ns.Variable(np.zeros(2), name="b2")
        loss = ns.cross_entropy(ns.tanh(x @ w1 + b1) @ w2 + b2, y)
        grads = ns.gradients(loss, [w1, b1, w2, b2])
    return g, [x, y], [loss, *grads]


def seconds_per_call(call, calls: int, repeats: int) -> float:
    call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def main() -> None:
    import onnxruntime as ort

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    calls, repeats = (50, 5) if args.quick else (300, 15)
    g, inputs, outputs = build()
    compiled = g.compile(inputs, outputs, optimize=True)
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    model = ns.to_onnx(g, inputs, outputs)
    session = ort.InferenceSession(model.SerializeToString(), options)
    print("forward + backward of the lessons' MLP (2-16-2), float64, microseconds per call")
    for batch in (32, 1024):
        rng = np.random.default_rng(batch)
        x, y = rng.normal(size=(batch, 2)), rng.integers(0, 2, batch)
        feeds = {"x": x, "y": y}
        mine = compiled(x, y)
        theirs = session.run(None, feeds)
        worst = max(float(np.max(np.abs(a - b))) for a, b in zip(mine, theirs))
        ng_time = seconds_per_call(lambda x=x, y=y: compiled(x, y), calls, repeats)
        ort_time = seconds_per_call(lambda f=feeds: session.run(None, f), calls, repeats)
        print(
            f"  batch {batch:5d}: naivegraph {ng_time * 1e6:8.1f}   onnxruntime "
            f"{ort_time * 1e6:8.1f}   ratio {ng_time / ort_time:5.2f}   "
            f"largest difference {worst:.1e}"
        )


if __name__ == "__main__":
    main()
