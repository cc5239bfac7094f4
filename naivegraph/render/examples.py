"""Built-in examples, drawn by ``naivegraph render`` / ``naivegraph tour``.

Each example writes, for every requested format:

* dynamic examples: ``<name>_forward``, ``<name>_backward`` (before backward, with the
  saved values) and ``<name>_after_backward`` (saved values freed, leaves with ``.grad``);
  those in :data:`WITH_GRADIENTS` also ``<name>_backward_gradients`` (each backward node
  labelled with the gradient arriving at it, drawn before backward);
* static examples: ``<name>_forward`` (built, not run), ``<name>_run`` (after a run and
  a numeric backward), ``<name>_gradients`` (with the symbolic gradient nodes) and
  ``<name>_optimized`` (the raw and optimised gradient graph side by side).

>>> import tempfile
>>> paths = render_examples(tempfile.mkdtemp(), names=["exp"], formats=("svg",))
>>> sorted(p.rsplit("/", 1)[1] for p in paths)
['exp_after_backward.svg', 'exp_backward.svg', 'exp_forward.svg']
"""

from __future__ import annotations

import os
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from .. import static as ns
from ..dynamic.factories import manual_seed, randn, tensor, zeros
from ..examples import reference_dynamic
from . import render, render_gradient_optimization
from .animate import static_reference_graph
from .engine import check_format


def _reference() -> dict:
    return reference_dynamic()


def _exp() -> dict:
    a = tensor(2.0, requires_grad=True)
    b = a.exp()  # tensor(7.3891, grad_fn=<ExpBackward0>)
    return dict(a=a, b=b, loss=b)


def _mlp() -> dict:
    """A 2-layer net on a batch of 4: x -> Linear(3, 4) -> ReLU -> Linear(4, 1) -> MSE."""
    manual_seed(0)
    x = randn(4, 3)
    target = randn(4, 1)
    W1 = randn(3, 4).requires_grad_()
    b1 = zeros(4).requires_grad_()
    W2 = randn(4, 1).requires_grad_()
    b2 = zeros(1).requires_grad_()
    h = (x @ W1 + b1).relu()
    y = h @ W2 + b2
    loss = ((y - target) ** 2).mean()
    return dict(x=x, target=target, W1=W1, b1=b1, W2=W2, b2=b2, h=h, y=y, loss=loss)


#: name -> function building the tensors (the one called "loss" is drawn)
DYNAMIC: dict[str, Callable[[], dict]] = {"reference": _reference, "exp": _exp, "mlp": _mlp}

#: dynamic examples also drawn with ``gradients=True`` (the lessons use the reference one)
WITH_GRADIENTS = ("reference",)

#: static examples: name -> function returning ``(graph, loss, nodes)``
STATIC: dict[str, Callable[[], tuple]] = {}


def _static_reference() -> tuple:
    return static_reference_graph()


STATIC["static-reference"] = _static_reference

EXAMPLES = tuple(DYNAMIC) + tuple(STATIC)


def _write(drawing: Any, outdir: str, stem: str, formats: Sequence[str]) -> list[str]:
    return [drawing.render(os.path.join(outdir, stem), format=fmt) for fmt in formats]


def render_dynamic_example(
    name: str, outdir: str, formats: Sequence[str] = ("svg", "png"), backend: str | None = None
) -> list[str]:
    """Forward, backward and after-backward drawings of dynamic example ``name``."""
    tensors = DYNAMIC[name]()
    loss = tensors["loss"]
    stem = name.replace("-", "_")
    paths = []
    paths += _write(
        render(
            loss, kind="forward", params=tensors, backend=backend, title=f"{name}: forward graph"
        ),
        outdir,
        f"{stem}_forward",
        formats,
    )
    paths += _write(
        render(
            loss,
            kind="backward",
            params=tensors,
            backend=backend,
            title=f"{name}: backward graph (before backward)",
        ),
        outdir,
        f"{stem}_backward",
        formats,
    )
    if name in WITH_GRADIENTS:  # before backward: the pass it runs needs the saved values
        paths += _write(
            render(
                loss,
                gradients=True,
                params=tensors,
                backend=backend,
                title=f"{name}: the gradient arriving at each backward node",
            ),
            outdir,
            f"{stem}_backward_gradients",
            formats,
        )
    loss.backward()
    paths += _write(
        render(
            loss,
            kind="backward",
            params=tensors,
            backend=backend,
            title=f"{name}: after loss.backward() (saved values freed)",
        ),
        outdir,
        f"{stem}_after_backward",
        formats,
    )
    return paths


def render_static_example(
    name: str, outdir: str, formats: Sequence[str] = ("svg", "png"), backend: str | None = None
) -> list[str]:
    """Built, run, symbolic-gradient and optimised drawings of static example ``name``."""
    graph, loss, nodes = STATIC[name]()
    stem = name.replace("-", "_")
    paths = []
    paths += _write(
        render(graph, backend=backend, title=f"{name}: built, nothing computed"),
        outdir,
        f"{stem}_forward",
        formats,
    )
    feeds = {p.name: np.ones(p.shape) for p in graph.placeholders}
    graph.forward(feeds)
    graph.backward(loss)
    paths += _write(
        render(graph, backend=backend, title=f"{name}: after forward and backward"),
        outdir,
        f"{stem}_run",
        formats,
    )
    wrt = [n for n in graph.nodes if n.kind == "variable"]
    grads = ns.gradients(loss, wrt)
    graph.forward(feeds)
    paths += _write(
        render(graph, backend=backend, title=f"{name}: with symbolic gradient nodes"),
        outdir,
        f"{stem}_gradients",
        formats,
    )
    paths += _write(
        render_gradient_optimization(grads, backend=backend), outdir, f"{stem}_optimized", formats
    )
    return paths


def render_examples(
    outdir: str | os.PathLike,
    names: Iterable[str] | None = None,
    formats: Sequence[str] = ("svg", "png"),
    backend: str | None = None,
) -> list[str]:
    """Draw the built-in examples into ``outdir``; return the paths written.

    ``names``: any of :data:`EXAMPLES`, or one of them as a string (default: all).
    Unknown names raise a ``ValueError`` listing the known ones.
    """
    if not isinstance(outdir, (str, os.PathLike)):
        raise TypeError(f"outdir must be a folder path, not {type(outdir).__name__}")
    outdir = os.fspath(outdir)
    # One name given as a string means that example, not its letters.
    chosen = list(EXAMPLES if names is None else [names] if isinstance(names, str) else names)
    unknown = [n for n in chosen if n not in DYNAMIC and n not in STATIC]
    if unknown:
        raise ValueError(
            f"unknown example(s) {', '.join(unknown)}; choose from {', '.join(EXAMPLES)}"
        )
    formats = [check_format(f) for f in formats]
    os.makedirs(outdir, exist_ok=True)
    paths: list[str] = []
    for name in chosen:
        if name in DYNAMIC:
            paths += render_dynamic_example(name, outdir, formats, backend)
        else:
            paths += render_static_example(name, outdir, formats, backend)
    return paths
