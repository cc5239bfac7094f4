"""The shared figures: each function returns a Figure, saves when given a path, and
make_all_figures writes the same bytes twice."""

from __future__ import annotations

import hashlib

import numpy as np
from matplotlib.figure import Figure

from naivegraph.lessons import datasets, plots


def test_each_figure_function_returns_and_saves(tmp_path):
    figs = {
        "contour": plots.gradient_descent_contour(lambda x, y: x ** 2 + y ** 2,
                                                  [(1, 1), (0.5, 0.5), (0, 0)]),
        "loss": plots.loss_curves({"dynamic": [1, 0.5], "static": [1, 0.4]}),
        "jacobian": plots.jacobian_heatmap(np.eye(2)),
        "timing": plots.timing_bars({"dynamic": [1e-3, 2e-3], "static": [5e-4]}),
        "both": plots.static_vs_dynamic({"dynamic": [1e-3], "static": [5e-4]},
                                        {"dynamic": 2048, "static": 1024}),
        "boundary": plots.decision_boundary(lambda p: (p[:, 0] > 0).astype(int),
                                            *datasets.two_moons(40)),
    }
    for name, fig in figs.items():
        assert isinstance(fig, Figure), name
        assert fig._repr_png_().startswith(b"\x89PNG")
    path = tmp_path / "sub" / "loss.png"
    plots.loss_curves({"a": [1, 2]}, path=path)
    assert path.read_bytes().startswith(b"\x89PNG")


def test_make_all_figures_is_deterministic(tmp_path):
    first = plots.make_all_figures(tmp_path / "a")
    second = plots.make_all_figures(tmp_path / "b")
    assert [p.name for p in first] == [p.name for p in second] and len(first) >= 5
    for a, b in zip(first, second):
        assert hashlib.sha256(a.read_bytes()).digest() == hashlib.sha256(b.read_bytes()).digest()
