"""Graphviz drawings of naivegraph graphs, for both modes.

>>> import naivegraph as ng
>>> input = ng.ones([2, 2])
>>> w1 = ng.tensor(2.0, requires_grad=True)
>>> loss = (input * w1).mean()
>>> d = ng.render(loss, kind="backward", params={"w1": w1})
>>> "MeanBackward0" in d.source and "AccumulateGrad" in d.source
True
>>> d.pipe("svg")[:5] in (b"<?xml", b"<svg ")      # dot on PATH, else pygraphviz
True

See :func:`render` for the options, :mod:`naivegraph.render.animate` for GIFs of a
training step and :mod:`naivegraph.render.examples` for the built-in examples.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from .. import static as ns
from ..dynamic.tensor import Tensor
from .dot import emit
from .dynamic import caller_names, dynamic_sketch, names_from
from .engine import BACKENDS, GraphvizUnavailable, RenderError, available_backends, check_format
from .static import render_gradient_optimization, render_optimization, static_sketch
from .walk import dynamic_walkthrough

if TYPE_CHECKING:  # pragma: no cover
    from .drawing import Drawing

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

KINDS = ("forward", "backward", "both")

__all__ = [
    "Drawing",
    "GraphvizUnavailable",
    "RenderError",
    "available_backends",
    "render",
    "walkthrough",
    "render_optimization",
    "render_gradient_optimization",
    "KINDS",
]


def __getattr__(name: str) -> Any:
    """``naivegraph.render.Drawing``, imported on first use (it needs graphviz)."""
    if name == "Drawing":
        from .drawing import Drawing

        return Drawing
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def render(
    obj: Any,
    kind: str | None = None,
    show_values: bool = True,
    params: Mapping[str, Any] | None = None,
    *,
    max_nodes: int | None = 500,
    legend: bool = True,
    rankdir: str = "TB",
    title: str | None = None,
    backend: str | None = None,
    gradients: Any = False,
) -> Drawing:
    """Draw a dynamic tensor (or a list of them), a static node or a whole static graph.

    Args:
        obj: ``ng.Tensor`` / list of tensors, ``ns.Graph``, ``ns.Node`` / list of nodes.
        kind: ``"forward"`` (tensors and ops, data direction), ``"backward"``
            (``grad_fn`` nodes, ``AccumulateGrad``, saved values; gradient direction)
            or ``"both"`` (two clusters).  Default: ``"forward"`` for tensors; for a
            static graph everything it holds, symbolic gradient nodes included.
        show_values: print small values (scalars, arrays of at most 4 numbers) and
            gradients in the labels.
        params: ``{"w1": w1, ...}`` names for dynamic tensors.  When omitted, the local
            variables of the calling function that hold tensors are used, so the
            drawing speaks the names of your code.  Static nodes use their own names.
        max_nodes: above this many nodes the middle of the traversal is replaced by
            one note saying what was hidden (``None``: draw everything).
        legend: add a ``cluster_legend`` explaining the styles used.
        rankdir: Graphviz direction, ``"TB"`` (top to bottom) or ``"LR"``.
        title: a caption on top of the drawing.
        backend: force ``"dot"`` or ``"pygraphviz"`` for rendering (default: the first
            that works).
        gradients: ``True`` labels every ``grad_fn`` node of a dynamic backward graph
            with the gradient arriving at it (``∂loss/∂l1 = 7``: the gradient of the
            output with respect to that node's output) and every ``AccumulateGrad``
            with the gradient it adds to ``.grad``.  Computed by one backward pass that
            changes nothing: no ``.grad`` is written and the graph is not freed, so
            draw it *before* ``backward()``.  A non-scalar output needs the gradient to
            start from instead of ``True`` (a tensor, or a list with one per output).
            Implies ``kind="backward"`` unless ``kind="both"``.

    Returns:
        A :class:`Drawing` (a ``graphviz.Digraph``): ``.source`` is the DOT text,
        ``.pipe(format="png")`` the bytes, ``.render("file", format="pdf")`` a file;
        in Jupyter it shows as SVG.  ``.stats`` tells how many nodes were hidden.
        ``.pipe`` / ``.render`` refuse a drawing too big to lay out in reasonable time
        (``LayoutTooLarge``, before Graphviz starts; ``force=True`` overrides) and warn
        about a large one: limits measured in :mod:`naivegraph.render.engine`.

    >>> import naivegraph as ng
    >>> a = ng.tensor(2.0, requires_grad=True)
    >>> b = a.exp()
    >>> d = render(b, params={"a": a, "b": b}, legend=False)
    >>> for line in d.source.splitlines()[4:]:
    ...     print(line.strip()[:40])
    n0 [label=<<b>b</b><br/><font point-size
    n1 [label=<<b>exp</b>> class=op color="#
    n2 [label=<<b>a</b><br/><font point-size
    n1 -> n0 [color="#424242"]
    n2 -> n1 [color="#424242"]
    }
    >>> d = render(b * b, gradients=True, params={"a": a, "b": b}, legend=False)
    >>> import re
    >>> re.findall("∂[^<]*", d.source)
    ['∂root/∂root = 1', '∂root/∂b = 14.78', '∂root/∂a = 109.2']
    >>> a.grad is None                       # nothing was accumulated
    True
    """
    _check_render_options(kind, params, max_nodes, rankdir, backend, title)
    mode = _mode_of(obj)
    kind = _check_gradients(gradients, kind, mode)
    if mode == "dynamic" and kind == "backward":
        _require_backward_graph(obj)
    if params is None and mode == "dynamic":
        params = caller_names(_PACKAGE_DIR)
    return _render(
        obj, kind, show_values, params, max_nodes, legend, rankdir, title, backend, gradients
    )


def walkthrough(output: Any, gradient: Any = None, params: Mapping[str, Any] | None = None) -> Any:
    """A step-through of one training step of ``output``'s graph, on its drawing.

    Forward: the ops in the order your code ran them, each computed at once and recorded.
    Backward: node by node as ``output.backward(gradient)`` runs them, with the gradient
    reaching each node (summed over its consumers when it has several), its VJP with the
    numbers, and what ``AccumulateGrad`` adds into each leaf's ``.grad``; then what
    ``backward()`` frees.  Building it changes nothing: no ``.grad`` is written, no hook
    runs, nothing is freed.  Made after a ``backward()`` that freed the graph, it shows
    the forward build and what is left.

    Args:
        output: the tensor ``backward()`` would start from (the loss).
        gradient: as in ``output.backward(gradient)``, for a non-scalar output.
        params: ``{"w1": w1, ...}`` names; by default the caller's local variables.

    Returns:
        A :class:`~naivegraph.render.walk.Walkthrough`: ``.steps``,
        ``.to_html()``, ``.save_html(path)``; in Jupyter, Previous / Next buttons and
        the ← / → keys page through "step K of N".

    >>> import naivegraph as ng
    >>> w = ng.tensor(3.0, requires_grad=True)
    >>> y = w * w
    >>> steps = walkthrough(y).steps
    >>> [s.title for s in steps]   # doctest: +NORMALIZE_WHITESPACE
    ['forward 1/1: y = mul(w, w)', 'backward 1/2: MulBackward0 runs (the backward of y =
    mul(w, w))', 'backward 2/2: AccumulateGrad adds into w.grad', 'after backward():
    what it frees']
    >>> for line in steps[2].lines[:4]:   # y = w * w uses w twice
    ...     print(line)
    ∂y/∂w: w is used 2 times, so its consumers' gradients add up:
       3   from MulBackward0 (y)
     + 3   from MulBackward0 (y)
     = 6
    >>> w.grad is None
    True
    """
    if params is None:
        params = caller_names(_PACKAGE_DIR)
    return dynamic_walkthrough(output, gradient, params)


ACCEPTS = (
    "render() draws a naivegraph Tensor or a list of Tensors (dynamic mode), "
    "or a static Graph, Node or list of Nodes"
)

RANKDIRS = ("TB", "LR", "BT", "RL")


def _describe(obj: Any) -> str:
    if obj is None:
        return "None"
    if isinstance(obj, Mapping):
        return (
            f"a {type(obj).__name__} (to draw its tensors pass a list, e.g. "
            "render(list(d.values())); names go in params=)"
        )
    if isinstance(obj, (list, tuple)) and not obj:
        return f"an empty {type(obj).__name__}"
    return f"{type(obj).__name__} {obj!r:.60}"


def _mode_of(obj: Any) -> str:
    """``"dynamic"`` or ``"static"``; anything else is a TypeError naming what was given."""
    items = list(obj) if isinstance(obj, (list, tuple)) else [obj]
    if not items or isinstance(obj, Mapping):
        raise TypeError(f"{ACCEPTS}; got {_describe(obj)}")
    modes = []
    for position, item in enumerate(items):
        if isinstance(item, Tensor):
            modes.append("dynamic")
        elif _is_static_drawable(item, whole_graph_ok=item is obj):
            modes.append("static")
        else:
            where = "" if items == [obj] else f"item {position} of the {type(obj).__name__} is "
            raise TypeError(f"{ACCEPTS}; got {where}{_describe(item)}")
    if len(set(modes)) > 1:
        raise TypeError(
            f"{ACCEPTS}; got a {type(obj).__name__} mixing Tensors and static "
            "Nodes: draw each mode with its own render() call"
        )
    return modes[0]


def _is_static_drawable(obj: Any, whole_graph_ok: bool) -> bool:
    return isinstance(obj, ns.Node) or (whole_graph_ok and isinstance(obj, ns.Graph))


def _require_backward_graph(obj: Any) -> None:
    tensors = list(obj) if isinstance(obj, (list, tuple)) else [obj]
    if not any(t.grad_fn is not None or t.requires_grad for t in tensors):
        raise ValueError(
            "kind='backward' draws the grad_fn graph, but nothing given has one: "
            "no grad_fn and requires_grad=False.  Create the leaves with "
            "requires_grad=True before computing it, or draw kind='forward'"
        )


def _check_gradients(gradients: Any, kind: str | None, mode: str) -> str | None:
    """Refuse a ``gradients=`` that cannot label anything; return the kind to draw."""
    if gradients is False:
        return kind
    if gradients is not True and not isinstance(gradients, (Tensor, np.ndarray, list, tuple)):
        raise TypeError(
            "gradients must be True, False, or the gradient to start from (a Tensor, "
            f"or a list with one per output), not {type(gradients).__name__}"
        )
    if mode != "dynamic":
        raise ValueError(
            "gradients= labels the backward graph of dynamic tensors; a static graph "
            "gets its gradient nodes from ns.gradients(loss, [w, ...]): draw the graph "
            "after building them"
        )
    if kind == "forward":
        raise ValueError(
            "gradients= labels the backward graph: use kind='backward' or kind='both', "
            "not kind='forward'"
        )
    return kind or "backward"


def _check_render_options(
    kind: Any, params: Any, max_nodes: Any, rankdir: Any, backend: Any, title: Any
) -> None:
    """Refuse bad options before any work, each with what is accepted."""
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)} (or None), not {kind!r}")
    if params is not None and not isinstance(params, Mapping):
        raise TypeError(
            "params must be a dict of names to tensors, e.g. params={'w1': w1}, "
            f"not {type(params).__name__}"
        )
    if max_nodes is not None and (isinstance(max_nodes, bool) or not isinstance(max_nodes, int)):
        raise TypeError(f"max_nodes must be an int (or None for no limit), not {max_nodes!r}")
    if max_nodes is not None and max_nodes < 2:
        raise ValueError(f"max_nodes must be at least 2 (or None for no limit), not {max_nodes}")
    if rankdir not in RANKDIRS:
        raise ValueError(f"rankdir must be one of {', '.join(RANKDIRS)}, not {rankdir!r}")
    if backend not in (None, "auto", *BACKENDS):
        raise ValueError(f"unknown backend {backend!r}; use one of {', '.join(BACKENDS)} or None")
    if title is not None and not isinstance(title, str):
        raise TypeError(f"title must be a str or None, not {type(title).__name__}")


def _render(
    obj: Any,
    kind: str | None,
    show_values: bool,
    params: Mapping[str, Any] | None,
    max_nodes: int | None,
    legend: bool,
    rankdir: str,
    title: str | None,
    backend: str | None,
    gradients: Any = False,
) -> Drawing:
    started = time.perf_counter()
    if _mode_of(obj) == "static":
        sketch, default_title = static_sketch(obj, kind, show_values)
    else:
        kind = kind or "forward"
        sketch = dynamic_sketch(obj, kind, names_from(params), show_values, gradients)
        default_title = None
    from .drawing import new_drawing  # graphviz loads with the first drawing

    drawing = new_drawing(title if title is not None else default_title, rankdir, backend)
    emit(sketch, drawing, max_nodes=max_nodes, legend=legend)
    if "forward" in sketch.clusters and "backward" in sketch.clusters:
        drawing.halves = ("forward", "backward")
    drawing.stats["seconds"] = time.perf_counter() - started
    return drawing
