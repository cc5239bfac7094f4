"""The scalar workloads of ``bench_dynamic.py`` with each default dtype, in one process.

    python benchmarks/bench_default_dtype.py            # --rounds N (default 3)

Runs (a) the reference example and (b) the 1,000-op chain with the default dtype set to
float64, then float32 (``ng.set_default_dtype``), in turns, ``--rounds`` times; each
figure is the best of 7 ``timeit`` repeats.  Prints the times and the float32 / float64
ratio of each round: how much the lab's float32 default costs the programs whose
tensors are all 0-d.  The naivegraph on ``sys.path`` is measured (``PYTHONPATH=TREE`` to
measure another checkout).
"""

from __future__ import annotations

import argparse
import timeit

import bench_dynamic

import naivegraph as ng


def best(fn, number: int, repeat: int = 7) -> float:
    """Seconds per call: the best of ``repeat`` timings of ``number`` calls."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def measure(dtype) -> tuple[float, float]:
    """(a) in us and (b) in ms with ``dtype`` as the default."""
    ng.set_default_dtype(dtype)
    assert ng.tensor(0.5).dtype == dtype
    reference = best(lambda: bench_dynamic.reference(ng), 200)
    chain = best(lambda: bench_dynamic.chain(ng), 10)
    return reference * 1e6, chain * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    before = ng.get_default_dtype()
    print(f"naivegraph from {ng.__file__}")
    print("round | (a) f64 us | (a) f32 us | (a) f32/f64 | (b) f64 ms | (b) f32 ms | (b) f32/f64")
    for i in range(args.rounds):
        a64, b64 = measure(ng.float64)
        a32, b32 = measure(ng.float32)
        print(
            f"{i + 1} | {a64:.1f} | {a32:.1f} | {a32 / a64:.3f} | {b64:.2f} | {b32:.2f} | "
            f"{b32 / b64:.3f}"
        )
    ng.set_default_dtype(before)


if __name__ == "__main__":
    main()
