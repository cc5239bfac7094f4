"""Running a static graph: what ``g.forward``, ``g.backward`` and ``g.compile`` do.

A :class:`~naivegraph.static.graph.Graph` only holds its nodes; this module runs them,
with the executor (plans over numpy forwards), the gradient sweep and the optimisation
passes.  It sits above all three: ``graph <- nodes <- executor <- passes / gradients <-
session``; the Graph's methods import it when they run.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from . import listing, saving
from .executor import (
    CompiledFunction,
    Plan,
    ancestors,
    as_result,
    collect_feeds,
    run_forward,
)
from .gradients import numeric_backward
from .graph import Graph
from .nodes import Node, Placeholder, assign, constant
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
    numeric_backward(graph, loss, grad, check_numerics)


def save(graph: Graph, path: Any) -> None:
    """``graph.save``: JSON and npz, no pickle (see :mod:`naivegraph.static.saving`)."""
    saving.save(graph, path)


def run(graph: Graph, fetches: Any, feed_dict: Mapping | None, named_feeds: Mapping) -> Any:
    """``graph.run``: the values of ``fetches`` (a node or name, or a list/tuple of them),
    in the same structure, after committing the updates the run fetched."""
    single = not isinstance(fetches, (list, tuple))
    nodes = [graph.resolve(f) for f in ([fetches] if single else fetches)]
    fed = collect_feeds(graph, feed_dict, named_feeds)
    placeholders = list(fed)
    plan = _plan_for_run(graph, nodes, placeholders)
    values = plan.run([fed[p] for p in placeholders])
    results = [as_result(v) for v in plan.fetched(values)]
    return results[0] if single else results


def _plan_for_run(graph: Graph, fetches: list, placeholders: list) -> Plan:
    """The plan of a ``g.run``, kept while the graph does not change: a TF1-style loop
    runs the same fetches with the same feeds many times."""
    key = (tuple(fetches), tuple(placeholders))
    cached = graph.run_plans.get(key)
    if cached is not None and cached[0] == graph.version:
        return cached[1]
    plan = Plan(graph, fetches, placeholders, free=True)
    if len(graph.run_plans) >= 64:  # a loop over ever new fetch lists keeps no garbage
        graph.run_plans.clear()
    graph.run_plans[key] = (graph.version, plan)
    return plan


def compile(
    graph: Graph,
    inputs: Sequence,
    outputs: Sequence,
    optimize: bool,
    check_numerics: bool = False,
    updates: Any = (),
) -> CompiledFunction:
    """``graph.compile``: a reusable function over the part of the graph ``outputs`` need,
    planned on the optimised graph when ``optimize`` is true."""
    inputs = [graph.resolve(i) for i in _node_list(inputs, "inputs")]
    for node in inputs:
        if not isinstance(node, Placeholder):
            raise TypeError(
                f"compile inputs must be placeholders, but {node.name!r} is a {type(node).__name__}"
            )
    outputs = [graph.resolve(o) for o in _node_list(outputs, "outputs")]
    size = len(graph.nodes)
    update_nodes = _update_nodes(graph, updates)
    try:  # a refused function leaves no update node behind
        return _compiled(graph, inputs, outputs, update_nodes, optimize, check_numerics)
    except BaseException:
        graph._rollback(size)
        raise


def _node_list(given: Any, what: str) -> list:
    """``given`` as a list of nodes or names; one node or name alone is refused, since a
    compiled function always takes and returns lists."""
    if isinstance(given, (Node, str)):
        name = given if isinstance(given, str) else given.name
        raise TypeError(
            f"compile {what} must be a list of nodes (or names); got the "
            f"{'name' if isinstance(given, str) else 'node'} {name!r} alone: wrap it in a "
            f"list, {what}=[{name}]"
        )
    if isinstance(given, Mapping):
        raise TypeError(
            f"compile {what} must be a list of nodes (or names); got a dict, whose keys "
            f"would be read as node names: a compiled function takes and returns lists, "
            f"in the order given, so list the nodes themselves"
        )
    return list(given)


def _compiled(
    graph: Graph,
    inputs: list,
    outputs: list,
    update_nodes: list,
    optimize: bool,
    check_numerics: bool,
) -> CompiledFunction:
    needed = outputs + update_nodes
    given = set(inputs)
    for node in ancestors(needed):
        if isinstance(node, Placeholder) and node not in given:
            fetch = next(o for o in needed if node in ancestors([o]))
            raise ValueError(
                f"placeholder {node.name!r} needs a value ({fetch.name!r} depends on it): "
                f"list it in compile's inputs, e.g. graph.compile([{node.name}, ...], "
                "outputs), and pass its array to each call"
            )
    if not optimize:
        return CompiledFunction(
            graph, inputs, outputs, check_numerics=check_numerics, updates=update_nodes
        )
    new_graph, report = run_passes(graph, fetches=needed)
    mapping = report.mapping
    return CompiledFunction(
        new_graph,
        [mapping.get(p) for p in inputs],
        [mapping[o] for o in outputs],
        report,
        check_numerics,
        updates=[mapping[u] for u in update_nodes],
    )


def _update_nodes(graph: Graph, updates: Any) -> list[Node]:
    """Theano's ``updates``: ``[(variable, new_value), ...]`` or a dict, as assign nodes
    of ``graph`` (built together: if one is refused, none is added)."""
    pairs = list(updates.items()) if isinstance(updates, Mapping) else list(updates)
    size = len(graph.nodes)
    nodes: list[Node] = []
    try:
        with graph:
            for pair in pairs:
                if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
                    raise TypeError(
                        f"updates are (variable, new_value) pairs, got {pair!r}; e.g. "
                        f"updates=[(w, w - 0.1 * dw)]"
                    )
                variable, value = pair
                if not isinstance(value, Node):
                    value = constant(value)
                nodes.append(assign(graph.resolve(variable), value))
    except BaseException:
        graph._rollback(size)
        raise
    return nodes


def graph_listing(graph: Graph) -> str:
    """``str(graph)``: the SSA listing of every node (see :mod:`naivegraph.static.listing`)."""
    return listing.graph_listing(graph)


def plan_listing(compiled: CompiledFunction) -> str:
    """``compiled.listing()``: the steps of its plan and what each frees."""
    return listing.plan_listing(compiled)
