"""The small data sets of the lessons (two classes in the plane).

Points are float32, the default dtype of tensors and placeholders (as torch's data
sets hand out float32), labels int64 as cross-entropy wants them.

>>> from naivegraph.lessons.datasets import two_moons
>>> X, y = two_moons(10)
>>> X.shape, X.dtype, y.tolist()
((10, 2), dtype('float32'), [0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
"""

from __future__ import annotations

import numpy as np

def two_moons(n: int = 200, noise: float = 0.15, seed: int = 0):
    """Two interleaving half circles: float32 ``X`` of shape (n, 2), labels ``y`` in {0, 1}."""
    rng = np.random.default_rng(seed)
    half = n // 2
    t = rng.uniform(0, np.pi, n)
    X = np.empty((n, 2))
    X[:half] = np.column_stack([np.cos(t[:half]), np.sin(t[:half])])
    X[half:] = np.column_stack([1 - np.cos(t[half:]), 0.5 - np.sin(t[half:])])
    X += rng.normal(scale=noise, size=X.shape)
    y = np.r_[np.zeros(half, dtype=np.int64), np.ones(n - half, dtype=np.int64)]
    return X.astype(np.float32), y


def spirals(n: int = 200, turns: float = 1.5, noise: float = 0.1, seed: int = 0):
    """Two intertwined spirals: float32 ``X`` of shape (n, 2), labels ``y`` in {0, 1}."""
    rng = np.random.default_rng(seed)
    half = n // 2
    r = np.linspace(0.2, 1.0, half)
    angle = r * turns * 2 * np.pi
    a = np.column_stack([r * np.cos(angle), r * np.sin(angle)])
    X = np.vstack([a, -a]) + rng.normal(scale=noise * 0.3, size=(2 * half, 2))
    y = np.r_[np.zeros(half, dtype=np.int64), np.ones(half, dtype=np.int64)]
    return X.astype(np.float32), y
