"""Running a static graph: what ``g.forward``, ``g.backward`` and ``g.compile`` do.

A :class:`~naivegraph.static.graph.Graph` only holds its nodes; this module runs them,
with the executor (plans over numpy forwards), the gradient sweep and the optimisation
passes.  It sits above all three, and registers itself with ``graph.py`` when
``naivegraph.static`` is imported, so every import in static mode goes one way:
``graph <- nodes <- executor <- passes / gradients <- session``.
"""

from __future__ import annotations

import sys
from typing import Any, Mapping, Sequence

from .. import fast
from .executor import CompiledFunction, ancestors, missing_feed_error, run_forward
from .gradients import numeric_backward
from .graph import Graph, register_session
from .nodes import Node, Placeholder
from .passes import optimize as run_passes


def forward(
    graph: Graph,
    feeds: Mapping | None,
    named_feeds: Mapping[str, Any],
    fetches: Sequence | None,
    free_intermediates: bool | None,
    check_numerics: bool,
) -> list | None:
    """``graph.forward``: run the graph on the feeds (see its docstring)."""
    return run_forward(graph, feeds, named_feeds, fetches, free_intermediates, check_numerics)


def backward(graph: Graph, loss: Node, grad: Any, check_numerics: bool) -> None:
    """``graph.backward``: the numeric reverse sweep after ``forward``."""
    with fast.paused_gc():
        numeric_backward(graph, loss, grad, check_numerics)


def compile(
    graph: Graph, inputs: Sequence, outputs: Sequence, optimize: bool, check_numerics: bool = False
) -> CompiledFunction:
    """``graph.compile``: a reusable function over the part of the graph ``outputs`` need,
    planned on the optimised graph when ``optimize`` is true."""
    inputs = [graph.resolve(i) for i in inputs]
    for node in inputs:
        if not isinstance(node, Placeholder):
            raise TypeError(
                f"compile inputs must be placeholders, but {node.name!r} is a {type(node).__name__}"
            )
    outputs = [graph.resolve(o) for o in outputs]
    given = set(inputs)
    for node in ancestors(outputs):
        if isinstance(node, Placeholder) and node not in given:
            raise missing_feed_error(node, next(o for o in outputs if node in ancestors([o])))
    if not optimize:
        return CompiledFunction(graph, inputs, outputs, check_numerics=check_numerics)
    new_graph, report = run_passes(graph, fetches=outputs)
    mapping = report.mapping
    new_inputs = [mapping.get(p) for p in inputs]
    return CompiledFunction(
        new_graph, new_inputs, [mapping[o] for o in outputs], report, check_numerics
    )


register_session(sys.modules[__name__])
