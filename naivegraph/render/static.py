"""Drawings of static-mode graphs (``naivegraph.static``).

In a static graph an ``Operation`` node *is* its result, so each node is drawn once:
leaves as boxes (Variables green, placeholders and constants grey), operations as
ellipses labelled with their name, op, shape and, after a run, their value.  Nodes that
``ns.gradients`` added (``is_gradient``) are purple: the backward pass is part of the
graph, built before anything runs.

Traversal is breadth-first from the outputs through ``node.inputs`` with a queue, so
ids ``n0, n1, ...`` follow the same order in every drawing of the same graph.
"""

from __future__ import annotations

import html
import weakref
from collections import deque
from typing import Any, Iterable, Sequence

from .. import static
from .dot import DETAILS, Item, Sketch, emit, format_shape, format_value, operand_position
from .interactive import summarize

# ----------------------------------------------------------------------------- selection


def _ancestors(roots: Iterable[Any]) -> set:
    """Every node some root depends on (roots included), iteratively."""
    seen: set = set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        stack.extend(node.inputs)
    return seen


def _roots_within(nodes: Sequence[Any], allowed: set) -> list:
    """Nodes of ``allowed`` that no other node of ``allowed`` uses (drawing outputs)."""
    used = {inp for n in nodes if n in allowed for inp in n.inputs}
    return [n for n in nodes if n in allowed and n not in used]


def _select(obj: Any, kind: str | None) -> tuple[list, set, list, str]:
    """``(order, allowed, roots, title)`` for what ``obj`` and ``kind`` ask to draw."""
    ns = static
    if isinstance(obj, ns.Graph):
        order, title = list(obj.nodes), obj.name
    else:
        nodes = [obj] if isinstance(obj, ns.Node) else list(obj)
        allowed = _ancestors(nodes)
        graph = nodes[0].graph
        order = [n for n in graph.nodes if n in allowed] if graph is not None else list(allowed)
        title = ", ".join(n.name for n in nodes)
    if kind == "forward":
        allowed = {n for n in order if not n.is_gradient}
    elif kind == "backward" and any(n.is_gradient for n in order):
        gradient_nodes = [n for n in order if n.is_gradient]
        allowed = _ancestors(gradient_nodes) & set(order)
    else:
        allowed = set(order)
    roots = _roots_within(order, allowed)
    if not isinstance(obj, ns.Graph):
        wanted = [obj] if isinstance(obj, ns.Node) else list(obj)
        roots = [n for n in wanted if n in allowed] + [r for r in roots if r not in wanted]
    return order, allowed, roots[::-1] if isinstance(obj, ns.Graph) else roots, title


# ----------------------------------------------------------------------------- items


def _style(node: Any, output_ids: set) -> str:
    if node.is_gradient:
        return "gradient"
    if node.kind == "variable":
        return "leaf" if getattr(node, "trainable", True) else "nograd"
    if node.kind in ("placeholder", "constant"):
        return "nograd"
    return "output" if id(node) in output_ids else "op"


def _describe(item: Item) -> tuple[str, str]:
    node, show_values = item.payload
    kind = node.kind
    lines = []
    if kind == "operation":
        lines.append(f"{node.op_name} → {format_shape(node.shape)}")
    else:
        lines.append(f"{kind} {format_shape(node.shape)}")
    if show_values:
        value = format_value(node.value)
        if value is not None:
            lines.append(f"= {value}")
        grad = format_value(node.grad)
        if grad is not None:
            lines.append(f"grad {grad}")
    tooltip = f"{node.name}: {node.op_name} {format_shape(node.shape)}"
    return _stacked_label(node.name, lines), tooltip


def _stacked_label(title: str, lines: Sequence[str]) -> str:
    """A bold title over smaller lines, with a thin spacer line under the title.

    Without the spacer an underscore in a name (``mul_1``) touches the next line and
    reads as an overbar in PNG output.

    >>> _stacked_label("mul_1", ["mul"])
    '<<b>mul_1</b><br/><font point-size="5"> </font><br/><font point-size="10">mul</font>>'
    """
    parts = [f"<b>{html.escape(title)}</b>"]
    details = [f'<font point-size="10">{html.escape(line)}</font>' for line in lines if line]
    if details:
        parts += ['<font point-size="5"> </font>', *details]
    return "<" + "<br/>".join(parts) + ">"


def _category(node: Any) -> str:
    return f"{node.op_name} op" if node.kind == "operation" else node.kind


def add_graph(
    sketch: Sketch,
    order: Sequence[Any],
    allowed: set,
    roots: Sequence[Any],
    show_values: bool,
    cluster: str | None = None,
    reverse: bool = False,
) -> None:
    """Add the nodes of ``allowed`` reachable from ``roots`` to ``sketch``.

    ``reverse`` draws edges in gradient direction (node -> its inputs): the numeric
    backward sweep of ``graph.backward``, when there are no gradient nodes to show.
    """
    output_ids = {id(r) for r in roots if r.kind == "operation"}
    prefix = cluster or ""
    queue: deque = deque()

    def index_of(node: Any) -> int:
        index, created = sketch.add(
            (prefix, id(node)),
            lambda: Item(
                _style(node, output_ids), _describe, (node, show_values), _category(node), cluster
            ),
        )
        if created:
            queue.append((node, index))
        return index

    for root in roots:
        index_of(root)
    while queue:
        node, index = queue.popleft()
        if not reverse:
            _add_inner_graphs(sketch, node, index, show_values, prefix)
        for i, inp in enumerate(node.inputs):
            if inp not in allowed:
                continue
            source = index_of(inp)
            operand = operand_position(getattr(node, "op", None), i, len(node.inputs))
            if reverse:
                sketch.edge(index, source, "grad", operand)
            else:
                sketch.edge(source, index, "data", operand)


def _add_inner_graphs(
    sketch: Sketch, node: Any, index: int, show_values: bool, prefix: str
) -> None:
    """Draw the branches of a cond and the condition and body of a loop as labelled
    clusters, each result joined to the node that uses it (forward part only)."""
    for label, function in static.control_flow.inner_functions(node):
        name = _cluster(
            sketch,
            f"{prefix}{node.name}_{label.replace(' ', '_')}",
            f"{label} of {node.name}",
            "darkorange",
        )
        wanted = _ancestors(function.outputs)
        order = [n for n in function.graph.nodes if n in wanted]
        add_graph(sketch, order, wanted, function.outputs, show_values, cluster=name)
        for output in function.outputs:
            source, _ = sketch.add((name, id(output)), lambda: None)  # drawn just above
            sketch.edge(source, index, "data")


def static_sketch(obj: Any, kind: str | None, show_values: bool = True) -> tuple[Sketch, str]:
    """The sketch (and a default title) for a static graph, node or list of nodes."""
    order, allowed, roots, title = _select(obj, kind)
    sketch = Sketch()
    numeric_backward = kind == "backward" and not any(n.is_gradient for n in allowed)
    add_graph(sketch, order, allowed, roots, show_values, reverse=numeric_backward)
    suffix = {"forward": "forward", "backward": "backward"}.get(kind or "", "")
    if numeric_backward:
        suffix = "backward (numeric sweep: gradients flow down)"
    return sketch, f"{title} {suffix}".strip()


# ----------------------------------------------------------------------------- comparisons


def _cluster(sketch: Sketch, name: str, label: str, color: str) -> str:
    sketch.clusters[name] = dict(label=label, style="rounded", color=color, fontsize="12")
    return name


def _pass_summary(report: Any) -> str:
    parts = [f"{p.name.replace('_', ' ')}: {len(p.changes)}" for p in report.passes if p.changes]
    return ", ".join(parts) if parts else "no changes"


def render_optimization(
    graph: Any,
    fetches: Sequence[Any] | None = None,
    *,
    show_values: bool = True,
    max_nodes: int | None = 500,
    legend: bool = True,
    rankdir: str = "TB",
    backend: str | None = None,
) -> Any:
    """``graph`` before and after ``ns.optimize``, as two clusters of one drawing.

    The drawing's ``.report`` is the :class:`OptimizationReport`; ``.optimized`` the
    new graph.

    >>> import naivegraph.static as ns
    >>> with ns.Graph() as g:
    ...     x = ns.placeholder("x", shape=(3,))
    ...     y = (x * 1.0 + 0.0).sum()
    >>> d = render_optimization(g, fetches=[y])
    >>> "cluster_before" in d.source and "cluster_after" in d.source
    True
    """
    ns = static
    if not isinstance(graph, ns.Graph):
        raise TypeError(
            "render_optimization() draws a static ns.Graph before and after "
            f"ns.optimize; got {type(graph).__name__} (for a dynamic tensor use "
            "ng.render)"
        )
    new_graph, report = ns.optimize(graph, fetches=fetches)
    keep = list(graph.sinks() if fetches is None else [graph.resolve(f) for f in fetches])
    new_roots = [report.mapping[k] for k in keep if k in report.mapping]
    sketch = Sketch()
    before = _cluster(sketch, "before", f"before: {len(graph.nodes)} nodes", "#90a4ae")
    after = _cluster(
        sketch,
        "after",
        f"after ns.optimize: {len(new_graph.nodes)} nodes\n({_pass_summary(report)})",
        "#66bb6a",
    )
    add_graph(sketch, graph.nodes, _ancestors(keep), keep, show_values, cluster=before)
    add_graph(sketch, new_graph.nodes, _ancestors(new_roots), new_roots, show_values, cluster=after)
    from .drawing import new_drawing  # graphviz loads with the first drawing

    drawing = new_drawing(f"{graph.name}: optimisation", rankdir, backend)
    emit(sketch, drawing, max_nodes=max_nodes, legend=legend)
    drawing.report, drawing.optimized = report, new_graph
    return drawing


def _describe_items(obj: Any) -> str:
    if isinstance(obj, (list, tuple)):
        kinds = sorted({type(o).__name__ for o in obj if not isinstance(o, static.Node)})
        return f"a {type(obj).__name__} holding {', '.join(kinds)}"
    return type(obj).__name__


def render_gradient_optimization(
    grads: Sequence[Any],
    *,
    show_values: bool = True,
    max_nodes: int | None = 500,
    legend: bool = True,
    rankdir: str = "TB",
    backend: str | None = None,
) -> Any:
    """The symbolic gradient graph of ``grads`` (from ``ns.gradients``), raw and optimised.

    Raw gradients repeat work (multiplications by ones, sums over broadcast shapes,
    the same product twice); the right cluster shows what ``ns.optimize`` leaves.

    >>> import naivegraph.static as ns
    >>> with ns.Graph() as g:
    ...     x = ns.placeholder("x", shape=())
    ...     dx, = ns.gradients(x * x, [x])
    >>> d = render_gradient_optimization([dx])
    >>> "class=gradient" in d.source
    True
    """
    ns = static
    if isinstance(grads, ns.Node):
        grads = [grads]
    if not isinstance(grads, (list, tuple)) or not all(
        g is None or isinstance(g, ns.Node) for g in grads
    ):
        raise TypeError(
            "render_gradient_optimization() draws the list of gradient nodes "
            f"returned by ns.gradients; got {_describe_items(grads)}"
        )
    grads = [g for g in grads if g is not None]
    if not grads:
        raise ValueError("no gradient nodes to draw (ns.gradients returned only None)")
    graph = grads[0].graph
    new_graph, report = ns.optimize(graph, fetches=grads)
    new_grads = [report.mapping[g] for g in grads]
    sketch = Sketch()
    raw_nodes = _ancestors(grads)
    new_nodes = _ancestors(new_grads)
    raw = _cluster(sketch, "raw", f"raw symbolic gradients: {len(raw_nodes)} nodes", "#ba68c8")
    opt = _cluster(
        sketch,
        "optimized",
        f"after ns.optimize: {len(new_nodes)} nodes\n({_pass_summary(report)})",
        "#66bb6a",
    )
    add_graph(sketch, graph.nodes, raw_nodes, grads, show_values, cluster=raw)
    add_graph(sketch, new_graph.nodes, new_nodes, new_grads, show_values, cluster=opt)
    from .drawing import new_drawing  # graphviz loads with the first drawing

    drawing = new_drawing(
        "symbolic gradient graph, before and after optimisation", rankdir, backend
    )
    emit(sketch, drawing, max_nodes=max_nodes, legend=legend)
    drawing.report, drawing.optimized = report, new_graph
    return drawing


# ----------------------------------------------------------------------------- details
# What the details panel of an interactive view shows when a node is clicked
# (registered in dot.DETAILS; see naivegraph/render/interactive.py).

#: graph -> (graph.version, {operation: (step computing it, step of its last read)})
_spans: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def life_spans(graph: Any) -> dict:
    """The memory plan of a whole-graph run, per operation: ``(k, last)``, the step
    (1-based, in execution order) computing it and the last step reading it (``k`` when
    nothing reads it).  A run that frees intermediates frees each one after ``last``."""
    cached = _spans.get(graph)
    if cached is not None and cached[0] == graph.version:
        return cached[1]
    ops = [
        n for n in static.executor.without_updates(graph.nodes) if isinstance(n, static.Operation)
    ]
    step = {node: k for k, node in enumerate(ops, 1)}
    spans = {node: [k, k] for node, k in step.items()}
    for node in ops:
        for inp in node.inputs:
            if inp in spans:
                spans[inp][1] = max(spans[inp][1], step[node])
    result = {node: tuple(span) for node, span in spans.items()}
    _spans[graph] = (graph.version, result)
    return result


def _details(item: Item) -> dict:
    node, _ = item.payload
    rows = [["kind", node.kind], ["op", node.op_name], ["shape", format_shape(node.shape)]]
    dtype = getattr(node, "dtype", None)
    if dtype is not None:
        rows.append(["dtype", str(dtype)])
    if node.inputs:
        rows.append(["inputs", ", ".join(i.name for i in node.inputs)])
    graph = node.graph
    span = life_spans(graph).get(node) if graph is not None else None
    value = node.value
    if value is not None:
        rows.append(["value (last run)", summarize(value)])
    elif span is not None and graph is not None and node in graph.last_run.shapes:
        rows.append(["value (last run)", f"freed after step {span[1]} (memory plan)"])
    elif node.kind == "operation":
        rows.append(["value", "not computed yet: run graph.forward(...)"])
    if span is not None:
        first, last = span
        rows.append(
            ["life span", f"computed at step {first}, last read at step {last}"]
            if last > first
            else ["life span", f"computed at step {first}, read by no later step"]
        )
    if node.grad is not None:
        rows.append([".grad", summarize(node.grad)])
    if node.kind == "variable":
        rows.append(["trainable", str(getattr(node, "trainable", True))])
    return {"title": node.name, "rows": rows}


DETAILS[_describe] = _details
