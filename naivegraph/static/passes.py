"""Whole-graph optimisation passes: each one is a pure function ``Graph -> Graph``.

A pass never edits its input.  It copies the graph node by node (creation order is
topological, so every input is copied before its users) and may replace a node by
another one on the way.  The new graph remembers where it came from in
``new_graph.lineage``: the ``source`` graph, the ``mapping`` from old nodes to new
ones (removed nodes are absent) and the ``changes`` it made.  Copied nodes keep
their names, so a report can speak about the graph the user built.

``keep`` (the fetches) is protected everywhere: never removed, never merged into
another node.  Variables are copied as views of the same storage, so ``assign`` on
the original is seen by the optimised graph.

The symbolic gradient of ``y = x**2`` shows the passes at work: the raw rule
``g * 2 * x ** (2 - 1)`` shrinks to ``2.0 * x``.

>>> import naivegraph.static as ns
>>> with ns.Graph() as g:
...     x = ns.placeholder("x", shape=())
...     dx, = ns.gradients(x ** 2, [x])
>>> ns.expression(dx)
'(1.0 * 2) * (x ** 1)'
>>> small, report = ns.optimize(g, fetches=[dx])
>>> ns.expression(report.mapping[dx]), len(g.nodes), len(small.nodes)
('2.0 * x', 7, 3)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence, cast

import numpy as np

from ..ops import OpDef
from ..ops.shapes import broadcast_shapes
from .executor import _step_function, ancestors
from .graph import Graph
from .nodes import Constant, Node, Operation, Placeholder, Variable


# -------------------------------------------------------------------------- copying
@dataclass
class Lineage:
    """How a graph made by a pass relates to its source graph."""

    source: Graph
    mapping: dict
    changes: list[str]
    pass_name: str


def copy_node(node: Node, inputs: Sequence[Node], graph: Graph) -> Node:
    """A copy of ``node`` in ``graph`` with the given (already copied) inputs, same name."""
    new: Node
    if isinstance(node, Variable):
        new = object.__new__(Variable)
        Node.__init__(new, "variable", (), node.shape, node.dtype)
        new.trainable, new._state = node.trainable, node._state  # shared storage
    elif isinstance(node, Constant):
        new = Constant(node.value, copy=False)  # constants never change: share
    elif isinstance(node, Placeholder):
        new = Placeholder("placeholder", (), node.shape, node.dtype)
    else:
        new = Operation(node.op, inputs, node.shape, node.dtype, node.attrs)
    new.retains_grad = node.retains_grad
    graph._register(new, node.name, node.kind)
    new.is_gradient, new.built_at = node.is_gradient, node.built_at
    return new


SKIP = object()  # a visitor's answer: "this node does not exist in the new graph"

Visitor = Callable[[Node, list, Graph, list], Any]


def rewrite(
    graph: Graph,
    visit: Visitor,
    pass_name: str,
    nodes: Iterable[Node] | None = None,
    always_visit: Iterable[Node] = (),
) -> Graph:
    """Copy ``graph`` (or only ``nodes`` of it), letting ``visit`` replace nodes.

    ``visit(node, new_inputs, new_graph, changes)`` returns a node of the new graph to
    stand for ``node``, ``SKIP`` to drop it, or None to copy it unchanged.  A node
    whose input was dropped is dropped too, unless it is in ``always_visit`` (a fused
    node replaces its dropped members).
    """
    always_visit = set(always_visit)
    selected = None if nodes is None else set(nodes)
    new = Graph(name=graph.name)
    # new nodes must not steal names of nodes copied later
    new._reserved = {n.name for n in graph.nodes}
    mapping: dict[Node, Node] = {}
    changes: list[str] = []
    for node in graph.nodes:
        if selected is not None and node not in selected:
            continue
        inputs = [mapping[i] for i in node.inputs if i in mapping]
        complete = len(inputs) == len(node.inputs)
        result = visit(node, inputs, new, changes) if complete or node in always_visit else SKIP
        if result is SKIP:
            continue
        mapping[node] = copy_node(node, inputs, new) if result is None else cast(Node, result)
    new.lineage = Lineage(graph, mapping, changes, pass_name)
    return new


def _keep(graph: Graph, keep: Iterable[Node] | None) -> set[Node]:
    return set(graph.sinks() if keep is None else keep)


def _is_pure(node: Node) -> bool:
    """Same inputs give the same output: no randomness, no state (never merged or folded)."""
    op = node.op
    return isinstance(node, Operation) and not op.stateful


# -------------------------------------------------------------------------- constant folding
def constant_folding(graph: Graph, keep: Iterable[Node] | None = None) -> Graph:
    """Compute every op whose inputs are all constants once, now, and store the result.

    >>> import naivegraph.static as ns
    >>> with ns.Graph() as g:
    ...     y = ns.constant(2.0) * 3.0
    >>> new = constant_folding(g)
    >>> new.lineage.changes
    ['mul_1 -> constant 6.0']
    >>> [n.name for n in dead_node_elimination(new, keep=[new.lineage.mapping[y]]).nodes]
    ['mul_1']
    """

    def visit(node, inputs, new, changes):
        if not (_is_pure(node) and inputs and all(isinstance(i, Constant) for i in inputs)):
            return None
        with np.errstate(all="ignore"):
            value = node.op.forward(*node.args_for([i.value for i in inputs]), **node.attrs)
        folded = Constant(value, copy=False)
        new._register(folded, node.name, "const")
        folded.is_gradient, folded.built_at = node.is_gradient, node.built_at
        changes.append(f"{node.name} -> constant {_short(value)}")
        return folded

    return rewrite(graph, visit, "constant_folding")


def _short(value: Any) -> str:
    array = np.asarray(value)
    return repr(array.item()) if array.size == 1 else f"array{array.shape}"


# -------------------------------------------------------------------------- CSE
def _freeze(value: Any) -> Any:
    """A hashable key for an attribute value (arrays by content); TypeError if impossible.

    Floats compare by bit pattern: ``0.0 == -0.0`` in Python, but ``1 / 0.0`` and
    ``1 / -0.0`` differ, and NaN (never equal to itself) still matches its own bits.
    """
    if type(value) in (float, complex):
        return (type(value).__name__, np.array(value).tobytes())
    if isinstance(value, np.generic):
        return ("generic", value.dtype.str, value.tobytes())
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, slice):
        return ("slice", _freeze(value.start), _freeze(value.stop), _freeze(value.step))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__,) + tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return ("dict",) + tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    hash(value)
    return (type(value).__name__, value)


def _cse_key(node: Node, inputs: Sequence[Node]) -> Any:
    try:
        if isinstance(node, Constant):
            return (
                "constant",
                _freeze(node.value)
                if not isinstance(node.value, np.generic)
                else _freeze(np.asarray(node.value)) + ("scalar",),
            )
        if _is_pure(node):
            return (node.op, tuple(inputs), _freeze(node.attrs))
    except TypeError:
        pass
    return None  # placeholders, variables, stateful ops and unhashable attributes stay apart


def common_subexpression_elimination(graph: Graph, keep: Iterable[Node] | None = None) -> Graph:
    """Compute identical expressions once: same op, same inputs, same attributes.

    Placeholders and Variables are never merged (two placeholders are two different
    inputs even if they look alike), nor are random or stateful ops, and a fetched
    node is never replaced by another one.
    """
    protected = _keep(graph, keep)
    seen: dict[Any, Node] = {}

    def visit(node, inputs, new, changes):
        key = _cse_key(node, inputs)
        if key is None:
            return None
        if key in seen and node not in protected:
            # a folded node keeps its name: say it is now a constant equal to another
            same = "equal constants: " if isinstance(node, Constant) else ""
            changes.append(f"{same}{node.name} == {seen[key].name}")
            return seen[key]
        copy = copy_node(node, inputs, new)
        seen.setdefault(key, copy)
        return copy

    return rewrite(graph, visit, "common_subexpression_elimination")


# -------------------------------------------------------------------------- dead nodes
def dead_node_elimination(graph: Graph, keep: Iterable[Node] | None = None) -> Graph:
    """Drop every node the kept nodes (default: the graph's sinks) do not depend on."""
    live = ancestors(_keep(graph, keep))
    dead = [n.name for n in graph.nodes if n not in live]
    new = rewrite(graph, lambda *args: None, "dead_node_elimination", nodes=live)
    new.lineage.changes.extend(f"removed {name}" for name in dead)
    return new


# -------------------------------------------------------------------------- algebra
def _constant_equal(node: Node, number: float, negative_zero: bool | None = None) -> bool:
    """``node`` is a constant whose every element equals ``number``.

    ``negative_zero`` (True/False) also asks every float zero to have that sign:
    ``x + 0.0`` turns ``-0.0`` into ``0.0``, while ``x + (-0.0)`` is exactly ``x``.
    """
    if not isinstance(node, Constant):
        return False
    value = np.asarray(node.value)
    if value.size == 0 or value.dtype == object or not bool(np.all(value == number)):
        return False
    if negative_zero is None:
        return True
    if value.dtype.kind not in "fc":
        return not negative_zero  # an integer 0 acts as +0.0 on floats
    return bool(np.all(np.signbit(value.real) == negative_zero))


def _is_exact(x: Node) -> bool:
    """Integers and booleans have no -0.0, NaN or inf: every identity holds for them."""
    return x.dtype is not None and x.dtype.kind in "biu"


def _same_shape_and_dtype(candidate: Node, node: Node) -> bool:
    """Replacing ``node`` by ``candidate`` must not change the result's shape or dtype."""
    return (
        candidate.shape is not None
        and None not in candidate.shape
        and candidate.shape == node.shape
        and candidate.dtype == node.dtype
    )


def _identity_operand(node: Operation, inputs: Sequence[Node]) -> tuple[Node, str] | None:
    """The input ``node`` always equals bit for bit (shape and dtype aside), and the rule.

    IEEE arithmetic decides: ``x * 1``, ``x / 1`` and ``x - 0.0`` are exact for every x
    (NaN, inf and -0.0 included), but ``x + 0.0`` is ``0.0`` at ``x = -0.0``, so only
    ``x + (-0.0)`` is dropped, unless x is an integer or boolean.
    """
    name = node.op.name
    if any(i.dtype is not None and i.dtype.kind == "c" for i in inputs):
        # complex arithmetic mixes parts: (inf+1j) * 1 has a nan real part
        return _structural_identity(node, inputs)
    if name == "mul" and len(inputs) == 2:
        for this, other in ((0, 1), (1, 0)):
            if _constant_equal(inputs[this], 1.0):
                return inputs[other], "x * 1 -> x"
    if name == "add" and len(inputs) == 2:
        for this, other in ((0, 1), (1, 0)):
            zero_sign = None if _is_exact(inputs[other]) else True
            if _constant_equal(inputs[this], 0.0, negative_zero=zero_sign):
                return inputs[other], "x + 0 -> x" if zero_sign is None else "x + (-0.0) -> x"
    if name == "sub" and _constant_equal(
        inputs[1], 0.0, negative_zero=None if _is_exact(inputs[0]) else False
    ):
        return inputs[0], "x - 0 -> x"
    if name == "div" and _constant_equal(inputs[1], 1.0):
        return inputs[0], "x / 1 -> x"
    return _structural_identity(node, inputs)


def _structural_identity(node: Operation, inputs: Sequence[Node]) -> tuple[Node, str] | None:
    """Rules exact for every dtype: x ** 1, -(-x) and reshapes to the same shape."""
    name = node.op.name
    if name == "pow_scalar" and node.attrs.get("exponent") == 1:
        return inputs[0], "x ** 1 -> x"
    if name == "neg" and isinstance(inputs[0], Operation) and inputs[0].op.name == "neg":
        return inputs[0].inputs[0], "-(-x) -> x"
    if (
        name in ("reshape", "expand", "sum_to")
        and inputs[0].shape is not None
        and tuple(node.attrs.get("shape", ())) == inputs[0].shape
    ):
        return inputs[0], f"{name} to the same shape -> x"
    return None


def algebraic_simplification(
    graph: Graph, keep: Iterable[Node] | None = None, assume_finite: bool = False
) -> Graph:
    """Apply identities that hold bit for bit: x*1, 1*x, x+(-0.0), x-0.0, x/1, x**1,
    -(-x), no-op reshapes (and x+0, x-0 for integer x).

    An identity is applied only when the result keeps its shape and dtype
    (``x * ones((3, 2))`` broadcasts a ``(2,)`` x, so it stays).  ``x + 0.0`` stays:
    at ``x = -0.0`` it is ``+0.0`` (and ``1 / (x + 0.0)`` is ``inf``, not ``-inf``).
    ``x * 0 -> 0`` is applied to integer and boolean x, and to floats only with
    ``assume_finite`` (which also gives up the sign of zero): ``inf * 0`` is ``nan``
    and ``-1.0 * 0`` is ``-0.0``.  ``x ** 2`` is left alone: numpy already computes it
    as ``x * x``.
    """

    def visit(node, inputs, new, changes):
        if not isinstance(node, Operation):
            return None
        found = _identity_operand(node, inputs)
        if found is not None and _same_shape_and_dtype(found[0], node):
            changes.append(f"{node.name}: {found[1]} ({found[0].name})")
            return found[0]
        if node.op.name == "mul" and node.shape is not None and None not in node.shape:
            for this, other in ((0, 1), (1, 0)):
                x = inputs[other]
                safe = x.dtype is not None and (assume_finite or x.dtype.kind in "biu")
                if _constant_equal(inputs[this], 0.0) and safe:
                    zeros = Constant(np.zeros(node.shape, dtype=node.dtype))
                    new._register(zeros, node.name, "const")
                    zeros.built_at = node.built_at
                    changes.append(f"{node.name}: x * 0 -> zeros{node.shape}")
                    return zeros
        return None

    return rewrite(graph, visit, "algebraic_simplification")


# -------------------------------------------------------------------------- fusion
@dataclass(frozen=True, eq=False)
class FusedOpDef(OpDef):
    """A chain of elementwise ops run as one step; inference only (no gradient rule)."""

    members: tuple = ()
    inference_only: bool = True


def _fusable(node: Node) -> bool:
    if not (
        _is_pure(node) and node.op.elementwise and not getattr(node.op, "inference_only", False)
    ):
        return False
    shapes: list[Any] = [i.shape for i in node.inputs]
    if node.shape is None or any(s is None or None in s for s in shapes):
        return False
    try:  # really shape-preserving (mse_loss broadcasts, then reduces)
        return broadcast_shapes(*shapes) == node.shape
    except ValueError:
        return False


def _fused_program(members: Sequence[Operation], external: Sequence[Node]):
    """A numpy function running ``members`` in order, reusing buffers it owns."""
    position = {n: i for i, n in enumerate(external)}
    index: dict[Node, int] = {n: len(external) + k for k, n in enumerate(members)}
    last_use: dict[Node, Operation] = {}
    for m in members:
        for inp in m.inputs:
            last_use[inp] = m
    steps = []
    for m in members:
        refs = tuple(position[i] if i in position else index[i] for i in m.inputs)
        frees = tuple(sorted({index[i] for i in m.inputs if i in index and last_use[i] is m}))
        # A buffer produced inside the chain, read for the last time here, with the
        # output's shape and dtype, can take the output: a ufunc writes in place.
        reuse = None
        if getattr(m.op.forward, "ufunc", None) is not None and not m.attrs:  # takes out=
            reuse = next(
                (
                    index[i]
                    for i in m.inputs
                    if index.get(i) in frees and i.shape == m.shape and i.dtype == m.dtype
                ),
                None,
            )
        steps.append((_step_function(m), m.op.forward, refs, index[m], frees, reuse))
    result = index[members[-1]]
    size = len(external) + len(members)

    def forward(*inputs):
        values = list(inputs) + [None] * (size - len(inputs))
        for fn, ufunc, refs, out, frees, reuse in steps:
            args = [values[r] for r in refs]
            buffer = values[reuse] if reuse is not None else None
            if type(buffer) is np.ndarray and buffer.flags.writeable:
                values[out] = ufunc(*args, out=buffer)
            else:
                values[out] = fn(*args)
            for slot in frees:
                if slot != out:
                    values[slot] = None
        return values[result]

    # The fast layer (naivegraph.fast.fastrun) writes the members out one line each.
    forward.program = (steps, len(external), result)  # type: ignore[attr-defined]
    return forward


def elementwise_fusion(graph: Graph, keep: Iterable[Node] | None = None) -> Graph:
    """Merge single-consumer chains (trees) of elementwise ops into one fused node.

    The fused node runs the members' numpy forwards in sequence, keeps no
    intermediate outside the step, and lets ufuncs write into a buffer the chain no
    longer needs.  It has no gradient rule: fusion is an inference pass.  Build
    gradients with ``ns.gradients`` first (``compile(optimize=True)`` then fuses the
    forward and the gradient nodes alike); ``graph.backward`` through a fused node
    raises an error that says so.
    """
    protected = _keep(graph, keep)
    users = graph.consumers()

    def absorbed(node: Node) -> bool:
        return (
            _fusable(node)
            and node not in protected
            and len(users[node]) == 1
            and _fusable(users[node][0])
        )

    order = {n: i for i, n in enumerate(graph.nodes)}
    groups: dict[Node, list[Node]] = {}
    for root in graph.nodes:
        if not _fusable(root) or absorbed(root):
            continue
        members, todo = {root}, [root]
        while todo:
            for inp in todo.pop().inputs:
                if inp not in members and absorbed(inp):
                    members.add(inp)
                    todo.append(inp)
        if len(members) > 1:
            groups[root] = sorted(members, key=order.__getitem__)
    in_group = {m for ms in groups.values() for m in ms}

    def visit(node, inputs, new, changes):
        if node in groups:
            members = groups[node]
            inside = set(members)
            external = []
            for m in members:
                for i in m.inputs:
                    if i not in inside and i not in external:
                        external.append(i)
            names = tuple(m.name for m in members)
            op = FusedOpDef(
                name="fused[" + ">".join(m.op.name for m in members) + "]",
                forward=_fused_program(members, external),
                partials=None,
                backward_name="FusedBackward",
                differentiable=False,
                members=names,
            )
            fused = Operation(op, [new_of[e] for e in external], node.shape, node.dtype)
            new._register(fused, None, "fused")
            fused.is_gradient, fused.built_at = node.is_gradient, node.built_at
            changes.append(f"{fused.name} = {' > '.join(names)}")
            return fused
        if node in in_group:
            return SKIP
        return None

    # The visitor needs old -> new for external inputs; rewrite builds that mapping as
    # it goes, so read it through a small proxy filled in by a wrapping visitor.
    new_of: dict[Node, Node] = {}

    def recording_visit(node, inputs, new, changes):
        result = visit(node, inputs, new, changes)
        if result is None:
            result = copy_node(node, inputs, new)
        if result is not SKIP:
            new_of[node] = result
        return result

    return rewrite(graph, recording_visit, "elementwise_fusion", always_visit=groups)


# -------------------------------------------------------------------------- driver
@dataclass
class PassReport:
    """What one pass changed over all its runs.

    ``nodes_before`` is the node count before its first run, ``nodes_after`` after its
    last; the passes interleave, so those do not chain from one pass to the next.
    ``removed`` counts only the nodes this pass's own runs took out: the ``removed`` of
    all passes add up to the whole reduction.
    """

    name: str
    changes: list[str] = field(default_factory=list)
    nodes_before: int = 0
    nodes_after: int = 0
    removed: int = 0


@dataclass
class OptimizationReport:
    """The outcome of :func:`optimize`: per-pass changes and old -> new node mapping."""

    source: Graph
    result: Graph
    passes: list[PassReport]
    mapping: dict  # node of the source graph -> node of the result (survivors only)

    def lookup(self, node: Node) -> Node:
        """The node of the optimised graph that computes what ``node`` computed."""
        if node not in self.mapping:
            raise KeyError(
                f"{node.name!r} has no counterpart in the optimised graph: it was "
                f"not needed by the fetches (pass it in fetches to keep it)"
            )
        return self.mapping[node]

    @property
    def total_changes(self) -> int:
        return sum(len(p.changes) for p in self.passes)

    def __str__(self) -> str:
        lines = [
            f"optimize {self.source.name}: {len(self.source.nodes)} nodes -> "
            f"{len(self.result.nodes)} nodes"
        ]
        for p in self.passes:
            lines.append(
                f"  {p.name:<34} {len(p.changes):>3} change(s)  {p.removed:>3} node(s) removed"
            )
            lines.extend(f"      {c}" for c in p.changes[:12])
            if len(p.changes) > 12:
                lines.append(f"      ... and {len(p.changes) - 12} more")
        return "\n".join(lines)


Pass = Callable[..., Graph]
REPEATED_PASSES: tuple[Pass, ...] = (
    constant_folding,
    algebraic_simplification,
    common_subexpression_elimination,
)
FINAL_PASSES: tuple[Pass, ...] = (dead_node_elimination, elementwise_fusion)


def optimize(
    graph: Graph, passes: Sequence[Pass] | None = None, fetches: Sequence[Node] | None = None
) -> tuple[Graph, OptimizationReport]:
    """Run optimisation passes; return ``(new_graph, report)``.

    By default folding, simplification and CSE repeat until nothing changes (one
    pass can expose work for another), then dead nodes are removed and elementwise
    chains fused.  With ``passes`` those run once each, in order.  ``fetches``
    (default: the graph's sinks) are kept; ``report.mapping[old]`` finds them.

    >>> import naivegraph.static as ns
    >>> with ns.Graph() as g:
    ...     x = ns.placeholder("x", shape=(3,))
    ...     y = (x * 1.0 - 0.0).sum()
    >>> new, report = ns.optimize(g, fetches=[y])
    >>> ns.expression(report.mapping[y])
    'sum(x, dim=None, keepdim=False)'
    """
    keep = list(graph.sinks() if fetches is None else [graph.resolve(f) for f in fetches])
    mapping = {n: n for n in graph.nodes}
    reports: dict[str, PassReport] = {}
    current = graph

    def run(pass_fn: Pass) -> bool:
        nonlocal current, keep, mapping
        new = pass_fn(current, keep=keep)
        lineage = new.lineage
        report = reports.setdefault(
            pass_fn.__name__, PassReport(pass_fn.__name__, nodes_before=len(current.nodes))
        )
        report.changes.extend(lineage.changes)
        report.nodes_after = len(new.nodes)
        report.removed += len(current.nodes) - len(new.nodes)
        keep = [lineage.mapping[k] for k in keep]
        mapping = {old: lineage.mapping[n] for old, n in mapping.items() if n in lineage.mapping}
        current = new
        return bool(lineage.changes)

    if passes is not None:
        for pass_fn in passes:
            run(pass_fn)
    else:
        for _ in range(10):
            changed = [run(p) for p in REPEATED_PASSES]
            if not any(changed):
                break
        for pass_fn in FINAL_PASSES:
            run(pass_fn)
    return current, OptimizationReport(graph, current, list(reports.values()), mapping)
