"""How far a float32 run drifts from the float64 run of the same program, in naivegraph
and in torch: jcjohnson's ``two_layer_net_autograd.py`` ("Learning PyTorch with
Examples"), N, D_in, H, D_out = 64, 1000, 100, 10, learning rate 1e-6.

Both libraries start from the same numbers (drawn by numpy in float64, rounded to float32
for the float32 runs), so each library's float64 run is its own reference and the drift
is what float32 rounding adds.  Printed per data set (seed), for each library: the RMS
over the second half of the run of the loss's relative distance (the measure the test
bounds), that distance at the last step alone, and the relative distance of the final
weights; then naivegraph's distance over torch's.

    python benchmarks/float32_drift.py            # --steps, --seeds
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

N, D_IN, H, D_OUT = 64, 1000, 100, 10
LEARNING_RATE = 1e-6


def start(seed: int = 0) -> list[np.ndarray]:
    """x, y, w1, w2 in float64 (torch.randn's shapes)."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in ((N, D_IN), (N, D_OUT), (D_IN, H), (H, D_OUT))]


def two_layer_net(lib, arrays: list[np.ndarray], dtype, steps: int):
    """The tutorial's loop in ``lib`` (torch or naivegraph): losses and final weights."""
    x, y, w1, w2 = (lib.tensor(a, dtype=dtype) for a in arrays)
    w1.requires_grad_(True)
    w2.requires_grad_(True)
    losses = []
    for _ in range(steps):
        y_pred = x.mm(w1).clamp(min=0).mm(w2)
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with lib.no_grad():
            w1 -= LEARNING_RATE * w1.grad
            w2 -= LEARNING_RATE * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()
    return np.array(losses), [w.detach().numpy().astype(np.float64) for w in (w1, w2)]


def relative(a, b) -> float:
    return float(np.linalg.norm(np.ravel(a) - np.ravel(b)) / np.linalg.norm(np.ravel(b)))


def drift(lib, steps: int = 100, seed: int = 0) -> dict[str, float]:
    """Relative distances of the float32 run from the float64 run of ``lib``."""
    arrays = start(seed)
    losses64, weights64 = two_layer_net(lib, arrays, lib.float64, steps)
    losses32, weights32 = two_layer_net(lib, arrays, lib.float32, steps)
    loss = np.abs(losses32 - losses64) / np.abs(losses64)
    return {
        "loss, RMS": float(np.sqrt(np.mean(loss[steps // 2 :] ** 2))),
        f"loss at {steps - 1}": float(loss[-1]),
        "weights": relative(
            np.concatenate([w.ravel() for w in weights32]),
            np.concatenate([w.ravel() for w in weights64]),
        ),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=4, help="data sets drawn (0, 1, ...)")
    args = parser.parse_args(argv)
    import torch

    import naivegraph as ng

    for seed in range(args.seeds):
        ours, theirs = drift(ng, args.steps, seed), drift(torch, args.steps, seed)
        print(f"seed {seed}: {'':8s} {'naivegraph':>11s} {'torch':>11s} {'ng / torch':>11s}")
        for key in ours:
            ratio = ours[key] / theirs[key] if theirs[key] else float("inf")
            print(f"  {key:14s} {ours[key]:11.3e} {theirs[key]:11.3e} {ratio:11.2f}")


if __name__ == "__main__":
    main()
