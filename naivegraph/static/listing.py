"""Static graphs as text: an SSA listing, one line per node, as a jaxpr or a torch.fx
graph prints.

Every node defines one name, ``%name``, once; an op reads names defined above it::

    %mul_1 = mul %input %w1                : (2, 2) float64

The inputs (placeholders, then Variables) come first, then the constants and ops in
creation order (a topological order), then ``return`` names the outputs.  A constant
shows its value when it is small; a size the graph does not know is ``?`` (a
placeholder's ``None``), and so is a rank it does not know.  A ``cond`` or
``while_loop`` node is followed by its inner graphs, indented, each listed the same
way.  A compiled function's listing (:meth:`CompiledFunction.listing`) numbers the
steps of its plan and says after which step each value is freed.

>>> import numpy as np, naivegraph.static as ns
>>> with ns.Graph("tiny") as g:
...     x = ns.placeholder("x", shape=(None, 2), dtype=np.float64)
...     y = (x * np.float64(3.0)).sum()
>>> print(g)
graph tiny:
  %x = placeholder          : (?, 2) float64
  %const_1 = constant 3.0   : () float64
  %mul_1 = mul %x %const_1  : (?, 2) float64
  %sum_1 = sum %mul_1       : () float64
  return %sum_1
"""

from __future__ import annotations

import inspect
from typing import Any, Sequence

import numpy as np

from .control_flow import GraphOp, inner_functions
from .executor import CompiledFunction, topological_order
from .graph import Graph
from .nodes import Constant, Node, Operation, Placeholder, Variable

#: Constants with at most this many elements are listed with their value.
SMALL = 6
#: The ``: type`` column starts after the longest line up to this width.
ALIGN = 48
# Attributes shown elsewhere (inner graphs) or internal (the result types of a tuple).
_HIDDEN_ATTRS = {"meta", "branches", "loop"}


# -------------------------------------------------------------------------- public
def graph_listing(
    graph: Graph,
    outputs: Sequence[Node] | None = None,
    inputs: Sequence[Node | None] | None = None,
) -> str:
    """The listing of ``graph``: every node, or only what ``outputs`` need.

    ``outputs`` default to the graph's sinks (nodes nothing uses); ``inputs`` (the
    placeholders, in order) to the graph's own.
    """
    nodes = graph.nodes if outputs is None else topological_order(graph, outputs)
    outs = graph.sinks() if outputs is None else list(outputs)
    rows = _block(nodes, inputs, outs, depth=1)
    return _render([(f"graph {graph.name}:", None)] + rows)


def plan_listing(compiled: CompiledFunction) -> str:
    """The plan of a :class:`~naivegraph.static.executor.CompiledFunction`: its leaves,
    then each step, numbered, with the values freed once it ran."""
    plan, graph = compiled.plan, compiled.graph
    outputs = list(compiled.outputs)
    inputs = [p for p in compiled.inputs if p is not None]
    frees = {}
    for _, _, out, freed in plan.steps:
        frees[plan.order[out]] = [plan.order[slot] for slot in freed]
    title = (
        f"compiled ({', '.join('%' + p.name for p in inputs)}) -> "
        f"({', '.join('%' + o.name for o in outputs)}), {len(plan.steps)} steps "
        f"on graph {graph.name}"
    )
    if compiled.report is not None:
        before = len(compiled.report.source.nodes)
        title += f" (ns.optimize: {before} -> {len(graph.nodes)} nodes)"
    rows: list[tuple[str, str | None]] = []
    step = 0
    for node, text, kind in _lines(plan.order, inputs):
        if isinstance(node, Operation):
            step += 1
            freed = frees.get(node, [])
            note = f"  free {' '.join('%' + n.name for n in freed)}" if freed else ""
            rows.append((f"  {step:>3} {text}", kind + note))
            rows.extend(_inner(node, depth=4))  # under the step's text, which is 6 in
        else:
            rows.append((f"      {text}", kind))
    returned = "  " + _returned(outputs)
    if compiled.updates:
        returned += "; updates " + ", ".join("%" + u.name for u in compiled.updates)
    rows.append((returned, None))
    return _render([(title + ":", None)] + rows)


# -------------------------------------------------------------------------- blocks
def _block(
    nodes: Sequence[Node],
    inputs: Sequence[Node | None] | None,
    outputs: Sequence[Node],
    depth: int,
) -> list[tuple[str, str | None]]:
    """The rows of one graph (or inner graph) at ``depth`` levels of indentation."""
    pad = "  " * depth
    rows: list[tuple[str, str | None]] = []
    for node, text, kind in _lines(nodes, inputs):
        rows.append((pad + text, kind))
        rows.extend(_inner(node, depth + 1))
    rows.append((pad + _returned(outputs), None))
    return rows


def _lines(
    nodes: Sequence[Node], inputs: Sequence[Node | None] | None
) -> list[tuple[Node, str, str]]:
    """(node, ``%name = op operands``, type) per node: placeholders (in the order of
    ``inputs`` when given) and Variables first, the rest in the order given."""
    placeholders = [n for n in nodes if isinstance(n, Placeholder)]
    if inputs is not None:
        present = set(placeholders)
        given = [p for p in inputs if p is not None and p in present]
        placeholders = given + [p for p in placeholders if p not in given]
    leaves = placeholders + [n for n in nodes if isinstance(n, Variable)]
    chosen = set(leaves)
    ordered = leaves + [n for n in nodes if n not in chosen]
    defaults: dict[int, dict[str, Any]] = {}  # per op, for this listing (ops stay alive)
    return [(n, f"%{n.name} = {_definition(n, defaults)}", _type(n)) for n in ordered]


def _inner(node: Node, depth: int) -> list[tuple[str, str | None]]:
    """The inner graphs a cond or while_loop node runs, indented under it."""

    rows: list[tuple[str, str | None]] = []
    for label, function in inner_functions(node):
        outputs = list(function.outputs)
        rows.append(("  " * depth + f"{label}:", None))
        # The function's inputs are listed even when its outputs do not read them: they
        # are fed, in order, by the node's operands.
        used = [p for p in function.inputs if p is not None]
        fed = set(used)
        nodes = used + [n for n in topological_order(function.graph, outputs) if n not in fed]
        rows.extend(_block(nodes, function.inputs, outputs, depth + 1))
    return rows


def _returned(outputs: Sequence[Node]) -> str:
    return " ".join(["return", ", ".join("%" + o.name for o in outputs)]).rstrip()


# -------------------------------------------------------------------------- one node
def _definition(node: Node, known_defaults: dict[int, dict[str, Any]]) -> str:
    """What a node computes: its op, then its operands and attributes."""
    if isinstance(node, Placeholder):
        return "placeholder"
    if isinstance(node, Variable):
        return "variable" if node.trainable else "variable trainable=False"
    if isinstance(node, Constant):
        value = node.value
        return "constant " + (_value_text(value) if np.size(value) <= SMALL else "<array>")
    operands = " ".join("%" + i.name for i in node.inputs)
    defaults = known_defaults.get(id(node.op))
    if defaults is None:
        defaults = known_defaults[id(node.op)] = _defaults(node.op)
    attrs = " ".join(
        f"{k}={_attr_text(v)}"
        for k, v in node.attrs.items()
        if k not in _HIDDEN_ATTRS and not _is_default(defaults, k, v)
    )
    return " ".join(part for part in (node.op_name, operands, attrs) if part)


def _defaults(op: Any) -> dict[str, Any]:
    """The keyword defaults of an op's forward: an attribute left at its default (a
    sum's ``dim=None``) is not listed."""
    try:
        parameters = inspect.signature(op.forward).parameters.values()
    except (AttributeError, TypeError, ValueError):
        return {}
    return {p.name: p.default for p in parameters if p.default is not inspect.Parameter.empty}


def _is_default(defaults: dict[str, Any], key: str, value: Any) -> bool:
    if key not in defaults:
        return False
    default = defaults[key]
    try:
        return type(value) is type(default) and bool(value == default)
    except Exception:  # values that do not compare as a bool (arrays) are shown
        return False


def _type(node: Node) -> str:
    """``(2, ?) float64``; a tuple-valued node (cond, while_loop) lists its results."""
    if node.shape is None and node.dtype is None and isinstance(node, Operation):
        meta = node.attrs.get("meta")
        if meta is not None:
            return "tuple(" + ", ".join(_shape_dtype(s, d) for s, d in meta) + ")"
        if isinstance(node.op, GraphOp):  # a loop's gradient: a tuple
            return "tuple"
    return _shape_dtype(node.shape, node.dtype)


def _shape_dtype(shape: tuple | None, dtype: Any) -> str:
    if shape is None and dtype is None:
        return "?"
    return f"{_shape_text(shape)} {'?' if dtype is None else np.dtype(dtype).name}"


def _shape_text(shape: tuple | None) -> str:
    if shape is None:
        return "?"
    sizes = ["?" if d is None else str(d) for d in shape]
    return f"({sizes[0]},)" if len(sizes) == 1 else f"({', '.join(sizes)})"


def _value_text(value: Any) -> str:
    """A small value as a literal: ``3.0``, ``2``, ``[1.0, 2.5]``, ``True``."""
    if type(value) in (int, float, bool, complex):
        return repr(value)
    array = np.asarray(value)
    if array.ndim == 0:
        return str(array[()])
    return "[" + ", ".join(_value_text(row) for row in array) + "]"


def _attr_text(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_attr_text(v) for v in value)
        if isinstance(value, list):
            return f"[{inner}]"
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if value is None or isinstance(value, (bool, int, float, str, np.generic)):
        return _value_text(value) if isinstance(value, np.generic) else repr(value)
    if isinstance(value, np.ndarray) and value.size <= SMALL:
        return _value_text(value)
    if isinstance(value, slice):  # as written in an index: 1:, ::2
        parts = ["" if v is None else str(v) for v in (value.start, value.stop, value.step)]
        return ":".join(parts if value.step is not None else parts[:2])
    if value is Ellipsis:
        return "..."
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return np.dtype(value).name
    return f"<{type(value).__name__}>"


# -------------------------------------------------------------------------- layout
def _render(rows: list[tuple[str, str | None]]) -> str:
    """Rows of (text, type or None), the types in one column after the texts."""
    typed = [len(text) for text, kind in rows if kind is not None and len(text) <= ALIGN]
    column = max(typed, default=0)
    lines = []
    for text, kind in rows:
        if kind is None:
            lines.append(text)
        else:
            lines.append(f"{text.ljust(column)}  : {kind}")
    return "\n".join(lines)
