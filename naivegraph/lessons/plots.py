"""Matplotlib figures shared by the lessons and the ``naivegraph figures`` command.

Every function builds a new :class:`matplotlib.figure.Figure` without touching pyplot's
global state (so it works headless, with the Agg canvas, and nothing piles up in a
notebook), returns it, and saves it when given ``path`` (format from the suffix).

>>> from naivegraph.lessons import plots
>>> fig = plots.loss_curves({"dynamic": [1.0, 0.5, 0.25], "static": [1.0, 0.5, 0.25]})
>>> isinstance(fig, plots.Figure), type(fig).__name__
(True, 'LessonFigure')
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

import naivegraph as ng
import naivegraph.static as ns

from .datasets import spirals
from .training import descent, iteration_costs_in_a_fresh_process, train_capstone

if not os.environ.get("DISPLAY") and not os.environ.get("MPLBACKEND"):
    import matplotlib
    matplotlib.use("Agg")

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure

__all__ = ["gradient_descent_contour", "loss_curves", "jacobian_heatmap", "timing_bars",
           "static_vs_dynamic", "decision_boundary", "memory_timeline", "amortisation",
           "scalar_graph", "make_all_figures"]

MODE_COLOURS = {"dynamic": "#d9480f", "static": "#1864ab", "eager": "#d9480f",
                "compiled": "#1864ab", "optimized": "#2b8a3e"}
_PALETTE = ["#1864ab", "#d9480f", "#2b8a3e", "#862e9c", "#e67700", "#0b7285"]


class LessonFigure(Figure):
    """A Figure that shows itself as a PNG in Jupyter without pyplot."""

    def _repr_png_(self) -> bytes:
        buf = io.BytesIO()
        self.savefig(buf, format="png", dpi=90)
        return buf.getvalue()


def _figure(width: float = 6.4, height: float = 4.4) -> Figure:
    fig = LessonFigure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _finish(fig: Figure, path) -> Figure:
    if path is not None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=110, metadata={"Software": None} if path.suffix == ".png" else None)
    return fig


def _colour(name: str, i: int) -> str:
    return MODE_COLOURS.get(name.lower(), _PALETTE[i % len(_PALETTE)])


def _colours(names: Sequence[str]) -> list[str]:
    """One colour per name, all distinct: a mode's own colour (MODE_COLOURS) where it
    has one not taken yet, else the first colour of the palette no other line uses."""
    taken: list[str] = []
    for name in names:
        own = MODE_COLOURS.get(name.lower())
        taken.append(own if own is not None and own not in taken else "")
    free = [c for c in _PALETTE if c not in taken]
    colours = []
    for i, colour in enumerate(taken):
        if not colour:  # past the palette's six colours, reuse is unavoidable
            colour = free.pop(0) if free else _PALETTE[i % len(_PALETTE)]
        colours.append(colour)
    return colours


def gradient_descent_contour(f: Callable, path_points, xlim: tuple | None = None,
                             ylim: tuple | None = None, levels: int = 25,
                             title: str = "Gradient descent", minimum: Sequence | None = None,
                             path=None) -> Figure:
    """Contours of ``f(X, Y)`` (vectorised over numpy grids) with the descent path on top."""
    pts = np.asarray(path_points, dtype=float).reshape(-1, 2)
    pad_x = max(1.0, np.ptp(pts[:, 0]) * 0.3)
    pad_y = max(1.0, np.ptp(pts[:, 1]) * 0.3)
    xlim = xlim or (pts[:, 0].min() - pad_x, pts[:, 0].max() + pad_x)
    ylim = ylim or (pts[:, 1].min() - pad_y, pts[:, 1].max() + pad_y)
    xs = np.linspace(*xlim, 200)
    ys = np.linspace(*ylim, 200)
    X, Y = np.meshgrid(xs, ys)
    Z = np.asarray(f(X, Y), dtype=float)
    fig = _figure(6.0, 5.0)
    ax = fig.add_subplot()
    lo, hi = np.nanmin(Z), np.nanmax(Z)
    lv = lo + (hi - lo) * np.linspace(0, 1, levels) ** 2  # denser near the minimum
    filled = ax.contourf(X, Y, Z, levels=lv, cmap="Blues_r", alpha=0.85)
    ax.contour(X, Y, Z, levels=lv, colors="white", linewidths=0.4, alpha=0.6)
    fig.colorbar(filled, ax=ax, label="f(x, y)")
    ax.plot(pts[:, 0], pts[:, 1], "-", color="#d9480f", lw=1.6, label=f"{len(pts) - 1} steps")
    ax.plot(pts[:, 0], pts[:, 1], "o", color="#d9480f", ms=3)
    ax.plot(*pts[0], "s", color="black", ms=7, label=f"start ({pts[0, 0]:.2f}, {pts[0, 1]:.2f})")
    ax.plot(*pts[-1], "*", color="#ffd43b", mec="black", ms=14,
            label=f"end ({pts[-1, 0]:.3f}, {pts[-1, 1]:.3f})")
    if minimum is not None:
        ax.plot(*minimum, "x", color="black", ms=10, mew=2, label="true minimum")
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_title(title)
    ax.legend(loc="upper right", fontsize=8, framealpha=0.9)
    return _finish(fig, path)


def loss_curves(curves: Mapping[str, Sequence[float]], title: str = "Training loss",
                xlabel: str = "step", ylabel: str = "loss", log: bool = False,
                path=None) -> Figure:
    """One line per named loss history, e.g. ``{"dynamic": [...], "static": [...]}``."""
    fig = _figure()
    ax = fig.add_subplot()
    styles = ["-", "--", ":", "-."]
    for i, (name, values) in enumerate(curves.items()):
        values = np.asarray(values, dtype=float)
        ax.plot(np.arange(len(values)), values, styles[i % len(styles)], color=_colour(name, i),
                lw=2.0 if i == 0 else 1.8, label=f"{name} (final {values[-1]:.4f})")
    if log:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    return _finish(fig, path)


def jacobian_heatmap(J, row_labels: Sequence[str] | None = None,
                     col_labels: Sequence[str] | None = None, title: str = "Jacobian",
                     path=None) -> Figure:
    """The matrix J[i, j] = d out_i / d in_j as a diverging heatmap with its numbers."""
    J = np.atleast_2d(np.asarray(J, dtype=float))
    rows, cols = J.shape
    row_labels = list(row_labels or [f"out {i}" for i in range(rows)])
    col_labels = list(col_labels or [f"in {j}" for j in range(cols)])
    fig = _figure(1.4 + 1.1 * cols + 1.2, 1.0 + 0.7 * rows + 0.6)
    ax = fig.add_subplot()
    bound = max(np.abs(J).max(), 1e-12)
    im = ax.imshow(J, cmap="RdBu_r", vmin=-bound, vmax=bound)
    fig.colorbar(im, ax=ax, shrink=0.85)
    for i in range(rows):
        for j in range(cols):
            ax.text(j, i, f"{J[i, j]:.3g}", ha="center", va="center", fontsize=11,
                    color="white" if abs(J[i, j]) > 0.6 * bound else "black")
    ax.set_xticks(range(cols), col_labels)
    ax.set_yticks(range(rows), row_labels)
    ax.set_title(title)
    return _finish(fig, path)


def timing_bars(times: Mapping[str, float | Sequence[float]], ylabel: str = "ms per iteration",
                title: str = "Time per iteration", scale: float = 1e3, path=None,
                ax=None) -> Figure:
    """Bars of the median of each named list of seconds, whiskers from 10th to 90th percentile."""
    fig = ax.figure if ax is not None else _figure()
    ax = ax or fig.add_subplot()
    names = list(times)
    meds, los, his = [], [], []
    for name in names:
        v = np.atleast_1d(np.asarray(times[name], dtype=float)) * scale
        meds.append(np.median(v))
        los.append(np.median(v) - np.percentile(v, 10))
        his.append(np.percentile(v, 90) - np.median(v))
    colours = [_colour(n, i) for i, n in enumerate(names)]
    bars = ax.bar(names, meds, color=colours, yerr=[los, his], capsize=6, alpha=0.9)
    for bar, m in zip(bars, meds):
        ax.annotate(f"{m:.3g}", (bar.get_x() + bar.get_width() * 0.25, m), xytext=(0, 4),
                    textcoords="offset points", ha="center", va="bottom", fontsize=10)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.set_ylim(0, max(m + h for m, h in zip(meds, his)) * 1.2 or 1)
    ax.grid(axis="y", alpha=0.3)
    return _finish(fig, path) if path is not None else fig


def static_vs_dynamic(times: Mapping[str, Sequence[float]], memory: Mapping[str, float],
                      title: str = "Static vs dynamic: one training iteration",
                      memory_unit: str = "KiB", path=None, time_label: str = "ms per iteration",
                      time_scale: float = 1e3, time_title: str = "time per iteration") -> Figure:
    """Two panels: time per iteration (seconds, shown in ms) and peak memory per iteration.

    ``memory`` holds bytes.  For a deterministic left panel give counts instead of
    seconds with ``time_scale=1`` and a matching ``time_label``.
    """
    fig = _figure(10.0, 4.2)
    left, right = fig.subplots(1, 2)
    timing_bars(times, ax=left, title=time_title, ylabel=time_label, scale=time_scale)
    names = list(memory)
    divisor = {"B": 1, "KiB": 1024, "MiB": 1024 ** 2}[memory_unit]
    values = [memory[n] / divisor for n in names]
    bars = right.bar(names, values, color=[_colour(n, i) for i, n in enumerate(names)], alpha=0.9)
    for bar, v in zip(bars, values):
        right.annotate(f"{v:.3g}", (bar.get_x() + bar.get_width() / 2, v), xytext=(0, 4),
                       textcoords="offset points", ha="center", va="bottom", fontsize=10)
    right.set_ylabel(f"peak {memory_unit} allocated")
    right.set_title("memory per iteration")
    right.set_ylim(0, max(values) * 1.2 or 1)
    right.grid(axis="y", alpha=0.3)
    fig.suptitle(title)
    return _finish(fig, path)


def decision_boundary(predict_fn: Callable, X, y, title: str = "Decision boundary",
                      resolution: int = 200, margin: float = 0.5, path=None, ax=None) -> Figure:
    """Colour the plane by ``predict_fn(points) -> class labels`` and scatter the data.

    The points are given in the data's floating dtype (float32 for the lessons' data
    sets), the one a model trained on that data takes."""
    X = np.asarray(X)
    X = X if X.dtype.kind == "f" else X.astype(float)
    y = np.asarray(y).astype(int)
    x0, x1 = X[:, 0].min() - margin, X[:, 0].max() + margin
    y0, y1 = X[:, 1].min() - margin, X[:, 1].max() + margin
    gx, gy = np.meshgrid(np.linspace(x0, x1, resolution), np.linspace(y0, y1, resolution))
    grid = np.column_stack([gx.ravel(), gy.ravel()]).astype(X.dtype)
    labels = np.asarray(predict_fn(grid)).reshape(gx.shape)
    n = int(max(y.max(), labels.max())) + 1
    light = ListedColormap(["#a5d8ff", "#ffc9c9", "#b2f2bb", "#eebefa"][:n])
    dark = ["#1864ab", "#c92a2a", "#2b8a3e", "#862e9c"]
    fig = ax.figure if ax is not None else _figure(5.6, 5.0)
    ax = ax or fig.add_subplot()
    ax.contourf(gx, gy, labels, levels=np.arange(n + 1) - 0.5, cmap=light, alpha=0.9)
    ax.contour(gx, gy, labels, levels=np.arange(n) + 0.5, colors="black", linewidths=1.0)
    for k in range(n):
        mask = y == k
        ax.scatter(X[mask, 0], X[mask, 1], s=16, color=dark[k % 4], edgecolor="white",
                   linewidth=0.4, label=f"class {k}")
    accuracy = float(np.mean(np.asarray(predict_fn(X)).reshape(-1) == y))
    ax.set_title(f"{title} (accuracy {accuracy:.0%})")
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_aspect("equal")
    ax.legend(loc="lower right", fontsize=8)
    return _finish(fig, path) if path is not None else fig


def memory_timeline(timelines: Mapping[str, Sequence[int]],
                    title: str = "Intermediate values alive during one planned run",
                    path=None) -> Figure:
    """Steps of live-value counts, one line per named run (see ``training.live_values``).

    >>> fig = memory_timeline({"inference": [1, 2, 2, 1], "training": [1, 2, 3, 4, 2]})
    >>> [line.get_label() for line in fig.axes[0].get_lines()]
    ['inference (peak 2)', 'training (peak 4)']
    """
    fig = _figure(7.2, 3.8)
    ax = fig.add_subplot()
    for i, (name, counts) in enumerate(timelines.items()):
        counts = list(counts)
        ax.step(range(1, len(counts) + 1), counts, where="post", color=_colour(name, i),
                linewidth=2, label=f"{name} (peak {max(counts)})")
    ax.set_xlabel("op executed (plan step)")
    ax.set_ylabel("intermediate values alive")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left")
    return _finish(fig, path) if path is not None else fig


def amortisation(setup_seconds: Mapping[str, float], step_seconds: Mapping[str, float],
                 runs: int = 200, title: str = "When does building and compiling pay off?",
                 path=None) -> Figure:
    """Total time after n runs: ``setup + n * step`` per named strategy.

    Where a line with a larger setup crosses one with a smaller setup is the number of
    runs after which the setup has paid for itself (marked when it is within ``runs``).

    >>> fig = amortisation({"dynamic": 0.0, "static": 0.01}, {"dynamic": 2e-4, "static": 1e-4})
    >>> fig.axes[0].get_title()
    'When does building and compiling pay off?'
    """
    fig = _figure(6.8, 4.2)
    ax = fig.add_subplot()
    n = np.arange(runs + 1)
    names = list(setup_seconds)
    for name, colour in zip(names, _colours(names)):
        ax.plot(n, (setup_seconds[name] + n * step_seconds[name]) * 1e3,
                color=colour, linewidth=2, label=name)
    for a in names:
        for b in names:
            gain = step_seconds[b] - step_seconds[a]
            extra = setup_seconds[a] - setup_seconds[b]
            if extra > 0 and gain > 0 and extra / gain <= runs:
                x = extra / gain
                ax.axvline(x, color="grey", linestyle=":")
                ax.annotate(f"{a} pays off after ~{x:.0f} runs", (x, 0), xytext=(6, 10),
                            textcoords="offset points", fontsize=9)
    ax.set_xlabel("runs (training steps)")
    ax.set_ylabel("total time (ms)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left")
    return _finish(fig, path) if path is not None else fig


# ---------------------------------------------------------------------------- all figures
def scalar_graph(root, names: Mapping[str, object] | None = None, title: str | None = None):
    """Draw a graph of lesson 8's scalar ``Node`` engine with the lab's renderer.

    The nodes are read as the engine leaves them: ``value``, ``grad_fn`` (an op name of
    the lesson's table, None for a leaf), ``inputs`` and ``requires_grad``.  The graph is
    rebuilt as a static graph (a leaf that requires grad becomes a Variable, one that
    does not a constant, a computed node the static op of the same name) and drawn;
    ``names`` maps a name to each leaf worth naming.  Freed graphs draw too: freeing
    keeps the structure.

    >>> class N:
    ...     def __init__(self, value, requires_grad=False, grad_fn=None, inputs=()):
    ...         self.value, self.requires_grad = value, requires_grad
    ...         self.grad_fn, self.inputs = grad_fn, inputs
    >>> x = N(2.0, requires_grad=True)
    >>> y = N(6.0, True, "mul", (x, N(3.0)))
    >>> d = scalar_graph(y, {"x": x})
    >>> "mul" in d.source and "= 3" in d.source and "<b>x</b>" in d.source
    True
    """
    name_of = {id(node): name for name, node in (names or {}).items()}
    built: dict[int, object] = {}

    def build(node):
        if id(node) not in built:
            if node.grad_fn is None:
                kind = ns.Variable if node.requires_grad else ns.constant
                built[id(node)] = kind(np.float64(node.value), name=name_of.get(id(node)))
            else:
                inputs = [build(i) for i in node.inputs]
                built[id(node)] = getattr(ns, node.grad_fn)(*inputs)
        return built[id(node)]

    with ns.Graph():
        out = build(root)
    return ng.render(out, title=title)


def make_all_figures(outdir) -> list[Path]:
    """Write every figure the lessons use into ``outdir``; return the paths (deterministic)."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    written = []

    def f(x, y):
        return (x - 1) ** 2 + 2 * (y + 2) ** 2 + x * y / 2

    def grad(x, y):
        return np.array([2 * (x - 1) + y / 2, 4 * (y + 2) + x / 2])

    pts = descent(grad, (-2.0, 2.0), lr=0.1, steps=40)
    minimum = np.linalg.solve([[2.0, 0.5], [0.5, 4.0]], [2.0, -8.0])
    written.append(outdir / "gradient_descent.png")
    gradient_descent_contour(f, pts, xlim=(-3, 3), ylim=(-4, 3), minimum=minimum,
                             title="Gradient descent on (x-1)² + 2(y+2)² + xy/2",
                             path=written[-1])

    x, y = 1.0, 2.0
    J = np.array([[y, x], [1.0, np.cos(y)], [np.exp(x) * y, np.exp(x)]])
    written.append(outdir / "jacobian.png")
    jacobian_heatmap(J, ["x·y", "x + sin y", "eˣ·y"], ["x", "y"],
                     title="Jacobian at (x, y) = (1, 2)", path=written[-1])

    X, labels = spirals(200, turns=1.0, noise=0.1, seed=0)  # lesson 9's data and model
    losses, predict = train_capstone(X, labels)
    written.append(outdir / "capstone_loss_curves.png")
    loss_curves(losses, title="Two spirals: the same Adam steps in both modes", log=True,
                path=written[-1])
    written.append(outdir / "capstone_decision_boundary.png")
    decision_boundary(predict, X, labels, title="Two spirals, static mode", path=written[-1])
    # Wall-clock times vary from run to run (lesson 7 measures them live); this file
    # shows what does not: graph nodes built per step and peak memory (lesson 7 too).
    nodes, memory = iteration_costs_in_a_fresh_process()
    written.append(outdir / "static_vs_dynamic.png")
    static_vs_dynamic(nodes, memory, path=written[-1], time_scale=1,
                      time_label="graph nodes built per step", time_title="graph building",
                      title="Static vs dynamic: one training step of lesson 7's MLP")
    return written
