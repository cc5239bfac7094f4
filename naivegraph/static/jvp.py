"""``ns.jvp``: forward-mode derivatives (Jacobian-vector products) of a static graph.

One forward sweep in topological order gives each node the tangent that
:func:`naivegraph.ops.forward.jvp` derives from the op table, as new nodes of the graph:
the same derivation as dynamic forward mode (``ng.autograd.forward_ad``), applied to
nodes instead of tensors.  Why a sweep rather than ``ns.gradients`` twice (the transpose
trick): the sweep adds about one node per op for all the ``ys`` at once, while the
trick adds a whole backward pass per ``y`` and then the backward pass of that, and its
graph keeps a dummy cotangent alive.  Only the few ops the table leaves unclassified
(softmax, the losses, max/min, addmm) use the trick, locally: ``ns.gradients`` of one
node's rule.

Unknown sizes (``None`` in a placeholder's shape) work as in ``ns.gradients``: the rules
read them from the values when the graph runs.

>>> import numpy as np, naivegraph.static as ns
>>> with ns.Graph() as g:
...     x = ns.placeholder("x", shape=(None, 2))
...     y = ns.sin(x) * x
...     (dy,) = ns.jvp(y, [x], [1.0])  # a number: that tangent everywhere
>>> g.compile([x], [dy])(np.array([[0.0, 1.0]]))[0]
array([[0.       , 1.3817732]], dtype=float32)
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..ops import OPS
from ..ops.core import refuse_complex_nodes
from ..ops.forward import jvp as _jvp_of
from .executor import topological_order
from .gradients import flowing, gradients
from .graph import graph_of
from .nodes import Constant, Node, Operation, numeric_data


def jvp(ys: Node | Sequence[Node], xs: Node | Sequence[Node], tangents: Any) -> list[Node]:
    """Add d ys along ``tangents`` (one per x: nodes or numbers/arrays) to the graph:
    ``J @ tangents`` for each y, as new nodes; a y that does not depend on the xs gets
    zeros.  The forward-mode twin of :func:`ns.gradients <naivegraph.static.gradients>`
    and of ``torch.func.jvp``.

    >>> import numpy as np, naivegraph.static as ns
    >>> with ns.Graph() as g:
    ...     a, b = ns.placeholder("a", shape=()), ns.placeholder("b", shape=())
    ...     da, db = ns.jvp([a * b, a + 1.0], [a, b], [1.0, 0.0])
    >>> [float(v) for v in g.compile([a, b], [da, db])(np.array(2.0), np.array(5.0))]
    [5.0, 1.0]
    """
    ys, xs = _nodes(ys, "ys"), _nodes(xs, "xs")
    tangents = list(tangents) if isinstance(tangents, (list, tuple)) else [tangents]
    if len(tangents) != len(xs):
        raise ValueError(f"ns.jvp got {len(tangents)} tangents for {len(xs)} xs; give one per x")
    graph = graph_of(ys + xs + [t for t in tangents if isinstance(t, Node)])
    assert graph is not None  # ys were checked to be nodes
    order = topological_order(graph, ys)
    flows = flowing(order, xs)
    refuse_complex_nodes(n for n in order if n in flows)
    size = len(graph.nodes)
    graph._gradient_depth += 1  # the new nodes are derivatives (is_gradient)
    try:  # built atomically: a failure removes every node this call added
        seeds = {x: _tangent_node(graph, x, t) for x, t in zip(xs, tangents)}
        found = _forward_sweep(order, seeds, flows)
        return [found[y] if y in found else OPS["zeros_like"].dispatch(y) for y in ys]
    except BaseException:
        graph._rollback(size)
        raise
    finally:
        graph._gradient_depth -= 1


def _forward_sweep(order: Sequence[Node], seeds: dict, flows: set) -> dict:
    """Node -> tangent for every node of ``order`` that the seeds move."""
    tangents = dict(seeds)
    for node in order:
        if node in tangents or node not in flows or not isinstance(node, Operation):
            continue
        moving = [tangents.get(i) for i in node.inputs]
        if all(t is None for t in moving):
            continue
        tangent = _jvp_of(node.op, list(node.inputs), node, node.attrs, moving, _transpose)
        if tangent is not None:
            tangents[node] = tangent
    return tangents


def _transpose(inner, out: Node) -> Node:
    """d inner(u) / du, for the ops the table does not classify: ``ns.gradients``."""
    u = OPS["zeros_like"].dispatch(out)
    total = inner(u)
    if total is None:  # no partial is defined (norm with p=0 counts): the JVP is zero
        return OPS["zeros_like"].dispatch(out)
    (found,) = gradients(total, [u])
    return OPS["zeros_like"].dispatch(out) if found is None else found


def _tangent_node(graph, x: Node, tangent: Any) -> Node:
    if not isinstance(tangent, Node):
        data = np.asarray(numeric_data(tangent, f"the tangent for {x.name!r}"))
        if data.shape == () and x.shape != ():  # a number: that value everywhere
            return OPS["fill"].dispatch(x, value=float(data))
        tangent = Constant(data.astype(x.dtype or data.dtype, copy=False))
        graph._register(tangent, None, "tangent")
    if not _compatible(tangent.shape, x.shape):
        raise ValueError(
            f"ns.jvp: the tangent for {x.name!r} has shape {tangent.shape} but {x.name!r} has "
            f"shape {x.shape}; a tangent has the shape of its x"
        )
    return tangent


def _compatible(a, b) -> bool:
    """Equal shapes where both are known (None: a size known only at run time)."""
    if a is None or b is None:
        return True
    return len(a) == len(b) and all(p is None or q is None or p == q for p, q in zip(a, b))


def _nodes(value: Any, what: str) -> list[Node]:
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    for item in items:
        if not isinstance(item, Node):
            raise TypeError(
                f"ns.jvp: {what} must be static nodes (a node or a list of nodes), got "
                f"{type(item).__name__}; build values into the graph first (ns.constant, "
                f"ns.Variable, ns.placeholder)"
            )
    if not items:
        raise ValueError(f"ns.jvp got no {what}: pass a node or a list of nodes")
    return items
