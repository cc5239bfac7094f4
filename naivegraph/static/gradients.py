"""Reverse-mode gradients of a static graph, numeric and symbolic, from one sweep.

Both walk the nodes in reverse topological order and call each op's
``OpDef.pullback``.  What they hand to the rules decides what happens:

* ``graph.backward(loss)`` passes numpy arrays: the rules compute numbers;
* ``ns.gradients(ys, xs)`` passes static nodes: the same rules, through
  ``Node._ng_apply``, *build* the backward pass as new nodes of the graph
  (marked ``is_gradient``).  Those nodes are ordinary nodes, so gradients of
  gradients (second derivatives) need nothing extra.

>>> import numpy as np, naivegraph.static as ns
>>> with ns.Graph() as g:
...     x = ns.placeholder("x", shape=())
...     y = x ** 3
...     dy, = ns.gradients(y, [x])
...     d2y, = ns.gradients(dy, [x])
>>> [float(v) for v in g.compile([x], [dy, d2y])(np.array(2.0))]
[12.0, 12.0]
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from ..ops import OPS, Meta
from ..ops.core import refuse_complex_nodes
from ..ops.shapes import unknown_shape
from .executor import check_finite, shape_of, topological_order
from .graph import Graph, describe_site, graph_of
from .nodes import Constant, Node, Operation, Variable, _to_array, numeric_data


def _check_differentiable(node: Operation) -> None:
    if getattr(node.op, "inference_only", False):
        raise RuntimeError(
            f"node {node.name!r} ({node.op.name}) comes from an inference-only optimisation "
            f"(elementwise fusion) and has no gradient rule; build gradients on the original "
            f"graph with ns.gradients before optimising, or run backward on the unoptimised graph"
        )


def flowing(order: Sequence[Node], sources: Iterable[Node]) -> set[Node]:
    """Nodes of ``order`` that depend on ``sources`` through differentiable ops."""
    result = set(sources)
    for node in order:
        if isinstance(node, Operation) and node not in result:
            for i in node.inputs:
                if i in result:
                    _check_differentiable(node)
                    if node.op.differentiable:
                        result.add(node)
                    break
    return result


def reverse_sweep(
    order: Sequence[Node],
    seeds: dict,
    flows: set[Node],
    operands: Callable[[Operation], tuple],
    keep: Callable[[Node], bool],
    check: Callable[[Node, Any, Operation], None] | None = None,
) -> dict:
    """Propagate ``seeds`` backwards through ``order``; return node -> gradient.

    ``operands(node)`` returns ``(inputs, out, shapes)`` as the rules should see
    them; a gradient is dropped once used unless ``keep(node)`` says otherwise.
    ``check(input, gradient, node)``, if given, sees each gradient a rule produced.
    """
    grads = dict(seeds)
    for node in reversed(order):
        g = grads.get(node)
        if g is None or node not in flows or not isinstance(node, Operation):
            continue
        needs = [inp in flows for inp in node.inputs]
        if True in needs:
            inputs, out, shapes = operands(node)
            input_grads = node.op.pullback(g, inputs, out, node.attrs, needs, shapes)
            for inp, gi, need in zip(node.inputs, input_grads, needs):
                if gi is not None and need:
                    if check is not None:
                        check(inp, gi, node)
                    before = grads.get(inp)
                    grads[inp] = gi if before is None else before + gi
        if not keep(node):
            grads[node] = None  # intermediate gradient: release it as soon as it is used
    return grads


# -------------------------------------------------------------------------- numeric
def numeric_backward(
    graph: Graph, loss: Node, grad: Any = None, check_numerics: bool = False
) -> None:
    """Fill ``.grad`` of trainable Variables and retained nodes from the last forward run."""
    if loss.value is None:
        raise RuntimeError(
            f"{loss.name!r} has no value: run graph.forward(...) first (with {loss.name!r} "
            f"among the fetches if you pass fetches), then graph.backward({loss.name})"
        )
    order = topological_order(graph, [loss])
    sources = [n for n in order if (isinstance(n, Variable) and n.trainable) or n.retains_grad]
    flows = flowing(order, sources)
    if loss not in flows:
        raise RuntimeError(
            f"{loss.name!r} does not depend on any trainable Variable or node marked with "
            f"retain_grad(), so there is no gradient to compute"
        )
    seed = _seed_value(loss, grad)
    shapes = graph.last_run.shapes
    run_values = graph.last_run.variables

    def value_of(node: Node) -> Any:
        """The value ``node`` had in the last run (a Variable may have been assigned since)."""
        return run_values[node] if node in run_values else node.value

    def operands(node: Operation) -> tuple:
        op = node.op
        inputs = [
            _saved_or_meta(inp, value_of(inp), op.saves_input(i), shapes, node)
            for i, inp in enumerate(node.inputs)
        ]
        out = _saved_or_meta(node, node.value, op.saves_out, shapes, node)
        return inputs, out, [_run_shape(inp, shapes) for inp in node.inputs]

    check = None
    if check_numerics:
        check_finite(seed, loss, "gradient seed")
        check = _gradient_check
    with np.errstate(all="ignore"):  # summing inf and -inf gradients is NaN, silently
        grads = reverse_sweep(
            order,
            {loss: seed},
            flows,
            operands,
            keep=lambda n: n.retains_grad or isinstance(n, Variable),
            check=check,
        )
    store_gradients(graph, grads, seed)


def store_gradients(graph: Graph, grads: dict, seed: Any) -> None:
    """``.grad`` of every Variable and retaining node from ``grads`` (None where no
    gradient reached it), each its own array; other nodes' stale ``.grad`` cleared."""
    handed_out: set[int] = {id(seed)}
    for node in graph.nodes:
        if isinstance(node, Variable) or node.retains_grad:
            g = grads.get(node)
            node.grad = None if g is None else _own_array(g, handed_out)
        elif node.grad is not None:
            node.grad = None


def _own_array(gradient: Any, handed_out: set[int]) -> np.ndarray:
    """``gradient`` as an array no other ``.grad``, the seed or the caller's ``grad=``
    shares (``a + b`` passes one array to both), copying only when needed."""
    array = np.asarray(gradient)
    if id(array) in handed_out or array.base is not None:
        array = array.copy()
    handed_out.add(id(array))
    return array


def _gradient_check(node: Node, gradient: Any, user: Operation) -> None:
    """check_numerics for one gradient: name the op whose backward made it, and its line."""
    check_finite(
        gradient,
        node,
        "gradient",
        f", made by the backward of {user.name!r} ({user.op_name}) {describe_site(user.built_at)}",
    )


def _run_shape(node: Node, shapes: Mapping) -> Any:
    """The shape ``node`` had in the last run (its value may have been freed since)."""
    shape = shapes.get(node)
    if shape is None:
        value = node.value
        shape = node.shape if value is None else shape_of(value)
    return shape


def _seed_value(loss: Node, grad: Any) -> np.ndarray:
    value = np.asarray(loss.value)
    if grad is None:
        if value.size != 1:
            raise RuntimeError(
                f"grad can be implicitly created only for scalar outputs: {loss.name!r} has "
                f"shape {value.shape}; pass grad=... of that shape to graph.backward"
            )
        return np.ones_like(value)
    grad = np.asarray(_to_array(grad), dtype=value.dtype)
    if grad.shape != value.shape:
        raise ValueError(
            f"the gradient passed to backward has shape {grad.shape} but "
            f"{loss.name!r} has shape {value.shape}; they must match"
        )
    return grad


def _saved_or_meta(node: Node, value: Any, saved: bool, shapes: Mapping, user: Operation) -> Any:
    if not saved:
        return Meta(_run_shape(node, shapes), node.dtype or np.float64)
    if value is None:
        raise RuntimeError(
            f"the value of {node.name!r} needed to differentiate {user.name!r} was freed; "
            f"run graph.forward again (fetching the loss) right before graph.backward"
        )
    return value


# -------------------------------------------------------------------------- symbolic
def gradients(
    ys: Node | Sequence[Node], xs: Node | Sequence[Node], grad_ys: Any | Sequence[Any] | None = None
) -> list[Node | None]:
    """Add d(sum of ys)/d(x) for each x to the graph, as new nodes; return them.

    ``grad_ys`` weights each y (default: ones, so a scalar y gives its gradient).
    An x that the ys do not depend on gets ``None`` (as in TensorFlow 1).
    The new nodes are marked ``is_gradient`` and compute nothing until the graph runs.

    >>> import naivegraph.static as ns
    >>> with ns.Graph():
    ...     x = ns.placeholder("x", shape=())
    ...     dx, = ns.gradients(x * x, [x])
    >>> dx.is_gradient
    True
    """
    ys = _node_list(ys, "ys")
    xs = _node_list(xs, "xs")
    if not ys:
        raise ValueError(
            "ns.gradients got no ys: pass the node (or list of nodes) to "
            "differentiate, e.g. ns.gradients(loss, [w])"
        )
    if grad_ys is None:
        grad_ys = [None] * len(ys)
    elif isinstance(grad_ys, Node) or not isinstance(grad_ys, (list, tuple)):
        grad_ys = [grad_ys]
    if len(grad_ys) != len(ys):
        raise ValueError(f"got {len(grad_ys)} grad_ys for {len(ys)} ys; give one per y")
    graph = graph_of(ys + xs)
    assert graph is not None  # ys were checked to be nodes above
    order = topological_order(graph, ys)
    flows = flowing(order, xs)
    refuse_complex_nodes(n for n in order if n in flows)
    size = len(graph.nodes)
    graph._gradient_depth += 1
    try:  # built atomically: a failure removes every node this call added
        seeds = _symbolic_seeds(graph, ys, grad_ys, flows)
        grads = reverse_sweep(order, seeds, flows, _symbolic_operands, keep=lambda n: True)
    except BaseException:
        graph._rollback(size)
        raise
    finally:
        graph._gradient_depth -= 1
    for x in xs:  # the first gradient a node is returned as names it (grad_w1)
        grad = grads.get(x)
        if grad is not None and grad.is_gradient and grad.gradient_of is None:
            grad.gradient_of = x.name
    return [grads.get(x) for x in xs]


def _node_list(value: Any, what: str) -> list[Node]:
    """``value`` (a node or a list/tuple of nodes) as a list; a clear TypeError otherwise."""
    items = [value] if isinstance(value, Node) else value
    if not isinstance(items, (list, tuple)):
        items = [value]
    for item in items:
        if not isinstance(item, Node):
            text = repr(item)
            raise TypeError(
                f"ns.gradients: {what} must be static nodes (a node or a list of nodes), but it "
                f"contains {type(item).__name__} {text if len(text) <= 40 else text[:37] + '...'}; "
                f"build values into the graph first (ns.constant, ns.Variable, ns.placeholder)"
            )
    return list(items)


def _symbolic_seeds(graph: Graph, ys: Sequence[Node], grad_ys: Sequence[Any], flows: set) -> dict:
    seeds: dict[Node, Any] = {}
    for y, gy in zip(ys, grad_ys):
        if y not in flows:
            continue
        if gy is None and unknown_shape(y.shape):
            gy = OPS["fill"].dispatch(y, value=1.0)  # ones, shaped like y when the graph runs
        elif gy is None:
            gy = Constant(np.ones(y.shape, dtype=y.dtype))
            graph._register(gy, None, "ones")
        elif not isinstance(gy, Node):
            gy = Constant(
                np.asarray(numeric_data(gy, f"the grad_ys entry for {y.name!r}"), dtype=y.dtype)
            )
            graph._register(gy, None, "grad_y")
        seeds[y] = gy if y not in seeds else seeds[y] + gy
    return seeds


def _symbolic_operands(node: Operation) -> tuple:
    """The rules see a node where they may read it, else its Meta.  A node whose shape
    is not fully known is always handed over: the rule reads its sizes when the graph
    runs (the value is there anyway; a static run keeps what its readers need)."""
    op = node.op
    inputs = [
        inp if op.saves_input(i) or unknown_shape(inp.shape) else Meta(inp.shape, inp.dtype)
        for i, inp in enumerate(node.inputs)
    ]
    out = node if op.saves_out or unknown_shape(node.shape) else Meta(node.shape, node.dtype)
    return inputs, out, [inp.shape for inp in node.inputs]
