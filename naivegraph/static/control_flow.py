"""Branches and loops inside a static graph: ``ns.cond`` and ``ns.while_loop``.

A static graph cannot run Python's ``if`` or ``while`` on its values: they do not
exist while it is built.  TensorFlow 1 answers with ``tf.cond`` and ``tf.while_loop``;
naivegraph builds them the way TensorFlow 2 and ONNX (``If``, ``Loop``) do: each branch
and the loop body is a *graph of its own*, built once by calling your function on
placeholders.  A node of the enclosing graph that the function uses is *captured*: it
becomes a placeholder of the inner graph and an input of the cond or loop node.

* ``cond`` runs only the branch that the predicate picks.  Its gradient is another
  ``cond`` whose branches are the gradient graphs of the two branches.
* ``while_loop`` keeps the loop variables of every iteration (what each iteration's
  backward needs); its gradient runs the body's gradient graph over them in reverse.

Both give tuples of values; each result the user sees is an ``item`` node picking one.

>>> import numpy as np, naivegraph.static as ns
>>> with ns.Graph() as g:
...     x = ns.placeholder("x", shape=())
...     y = ns.cond(x > 0, lambda: x * 2.0, lambda: -x)
...     i, total = ns.while_loop(lambda i, t: i < 4, lambda i, t: (i + 1, t + x), [0, 0.0])
...     dy, = ns.gradients(y, [x])
>>> [float(v) for v in g.run([y, dy, total], {x: np.array(-3.0)})]
[3.0, -1.0, -12.0]
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

import numpy as np

from ..ops import OPS, OpDef
from ..ops.core import with_default_float
from .executor import CompiledFunction
from .gradients import gradients
from .graph import Graph, get_default_graph, tracing
from .nodes import Constant, Node, Operation, apply, capture, placeholder


# -------------------------------------------------------------------------- functions
class Function:
    """A part of an inner graph that runs as a unit: placeholders in, nodes out.

    ``inputs`` may hold None for a value the function does not read.
    """

    def __init__(self, graph: Graph, inputs: Sequence[Any], outputs: Sequence[Node]):
        self.graph, self.outputs = graph, list(outputs)
        self.inputs: list[Any] = list(inputs)  # placeholders of ``graph``, or None
        self._compiled: CompiledFunction | None = None
        self._gradient: Function | None = None

    def run(self, values: Sequence[Any]) -> list[Any]:
        if self._compiled is None:
            self._compiled = CompiledFunction(self.graph, self.inputs, self.outputs)
        return self._compiled(*values)

    def gradient(self) -> "Function":
        """The vector-Jacobian product as a function of (inputs..., output grads...):
        the gradient of every floating input (zeros where it has none).  Built once, in
        the same inner graph, by ``ns.gradients``."""
        if self._gradient is None:
            with self.graph:
                ys = [o for o in self.outputs if _floating(o)]
                grad_ys = [placeholder(f"grad_{o.name}", shape=o.shape, dtype=o.dtype) for o in ys]
                xs = [p for p in self.inputs if p is not None and _floating(p)]
                found = gradients(ys, xs, grad_ys) if ys and xs else [None] * len(xs)
                grads = [
                    OPS["zeros_like"].dispatch(x) if g is None else g for x, g in zip(xs, found)
                ]
            self._gradient = Function(self.graph, self.inputs + grad_ys, grads)
        return self._gradient


def _build(
    name: str, outer: Graph, params: Sequence[Node], fn: Callable, what: str
) -> tuple[Graph, list[Any], list[Node], bool]:
    """Call ``fn`` on placeholders like ``params`` in a new inner graph of ``outer``."""
    graph = Graph(name=f"{outer.name}/{name}")
    graph.outer = outer
    with graph:
        inner = [
            placeholder(f"{name}_arg{i}", shape=p.shape, dtype=p.dtype)
            for i, p in enumerate(params)
        ]
        with tracing(what):
            result = fn(*inner)
        single = not isinstance(result, (tuple, list))
        outputs = [_inner_node(graph, r, what) for r in ([result] if single else result)]
    return graph, inner, outputs, single


def _inner_node(graph: Graph, value: Any, what: str) -> Node:
    if isinstance(value, Node):
        return capture(graph, value)  # an outer node returned as it is comes in as a capture
    if value is None:
        raise TypeError(f"{what} returned None: return the value(s) it computes")
    node = Constant(value, f"a value returned by {what}")
    graph._register(node, None, "const")
    return node


def _capture_all(graphs: Sequence[Graph]) -> list[Node]:
    """Every outer node any of ``graphs`` captured, and a placeholder for it in each."""
    union = list(dict.fromkeys(n for g in graphs for n in g.captures))
    for graph in graphs:
        for node in union:
            capture(graph, node)
    return union


# -------------------------------------------------------------------------- ops
class GraphOp(OpDef):
    """An op whose value is a tuple, computed by running inner graphs.  Backward keeps
    every input and the output (the loop's iterations); ``result`` nodes pick results."""

    def saves_input(self, i: int) -> bool:
        return True

    @property
    def saves_out(self) -> bool:
        return True

    def infer_output(self, inputs: Sequence[Node], attrs: dict) -> tuple:
        """(shape, dtype) of the node: a tuple has neither; a result node has its result's."""
        return attrs["meta"] if self is ITEM else (None, None)


class TupleGrad:
    """The gradient of a tuple-valued node, one part per result, gathered from the
    ``result`` nodes that use it (adding two of them adds part by part)."""

    def __init__(self, parts: dict[int, Any]) -> None:
        self.parts = parts

    def __add__(self, other: "TupleGrad") -> "TupleGrad":
        parts = dict(self.parts)
        for i, g in other.parts.items():
            parts[i] = g if i not in parts else parts[i] + g
        return TupleGrad(parts)

    def filled(self, out: Any, indices: Sequence[int]) -> list[Any]:
        """The parts at ``indices``, zeros of the result's shape where none arrived."""
        return [
            self.parts[i] if i in self.parts else OPS["zeros_like"].dispatch(_pick(out, i))
            for i in indices
        ]


def _item_vjp(g, inputs, out, needs, index, meta=None):
    return [TupleGrad({index: g})]


def _pick(value: Any, index: int, like: Any = None) -> Any:
    """Result ``index`` of a tuple value (or a result node of a tuple-valued node, with
    the shape and dtype of ``like``, else of the node's own record of its results)."""
    if isinstance(value, Node):
        meta = value.attrs["meta"][index] if like is None else (like.shape, like.dtype)
        return ITEM.dispatch(value, index=index, meta=meta)
    return value[index]


# Named "result", not "item": in a drawing ``result_2`` must not read as ``.item()``.
ITEM = GraphOp(
    name="result",
    forward=lambda value, index, meta=None: value[index],
    partials=None,
    backward_name="ResultBackward",
    vjp_all=_item_vjp,
    doc="Result ``index`` of a tuple-valued node (a cond or a loop).",
)


def _cond_forward(pred, *values, branches, meta=None):
    pred = np.asarray(pred)
    if pred.size != 1:  # a predicate of unknown shape, fed more than one value
        raise ValueError(
            f"cond's predicate must be a single value, but it was fed shape {pred.shape}; "
            f"use ns.where(mask, a, b) to choose elementwise"
        )
    chosen = branches[0] if bool(pred) else branches[1]
    return tuple(chosen.run(values))


def _cond_vjp(g, inputs, out, needs, branches, meta):
    pred, values = inputs[0], inputs[1:]
    floats = [i for i, (_, dtype) in enumerate(meta) if np.dtype(dtype).kind == "f"]
    grads = g.filled(out, floats)
    backward = tuple(branch.gradient() for branch in branches)
    result = COND.dispatch(pred, *values, *grads, branches=backward, meta=_meta(backward[0]))
    wanted = [1 + i for i, x in enumerate(values) if _floating(x)]
    return _gradients_from(result, wanted, inputs, needs)


COND = GraphOp(
    name="cond",
    forward=_cond_forward,
    partials=None,
    backward_name="CondBackward",
    vjp_all=_cond_vjp,
    doc="Runs one of two branch graphs, as the predicate says (``ns.cond``).",
)


class LoopValue(tuple):
    """The final loop variables, remembering the variables at the start of every
    iteration (``states``): what the loop's backward replays."""

    states: list[list[Any]]


@dataclasses.dataclass(frozen=True, eq=False)
class Loop:
    condition: Function
    body: Function
    count: int  # loop variables; the body's other inputs are captures
    limit: int | None


def _while_forward(*values, loop: Loop, meta=None):
    state, captured = list(values[: loop.count]), list(values[loop.count :])
    states: list[list[Any]] = []
    while bool(np.asarray(loop.condition.run(state + captured)[0])):
        if loop.limit is not None and len(states) >= loop.limit:
            raise RuntimeError(
                f"while_loop ran {loop.limit} iterations without its condition turning "
                f"false; raise maximum_iterations or check the condition"
            )
        states.append(state)
        state = loop.body.run(state + captured)
    result = LoopValue(state)
    result.states = states
    return result


def _while_vjp(g, inputs, out, needs, loop: Loop, meta):
    count = loop.count
    float_vars = [i for i in range(count) if _floating(inputs[i])]
    grads = g.filled(out, float_vars)
    captured = list(inputs[count:])
    result = WHILE_GRAD.dispatch(out, *captured, *grads, loop=loop)
    wanted = float_vars + [count + i for i, x in enumerate(captured) if _floating(x)]
    return _gradients_from(result, wanted, inputs, needs)


def _gradients_from(result: Any, wanted: Sequence[int], inputs: Sequence, needs) -> list:
    """Per input, its gradient: result ``k`` of a backward op belongs to input
    ``wanted[k]``; inputs not wanted (not floating, or not needed) get None."""
    found: list[Any] = [None] * len(inputs)
    for k, i in enumerate(wanted):
        if needs[i]:
            found[i] = _pick(result, k, like=inputs[i])
    return found


def _while_grad_forward(out, *rest, loop: Loop, meta=None):
    """Run the body's backward over the saved iterations, last first; sum what the
    captured values receive from every iteration."""
    count = len(out)
    float_vars = [i for i in range(count) if _floating(out[i])]
    captured = list(rest[: len(rest) - len(float_vars)])
    grad_state = list(rest[len(rest) - len(float_vars) :])
    float_captured = [i for i, c in enumerate(captured) if _floating(c)]
    grad_captured = [np.zeros_like(captured[i]) for i in float_captured]
    backward = loop.body.gradient()
    for state in reversed(out.states):
        results = backward.run(list(state) + captured + grad_state)
        grad_state = results[: len(float_vars)]
        for k, g in enumerate(results[len(float_vars) :]):
            grad_captured[k] = grad_captured[k] + g
    return tuple(grad_state + grad_captured)


def _no_second_derivative(g, inputs, out, needs, loop, meta=None):
    raise NotImplementedError(
        "the gradient of a while_loop's gradient (a second derivative through a loop) "
        "is not supported; differentiate the loop once, or unroll it in Python"
    )


WHILE = GraphOp(
    name="while_loop",
    forward=_while_forward,
    partials=None,
    backward_name="WhileBackward",
    vjp_all=_while_vjp,
    doc="Runs a body graph while a condition graph holds (``ns.while_loop``).",
)
WHILE_GRAD = GraphOp(
    name="while_loop_grad",
    forward=_while_grad_forward,
    partials=None,
    backward_name="WhileGradBackward",
    vjp_all=_no_second_derivative,
    doc="The backward of a while_loop: the body's gradient over the saved iterations.",
)


def inner_functions(node: Node) -> list[tuple[str, Function]]:
    """The inner graphs a cond or loop node runs, each with a label (for drawings):
    ``[]`` for any other node."""
    op = getattr(node, "op", None)
    if op is COND:
        true_branch, false_branch = node.attrs["branches"]
        return [("true branch", true_branch), ("false branch", false_branch)]
    if op is WHILE:
        loop = node.attrs["loop"]
        return [("loop condition", loop.condition), ("loop body", loop.body)]
    return []


def _floating(x: Any) -> bool:
    """A value or node of a floating dtype: what gradients flow through (a node whose
    dtype the graph does not know counts as not floating)."""
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        if isinstance(x, Node):
            return False
        dtype = np.result_type(x)
    return np.dtype(dtype).kind == "f"


def _meta(function: Function) -> tuple:
    return tuple((o.shape, o.dtype) for o in function.outputs)


def _results(node: Operation, meta: Sequence[tuple], single: bool) -> Any:
    items = [apply(ITEM, (node,), {"index": i, "meta": meta[i]}) for i in range(len(meta))]
    return items[0] if single else tuple(items)


# -------------------------------------------------------------------------- cond
def cond(pred: Any, true_fn: Callable[[], Any], false_fn: Callable[[], Any]) -> Any:
    """``true_fn()`` if ``pred`` holds, else ``false_fn()``, decided when the graph runs.

    ``pred`` is a scalar boolean node (a Python bool just calls the chosen function).
    Both functions take no argument, use nodes of the graph freely and return a node,
    a number, or a tuple/list of them; the two must agree in number, dtype and known
    sizes.  Only the chosen branch runs.  Differentiable: ``ns.gradients`` goes through
    the branch that ran.

    >>> import numpy as np, naivegraph.static as ns
    >>> with ns.Graph() as g:
    ...     x = ns.placeholder("x", shape=(2,))
    ...     y = ns.cond(x.sum() > 0, lambda: x * 10.0, lambda: x - 1.0)
    >>> g.run(y, x=np.array([1.0, 2.0])).tolist(), g.run(y, x=np.array([-1.0, -2.0])).tolist()
    ([10.0, 20.0], [-2.0, -3.0])
    """
    if isinstance(pred, (bool, np.bool_)):
        return true_fn() if pred else false_fn()
    if not isinstance(pred, Node):
        raise TypeError(
            f"cond needs a boolean node (or a Python bool) as pred, got {type(pred).__name__}"
        )
    outer = _outer_graph([pred])
    if pred.dtype is not None and pred.dtype != np.bool_:
        raise TypeError(
            f"cond's pred must be boolean, but {pred.name!r} has dtype {pred.dtype}; compare "
            f"first, e.g. ns.cond(x > 0, ...)"
        )
    if pred.shape is not None and int(np.prod([d or 2 for d in pred.shape])) != 1:
        raise ValueError(
            f"cond's pred must be a single value, but {pred.name!r} has shape {pred.shape}; "
            f"use ns.where(mask, a, b) to choose elementwise"
        )
    true_graph, _, true_out, single = _build("true_branch", outer, (), true_fn, "cond's true_fn")
    false_graph, _, false_out, _ = _build("false_branch", outer, (), false_fn, "cond's false_fn")
    meta = _agreeing_outputs(true_out, false_out)
    captured = _capture_all([true_graph, false_graph])
    branches = tuple(
        Function(graph, [graph.captures[c] for c in captured], outputs)
        for graph, outputs in ((true_graph, true_out), (false_graph, false_out))
    )
    with outer:
        node = apply(COND, (pred, *captured), {"branches": branches, "meta": meta})
        return _results(node, meta, single)


def _agreeing_outputs(first: Sequence[Node], second: Sequence[Node]) -> tuple:
    if len(first) != len(second):
        raise ValueError(
            f"cond's branches must return the same number of values: true_fn returns "
            f"{len(first)}, false_fn {len(second)}"
        )
    meta = []
    for i, (a, b) in enumerate(zip(first, second)):
        if a.dtype != b.dtype:
            raise TypeError(
                f"cond's branches disagree in dtype for result {i}: true_fn gives {a.dtype}, "
                f"false_fn {b.dtype}; convert one of them so that both match"
            )
        meta.append((_merged_shape(a.shape, b.shape, i), a.dtype))
    return tuple(meta)


def _merged_shape(a: tuple | None, b: tuple | None, index: int) -> tuple | None:
    if a is None or b is None:
        return None
    if not _compatible(a, b):
        raise ValueError(
            f"cond's branches disagree in shape for result {index}: true_fn gives {a}, "
            f"false_fn {b}; both branches must return values of the same shape"
        )
    return tuple(x if x == y else None for x, y in zip(a, b))


# -------------------------------------------------------------------------- while_loop
def _loop_value(value):
    """A loop variable given as a number or array: an array (Python floats in the default
    dtype, as every constant; numpy data keeps its own)."""
    array = np.asarray(value)
    return array if isinstance(value, (np.ndarray, np.generic)) else with_default_float(array)


def while_loop(
    cond_fn: Callable[..., Any],
    body_fn: Callable[..., Any],
    loop_vars: Sequence[Any],
    maximum_iterations: int | None = None,
) -> tuple:
    """Run ``loop_vars = body_fn(*loop_vars)`` while ``cond_fn(*loop_vars)`` holds, when the
    graph runs; return the final loop variables as a tuple of nodes (TF1's meaning).

    ``loop_vars`` are nodes or numbers; the body must return as many values, each
    with the dtype and shape of its variable.  Both functions may use other nodes of
    the graph.  Differentiable: the loop keeps the variables of each iteration, and
    ``ns.gradients`` runs the body's gradient over them in reverse.

    >>> import numpy as np, naivegraph.static as ns
    >>> with ns.Graph() as g:
    ...     x = ns.placeholder("x", shape=())
    ...     n, y = ns.while_loop(lambda n, y: y < 100.0, lambda n, y: (n + 1, y * x), [0, 1.0])
    >>> [float(v) for v in g.run([n, y], x=np.array(3.0))]
    [5.0, 243.0]
    """
    if not isinstance(loop_vars, (list, tuple)) or not loop_vars:
        raise TypeError("while_loop's loop_vars must be a non-empty list or tuple of values")
    outer = _outer_graph(loop_vars)
    # Numbers become constants, registered only once the loop node is (nothing half-built).
    initial = [
        v if isinstance(v, Node) else Constant(_loop_value(v), "a loop variable") for v in loop_vars
    ]
    cond_graph, cond_in, test, _ = _build(
        "loop_cond", outer, initial, cond_fn, "while_loop's cond_fn"
    )
    _check_test(test)
    body_graph, body_in, body_out, _ = _build(
        "loop_body", outer, initial, body_fn, "while_loop's body_fn"
    )
    _check_body(initial, body_out)
    captured = _capture_all([cond_graph, body_graph])
    loop = Loop(
        Function(cond_graph, cond_in + [cond_graph.captures[c] for c in captured], test),
        Function(body_graph, body_in + [body_graph.captures[c] for c in captured], body_out),
        len(initial),
        maximum_iterations,
    )
    meta = tuple((v.shape, v.dtype) for v in initial)
    with outer:
        node = apply(WHILE, (*initial, *captured), {"loop": loop, "meta": meta})
        return _results(node, meta, single=False)


def _outer_graph(values: Sequence[Any]) -> Graph:
    """The graph a cond or loop goes to: the branch or body being built, if any, else
    the graph of its nodes, else the default graph."""
    default = get_default_graph()
    if default.outer is not None:
        return default
    return next((v.graph for v in values if isinstance(v, Node) and v.graph), default)


def _check_test(test: Sequence[Node]) -> None:
    if len(test) != 1 or test[0].dtype != np.bool_ or (test[0].shape not in (None, ())):
        got = ", ".join(f"{n.dtype} {n.shape}" for n in test)
        raise TypeError(
            f"while_loop's cond_fn must return one boolean scalar (e.g. i < n), got {got}"
        )


def _compatible(a: tuple | None, b: tuple | None) -> bool:
    """Shapes that may be the same at run time: equal where both sizes are known."""
    if a is None or b is None:
        return True
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


def _check_body(initial: Sequence[Node], outputs: Sequence[Node]) -> None:
    if len(outputs) != len(initial):
        raise ValueError(
            f"while_loop's body_fn must return one value per loop variable: "
            f"{len(initial)} loop_vars, but it returned {len(outputs)}"
        )
    for i, (before, after) in enumerate(zip(initial, outputs)):
        if after.dtype != before.dtype:
            raise TypeError(
                f"while_loop's body_fn changes the dtype of loop variable {i} from "
                f"{before.dtype} to {after.dtype}; keep it (convert inside the body)"
            )
        if not _compatible(before.shape, after.shape):
            raise ValueError(
                f"while_loop's body_fn changes the shape of loop variable {i} from "
                f"{before.shape} to {after.shape}; a loop variable keeps its shape"
            )
