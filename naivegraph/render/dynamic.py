"""Drawings of dynamic-mode graphs, read from ``grad_fn`` nodes.

A dynamic graph is only the chain of ``grad_fn`` nodes hanging off an output tensor.
Each op node also remembers its forward side (weak references to its inputs, its
output's shape), so from one tensor we can draw

* the **forward** graph: tensors (data) and ops, edges in data direction;
* the **backward** graph: ``grad_fn`` nodes, ``AccumulateGrad`` nodes feeding the
  leaves, saved tensors (dashed), edges in gradient direction.  After a backward pass
  without ``retain_graph`` the nodes and their links stay; what is gone are the saved
  values, drawn faded with only their shape left.  With ``gradients`` each node is
  labelled with the gradient arriving at it, computed by one side-effect-free pass
  (:func:`arriving_gradients`).

Traversals are breadth-first from the outputs with an explicit queue (no recursion),
so a 100,000-op chain is fine.  The ``id()`` of an object is used only as a dict key
while we hold the object; DOT ids are ``n0, n1, ...`` in traversal order.
"""

from __future__ import annotations

import sys
import weakref
from collections import deque
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..dynamic.engine import grad as autograd_grad
from ..dynamic.node import SECOND_BACKWARD, AccumulateGrad, Node, OpNode
from ..dynamic.tensor import Tensor
from ..ops.core import Meta, default_float
from .dot import (
    DETAILS,
    Colored,
    Item,
    Sketch,
    format_shape,
    format_value,
    html_label,
    operand_position,
)
from .interactive import summarize

# ----------------------------------------------------------------------------- names


def names_from(params: Mapping[str, Any] | None) -> dict[int, str]:
    """``id(tensor) -> name`` from ``{"w1": w1, ...}`` (tensors only; first name wins)."""
    names: dict[int, str] = {}
    for name, value in (params or {}).items():
        if isinstance(value, Tensor):
            names.setdefault(id(value), str(name))
    return names


def caller_names(skip_prefix: str) -> dict[str, Any]:
    """The tensors among the local variables of the first frame outside naivegraph.

    Lets ``ng.render(loss)`` label ``l1 ... l4`` by the names the user wrote, as the
    reference drawings do.  Private names (``_x``) are skipped.
    """
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(skip_prefix):
        frame = frame.f_back
    if frame is None:
        return {}
    return {
        k: v for k, v in frame.f_locals.items() if isinstance(v, Tensor) and not k.startswith("_")
    }


class _Context:
    """What every label needs: names, whether to print values, the outputs, and (with
    ``gradients``) the gradient arriving at each backward node, by ``id(node)``."""

    def __init__(
        self,
        names: dict[int, str],
        show_values: bool,
        outputs: Sequence[Tensor],
        arriving: dict[int, tuple] | None = None,
    ):
        self.names = names
        self.show_values = show_values
        self.output_ids = {id(t) for t in outputs}
        self.arriving = arriving
        root = names.get(id(outputs[0])) if len(outputs) == 1 else None
        self.root_name = root or ("root" if len(outputs) == 1 else "Σ outputs")


# ----------------------------------------------------------------------------- tensors


def _tensor_style(tensor: Tensor | None, ctx: _Context) -> str:
    if tensor is None:
        return "tensor"
    if tensor.grad_fn is None:
        return "leaf" if tensor.requires_grad else "nograd"
    if id(tensor) in ctx.output_ids:
        return "output"
    return "tensor"


def _describe_tensor(item: Item) -> tuple[str, str]:
    tensor, meta, ctx = item.payload
    name = ctx.names.get(id(tensor)) if tensor is not None else None
    if tensor is None:  # an intermediate that Python no longer holds: only its shape is known
        shape = format_shape(meta.shape) if meta is not None else "?"
        return html_label(None, shape, "(tensor no longer alive)"), f"tensor {shape}"
    shape = format_shape(tensor.shape)
    dtype = "" if tensor.dtype == default_float() else f" {tensor.dtype}"  # as reprs do
    lines = [shape + dtype]
    if ctx.show_values:
        value = format_value(tensor._data)
        if value is not None:
            lines.append(f"= {value}")
        grad = tensor._grad  # read directly: .grad warns on non-leaves
        if grad is not None:
            grad_text = format_value(grad._data)
            lines.append(f"grad {grad_text}" if grad_text else f"grad {format_shape(grad.shape)}")
    tooltip = (
        f"{name or 'tensor'} {shape} requires_grad={tensor.requires_grad} is_leaf={tensor.is_leaf}"
    )
    return html_label(name, *lines), tooltip


def _tensor_item(
    tensor: Tensor | None, ctx: _Context, cluster: str | None, meta: Any = None
) -> Item:
    return Item(
        _tensor_style(tensor, ctx), _describe_tensor, (tensor, meta, ctx), "tensor", cluster
    )


def _describe_constant(item: Item) -> tuple[str, str]:
    value, _ = item.payload
    text = format_value(value) if np.size(value) <= 4 else format_shape(np.shape(value))
    return html_label(text or "constant", "constant"), f"constant {value!r}"[:200]


# ----------------------------------------------------------------------------- ops


def _op_name(fn: Any) -> str:
    if isinstance(fn, OpNode):
        return fn.op.name
    name = fn.name()  # a custom Function: its backward is named after the class
    return name[: -len("Backward")] if name.endswith("Backward") else name


def _short_attrs(attrs: Mapping[str, Any]) -> str:
    text = ", ".join(f"{k}={v!r}" for k, v in attrs.items() if v is not None and v is not False)
    return text if len(text) <= 32 else text[:31] + "…"


def _describe_op(item: Item) -> tuple[str, str]:
    fn = item.payload
    attrs = _short_attrs(fn.attrs) if isinstance(fn, OpNode) else ""
    return html_label(_op_name(fn), attrs), f"{_op_name(fn)} (backward: {fn.name()})"


def _describe_grad_fn(item: Item) -> tuple[str, str]:
    fn, ctx = item.payload
    if isinstance(fn, AccumulateGrad):
        name = ctx.names.get(id(fn.variable))
        lines = [f"into {name}.grad" if name else ""]
        lines += _gradient_lines(fn, name or "leaf", ctx)
        return html_label(
            "AccumulateGrad", *lines
        ), "adds the incoming gradient to the leaf's .grad"
    extra: list[str] = []
    if isinstance(fn, OpNode) and fn.output_meta is not None:
        extra.append(f"{fn.op.name} → {format_shape(fn.output_meta.shape)}")
    if _saved_values_freed(fn):
        extra.append("saved values freed")
    extra += _gradient_lines(fn, _output_name(fn, ctx), ctx)
    return html_label(fn.name(), *extra), f"{fn.name()}: next_functions = " + ", ".join(
        "None" if n is None else n.name() for n, _ in fn.next_functions
    )


def _output_name(fn: Node, ctx: _Context) -> str:
    """The name of the tensor ``fn`` produced, when it is alive and named; else "out"
    (the drawn output itself, unnamed, is the "root" its gradients are of)."""
    ref = fn.output_ref if isinstance(fn, OpNode) else None
    tensor = ref() if ref is not None else None
    if tensor is None or tensor.grad_fn is not fn:
        return "out"
    if id(tensor) in ctx.names:
        return ctx.names[id(tensor)]
    return ctx.root_name if ctx.output_ids == {id(tensor)} else "out"


GRADIENT_COLOR = "#c62828"  # the colour of gradient edges: the label says what flows on them


def _gradient_lines(fn: Node, name: str, ctx: _Context) -> list[str]:
    """``∂loss/∂l1 = 7``: the gradient arriving at ``fn`` (nothing without ``gradients``)."""
    if ctx.arriving is None:
        return []
    grads = ctx.arriving.get(id(fn))
    if grads is None:
        return [Colored("no gradient reaches it", GRADIENT_COLOR)]
    several = len(grads) > 1
    lines = []
    for i, g in enumerate(grads):
        if g is not None:
            text = format_gradient(g)
            joined = f" {text}" if text.startswith("=") else f": {text}"
            lines.append(
                Colored(f"∂{ctx.root_name}/∂{name}{i if several else ''}{joined}", GRADIENT_COLOR)
            )
    return lines


def format_gradient(value: np.ndarray) -> str:
    """``= 7`` or ``= [[7, 7], [7, 7]]`` when small; else the shape and a summary.

    >>> format_gradient(np.full((2, 2), 7.0)), format_gradient(np.full((3, 4), 0.25))
    ('= [[7, 7], [7, 7]]', '(3, 4) all 0.25')
    >>> format_gradient(np.arange(6.0).reshape(2, 3))
    '(2, 3) in [0, 5]'
    """
    small = format_value(value)
    if small is not None:
        return f"= {small}"
    shape = format_shape(value.shape)
    if value.size == 0 or value.dtype.kind not in "biuf":
        return shape
    low, high = format_value(value.min()), format_value(value.max())
    return f"{shape} all {low}" if low == high else f"{shape} in [{low}, {high}]"


def _describe_saved(item: Item) -> tuple[str, str]:
    fn, role, shape, ctx = item.payload
    source = _saved_source(fn, role)
    name = ctx.names.get(id(source)) if source is not None else None
    lines = [f"= {name}" if name else "", format_shape(shape)]
    if fn.freed:
        lines.append("freed by backward()")
        tooltip = f"{fn.name()} kept its {role} for backward; backward() freed it"
        return html_label(f"saved {role}", *lines), tooltip
    if ctx.show_values:
        value = _saved_value(fn, role)
        text = format_value(value) if value is not None else None
        if text:
            lines.append(f"value {text}")
    return html_label(f"saved {role}", *lines), f"{fn.name()} keeps its {role} for backward"


def _position(role: str) -> Any:
    return "out" if role == "result" else int(role.split()[1])


def _role(position: Any) -> str:
    return "result" if position == "out" else f"input {position}"


def _saved_source(fn: OpNode, role: str) -> Any:
    """The tensor a saved input came from (outputs are not held, to avoid a cycle).

    Once backward freed the node it no longer records its sources; the input is then
    found the way the forward drawing finds it, through ``next_functions``.
    """
    position = _position(role)
    if position == "out":
        return None
    if fn.freed:
        return _input_of(fn, fn.input_edges[position], position, fn.inputs_meta)[1]
    return fn.saved_source(position)


def _saved_value(fn: OpNode, role: str) -> Any:
    """The array a node saved for ``role`` ("input i" / "result"), if still there."""
    value = fn.saved_array(_position(role))
    return value if isinstance(value, np.ndarray) else None


def saved_roles(fn: OpNode) -> list[tuple[str, tuple]]:
    """``(role, shape)`` of what ``fn`` saved for backward, kept or already freed.

    A freed node no longer lists its saved values, but what it saved follows from its
    op and from which inputs needed a gradient, exactly as when it was recorded; the
    arrays became shape-only metadata, which gives the shapes.
    """
    if not fn.freed:
        return fn.saved_tensors_meta
    kept = fn.op.saves_for(fn.needs)
    roles = [
        (_role(i), tuple(value.shape))
        for i, value in enumerate(fn.saved)
        if i in kept and isinstance(value, Meta)  # a Python number was never a tensor
    ]
    if "out" in kept:
        roles.append(("result", tuple(fn.saved_out.shape)))
    return roles


def _saved_values_freed(fn: Node) -> bool:
    """True when a backward pass released values ``fn`` had saved for it."""
    if not fn.freed:
        return False
    if isinstance(fn, OpNode):
        return bool(saved_roles(fn))
    ctx = getattr(fn, "ctx", None)  # a custom Function's node
    return bool(getattr(ctx, "_freed", False))


# ----------------------------------------------------------------------------- forward


def _input_of(
    fn: Any, edge: tuple, i: int, metas: Sequence | None
) -> tuple[Any, Tensor | None, Any, Any]:
    """How input ``i`` of op node ``fn``, whose edge is ``edge``, is drawn:
    ``(key, tensor, producer, extra)``.

    The edge in ``next_functions`` is trusted first: it is what backward will use, and it
    still points at the right node after in-place ops rewrote a tensor's ``grad_fn``.
    ``extra`` is the output ``Meta`` for a dead intermediate, or the constant value.
    """
    child, nr = edge
    meta = metas[i] if metas is not None else None
    if isinstance(child, AccumulateGrad):
        return ("tensor", id(child.variable)), child.variable, None, None
    if child is not None:
        tensor = child.output_ref() if isinstance(child, OpNode) and child.output_ref else None
        if tensor is not None and tensor.grad_fn is not child:
            tensor = None  # the tensor was changed in place since: its old self is gone
        out_meta = child.output_meta if isinstance(child, OpNode) else None
        return ("out", id(child), nr), tensor, child, out_meta
    if isinstance(meta, weakref.ref):
        tensor = meta()
        if tensor is not None:
            return ("tensor", id(tensor)), tensor, None, None
        shape = fn.shapes[i] if isinstance(fn, OpNode) else None
        return ("dead", id(fn), i), None, None, _ShapeOnly(shape)
    return ("const", id(fn), i), None, None, meta


class _ShapeOnly:
    __slots__ = ("shape",)

    def __init__(self, shape: Any) -> None:
        self.shape = shape


def _has_edgeless(edges: tuple) -> bool:
    """Whether an input has no edge (a plain loop: this runs once per drawn op)."""
    for child, _ in edges:
        if child is None:
            return True
    return False


def _operand(fn: Any, i: int, count: int) -> int | None:
    return operand_position(getattr(fn, "op", None), i, count)


def forward_sketch(
    sketch: Sketch, outputs: Sequence[Tensor], ctx: _Context, cluster: str | None = None
) -> None:
    """Add the forward graph of ``outputs`` to ``sketch`` (tensors and ops)."""
    queue: deque = deque()
    prefix = cluster or ""
    for tensor in outputs:
        key = (
            (prefix, "out", id(tensor.grad_fn), tensor._output_nr)
            if tensor.grad_fn
            else (prefix, "tensor", id(tensor))
        )
        index, _ = sketch.add(key, lambda t=tensor: _tensor_item(t, ctx, cluster))
        if tensor.grad_fn is not None:
            queue.append((tensor.grad_fn, index))
    while queue:
        fn, out_index = queue.popleft()
        op_index, created = sketch.add(
            (prefix, "op", id(fn)),
            lambda f=fn: Item("op", _describe_op, f, f"{_op_name(f)} op", cluster),
        )
        sketch.edge(op_index, out_index, "data")
        if not created:
            continue
        edges = fn.input_edges
        # inputs_meta is computed per access, and only inputs without an edge need it
        metas = fn.inputs_meta if isinstance(fn, OpNode) and _has_edgeless(edges) else None
        for i, edge in enumerate(edges):
            key, tensor, producer, extra = _input_of(fn, edge, i, metas)
            if key[0] == "const" and extra is None:
                continue  # a custom Function's non-tensor argument: nothing to draw
            if key[0] == "const":
                make = lambda v=extra: Item(
                    "nograd", _describe_constant, (v, ctx), "constant", cluster
                )
            else:
                make = lambda t=tensor, m=extra: _tensor_item(t, ctx, cluster, m)
            in_index, new = sketch.add((prefix,) + key, make)
            if new and producer is not None:
                queue.append((producer, in_index))
            sketch.edge(in_index, op_index, "data", _operand(fn, i, len(edges)))


# ----------------------------------------------------------------------------- backward


def backward_sketch(
    sketch: Sketch, outputs: Sequence[Tensor], ctx: _Context, cluster: str | None = None
) -> None:
    """Add the backward graph of ``outputs``: grad_fn nodes, AccumulateGrad, saved values."""
    prefix = cluster or ""
    queue: deque = deque()

    def node_index(fn: Any) -> int:
        index, created = sketch.add((prefix, "fn", id(fn)), lambda: _grad_fn_item(fn, ctx, cluster))
        if created:
            queue.append((fn, index))
        return index

    for tensor in outputs:
        root, _ = sketch.add(
            (prefix, "tensor", id(tensor)), lambda t=tensor: _tensor_item(t, ctx, cluster)
        )
        fn = tensor.grad_fn
        if fn is None and tensor._accumulator_ref is not None:
            fn = tensor._accumulator_ref()  # a leaf output: its AccumulateGrad, if one exists
        if fn is not None:
            sketch.edge(root, node_index(fn), "grad")
    while queue:
        fn, index = queue.popleft()
        if isinstance(fn, AccumulateGrad):
            leaf, _ = sketch.add(
                (prefix, "tensor", id(fn.variable)),
                lambda v=fn.variable: _tensor_item(v, ctx, cluster),
            )
            sketch.edge(index, leaf, "grad")
            continue
        if isinstance(fn, OpNode):
            for role, shape in saved_roles(fn):
                saved, _ = sketch.add(
                    (prefix, "saved", id(fn), role),
                    lambda f=fn, r=role, s=shape: Item(
                        "saved",
                        _describe_saved,
                        (f, r, s, ctx),
                        "saved value",
                        cluster,
                        freed=f.freed,
                    ),
                )
                sketch.edge(saved, index, "saved")
        edges = fn.input_edges
        for i, (child, _) in enumerate(edges):
            if child is not None:
                sketch.edge(index, node_index(child), "grad", _operand(fn, i, len(edges)))


def _grad_fn_item(fn: Any, ctx: _Context, cluster: str | None) -> Item:
    if isinstance(fn, AccumulateGrad):
        return Item("accumulate", _describe_grad_fn, (fn, ctx), "AccumulateGrad node", cluster)
    # not faded after backward: the node and its links remain, only its saved values go
    return Item("grad_fn", _describe_grad_fn, (fn, ctx), fn.name(), cluster)


# ----------------------------------------------------------------------------- gradients


def arriving_gradients(
    outputs: Sequence[Tensor], gradients: Any = True, names: Mapping[int, str] | None = None
) -> dict[int, tuple]:
    """The gradient arriving at each backward node of ``outputs``, by ``id(node)``.

    For an op node: the gradient of the root with respect to each of the node's outputs
    (what its backward receives).  For an ``AccumulateGrad``: the gradient it would add
    to its leaf's ``.grad``.  ``gradients`` is ``True`` (scalar outputs, seeded with 1,
    as ``backward()``), or the gradient to start from: one tensor, or one per output.
    ``names`` (``id(tensor) -> name``) make the error messages speak the caller's names.

    One ``autograd.grad(outputs, leaves, retain_graph=True)`` pass with a temporary
    pre-hook on every node: nothing is accumulated into any ``.grad`` (``retain_grad``
    tensors included), the graph is not freed, and every hook is removed afterwards.
    Hooks the graph already had run as in any backward pass.

    >>> import naivegraph as ng
    >>> w = ng.tensor(3.0, requires_grad=True)
    >>> y = w * w
    >>> accumulate = y.grad_fn.next_functions[0][0]
    >>> found = arriving_gradients([y])
    >>> found[id(y.grad_fn)], found[id(accumulate)], w.grad
    ((array(1., dtype=float32),), (array(6., dtype=float32),), None)
    """
    seeds = _seeds(outputs, gradients, names or {})
    nodes = _reachable_nodes(outputs)
    accumulators = [n for n in nodes if isinstance(n, AccumulateGrad)]
    found: dict[int, tuple] = {}

    def keep(node: Node) -> Any:
        def hook(grads: tuple) -> None:
            found[id(node)] = tuple(
                None if g is None else np.array(g._data, copy=True) for g in grads
            )

        return hook

    undo = [_without_retained_grads(n) for n in nodes]
    undo += [_temporary_prehook(n, keep(n)) for n in nodes if not isinstance(n, AccumulateGrad)]
    try:
        leaves = [acc.variable for acc in accumulators]
        captured = autograd_grad(list(outputs), leaves, seeds, retain_graph=True, allow_unused=True)
    except RuntimeError as error:
        if str(error) != SECOND_BACKWARD:
            raise
        raise RuntimeError(
            "gradients=True runs a backward pass through the graph, but it was already "
            "freed by backward() (the values its nodes saved are gone).  Draw it before "
            "calling backward(), or call backward(retain_graph=True)"
        ) from None
    finally:
        for restore in reversed(undo):
            restore()
    for acc, g in zip(accumulators, captured):
        if g is not None:
            found[id(acc)] = (g._data,)
    return found


def _seeds(outputs: Sequence[Tensor], gradients: Any, names: Mapping[int, str]) -> list:
    """The gradient each output starts from (None: an implicit 1 for a scalar)."""
    for i, tensor in enumerate(outputs):
        if not tensor.requires_grad:
            raise ValueError(
                f"gradients= needs outputs that require grad, but output {i} "
                f"({_what(tensor, names)}) does not: compute it from leaves created with "
                "requires_grad=True"
            )
    if gradients is True:
        for tensor in outputs:
            if tensor._data.size != 1:
                raise RuntimeError(
                    "grad can be implicitly created only for scalar outputs: "
                    f"{_what(tensor, names)} has shape {format_shape(tensor.shape)}.  Pass the "
                    "gradient to start from, e.g. gradients=ng.ones_like(out), as "
                    "out.backward(gradient) takes it"
                )
        return [None] * len(outputs)
    seeds = list(gradients) if isinstance(gradients, (list, tuple)) else [gradients]
    if len(seeds) != len(outputs):
        raise ValueError(
            f"gradients= has {len(seeds)} gradients for {len(outputs)} outputs: "
            "give one per output (or True for scalar outputs)"
        )
    return seeds


def _what(tensor: Tensor, names: Mapping[int, str]) -> str:
    return names.get(id(tensor), "the output")


def _reachable_nodes(outputs: Sequence[Tensor]) -> list[Node]:
    """Every backward node reachable from ``outputs``, breadth-first."""
    starts = [t._edge()[0] for t in outputs]
    seen: set[int] = set()
    nodes: list[Node] = []
    queue = deque(n for n in starts if n is not None)
    while queue:
        node = queue.popleft()
        if id(node) in seen:
            continue
        seen.add(id(node))
        nodes.append(node)
        queue.extend(child for child, _ in node.next_functions if child is not None)
    return nodes


def _temporary_prehook(node: Node, hook: Any) -> Any:
    """Register ``hook`` on ``node``; return what removes it and leaves ``node`` as it was."""
    had_hooks = node._hooks is not None
    had_pre = had_hooks and node._hooks.pre is not None
    handle = node.register_prehook(hook)

    def restore() -> None:
        handle.remove()
        if not had_hooks:
            node._hooks = None  # the engine takes its fast path for nodes without hooks
        elif not had_pre:
            node._hooks.pre = None

    return restore


def _without_retained_grads(node: Node) -> Any:
    """Stop ``node`` from writing ``retain_grad`` tensors' ``.grad`` until restored."""
    hooks = node._hooks
    retained = hooks.retained if hooks is not None else None
    if not retained:
        return lambda: None
    hooks.retained = None

    def restore() -> None:
        hooks.retained = retained

    return restore


# ----------------------------------------------------------------------------- entry


def as_tensors(obj: Any) -> list[Tensor]:
    """One tensor or an iterable of tensors, as a list (anything else is a TypeError)."""
    items = [obj] if isinstance(obj, Tensor) else list(obj)
    for t in items:
        if not isinstance(t, Tensor):
            raise TypeError(f"expected dynamic tensors, got {type(t).__name__}")
    return items


def dynamic_sketch(
    outputs: Iterable[Tensor],
    kind: str,
    names: dict[int, str],
    show_values: bool = True,
    gradients: Any = False,
    arriving: dict[int, tuple] | None = None,
) -> Sketch:
    """The sketch of ``kind`` ("forward", "backward" or "both") for ``outputs``;
    ``gradients`` (see :func:`arriving_gradients`) labels the backward nodes, or
    ``arriving`` when the caller computed them already (by ``id(node)``)."""
    outputs = as_tensors(outputs)
    if arriving is None and gradients is not False:
        arriving = arriving_gradients(outputs, gradients, names)
    ctx = _Context(names, show_values, outputs, arriving)
    sketch = Sketch()
    if kind == "forward":
        forward_sketch(sketch, outputs, ctx)
    elif kind == "backward":
        backward_sketch(sketch, outputs, ctx)
    elif kind == "both":
        sketch.clusters["forward"] = dict(
            label="forward: values flow down", style="rounded", color="#90a4ae", fontsize="12"
        )
        sketch.clusters["backward"] = dict(
            label="backward: gradients flow down", style="rounded", color="#ef9a9a", fontsize="12"
        )
        forward_sketch(sketch, outputs, ctx, cluster="forward")
        backward_sketch(sketch, outputs, ctx, cluster="backward")
    else:
        raise ValueError(f"kind must be 'forward', 'backward' or 'both', not {kind!r}")
    if arriving is not None:
        sketch.legend_rows.append(
            ("∂/∂", GRADIENT_COLOR, f"gradient of {ctx.root_name} arriving at the node")
        )
    return sketch


# ----------------------------------------------------------------------------- details
# What the details panel of an interactive view shows when a node is clicked
# (registered in dot.DETAILS; see naivegraph/render/interactive.py).


def _tensor_kind(tensor: Tensor) -> str:
    if tensor.grad_fn is not None:
        return "intermediate result (non-leaf)"
    return "leaf that requires grad" if tensor.requires_grad else "does not require grad"


def _details_tensor(item: Item) -> dict:
    tensor, meta, ctx = item.payload
    if tensor is None:
        shape = format_shape(meta.shape) if meta is not None else "?"
        return {
            "title": "tensor",
            "rows": [["shape", shape], ["value", "no longer alive (only its shape is known)"]],
        }
    name = ctx.names.get(id(tensor))
    rows = [
        ["kind", _tensor_kind(tensor)],
        ["grad_fn", tensor.grad_fn.name() if tensor.grad_fn is not None else "None"],
        ["shape", format_shape(tensor.shape)],
        ["dtype", str(tensor.dtype)],
    ]
    rows.append(["value", summarize(tensor._data)])
    if tensor._grad is not None:  # read directly: .grad warns on non-leaves
        rows.append([".grad", summarize(tensor._grad._data)])
    elif tensor.requires_grad and tensor.grad_fn is None:
        rows.append([".grad", "None (no backward() has reached it yet)"])
    version = "none (an inference tensor)" if tensor.is_inference() else str(tensor._version)
    rows += [["requires_grad", str(tensor.requires_grad)], ["_version", version]]
    title = name or (ctx.root_name if id(tensor) in ctx.output_ids else "tensor")
    return {"title": title, "rows": rows}


def _saved_rows(fn: Node, ctx: _Context) -> list:
    """One row per value ``fn`` saved for backward: its value and version stamp."""
    if not isinstance(fn, OpNode):
        return []
    if fn.freed:
        return [
            [f"saved {role}", f"{format_shape(shape)}: freed by backward()"]
            for role, shape in saved_roles(fn)
        ]
    rows = []
    for position, owner, version in fn.sources:
        role = _role(position)
        value = _saved_value(fn, role)
        text = "" if value is None else summarize(value)
        if position == "out":
            stamp = f"version {version} (now {owner.value})"
        else:
            source = ctx.names.get(id(owner))
            stamp = f"{source or 'input'} at _version {version} (now {owner._version})"
        rows.append([f"saved {role}", f"{text}\n{stamp}".strip()])
    return rows


def _details_op(item: Item) -> dict:
    fn = item.payload
    rows = [["op", _op_name(fn)], ["grad_fn", fn.name()]]
    if isinstance(fn, OpNode):
        if _short_attrs(fn.attrs):
            rows.append(["attributes", _short_attrs(fn.attrs)])
        meta = fn.output_meta
        rows += [["output shape", format_shape(meta.shape)], ["output dtype", str(meta.dtype)]]
    return {"title": _op_name(fn), "rows": rows}


def _details_grad_fn(item: Item) -> dict:
    fn, ctx = item.payload
    if isinstance(fn, AccumulateGrad):
        leaf = fn.variable
        name = ctx.names.get(id(leaf)) or "leaf"
        rows = [["adds into", f"{name}.grad"], ["leaf shape", format_shape(leaf.shape)]]
        if leaf._grad is not None:
            rows.append([f"{name}.grad", summarize(leaf._grad._data)])
        else:
            rows.append([f"{name}.grad", "None"])
        return {"title": "AccumulateGrad", "rows": rows}
    rows = [
        ["grad_fn", fn.name()],
        ["op", _op_name(fn)],
        [
            "next_functions",
            ", ".join("None" if n is None else n.name() for n, _ in fn.next_functions) or "()",
        ],
    ]
    if ctx.arriving is not None and id(fn) in ctx.arriving:
        for i, g in enumerate(ctx.arriving[id(fn)]):
            if g is not None:
                rows.append(
                    [f"gradient arriving ({i})" if i else "gradient arriving", summarize(g)]
                )
    rows += _saved_rows(fn, ctx)
    rows.append(["freed", "yes: backward() ran without retain_graph" if fn.freed else "no"])
    return {"title": fn.name(), "rows": rows}


def _details_saved(item: Item) -> dict:
    fn, role, shape, ctx = item.payload
    source = _saved_source(fn, role)
    name = ctx.names.get(id(source)) if source is not None else None
    rows = [["kept by", fn.name()], ["role", role], ["shape", format_shape(shape)]]
    if name:
        rows.append(["from", name])
    if fn.freed:
        rows.append(["value", "freed by backward() (retain_graph=True keeps it)"])
    else:
        value = _saved_value(fn, role)
        if value is not None:
            rows.append(["value", summarize(value)])
        for position, owner, version in fn.sources:
            if _role(position) == role and position != "out":
                rows.append(["_version", f"saved at {version}, now {owner._version}"])
    return {"title": f"saved {role}", "rows": rows}


def _details_constant(item: Item) -> dict:
    value, _ = item.payload
    return {"title": "constant", "rows": [["value", summarize(np.asarray(value))]]}


DETAILS.update(
    {
        _describe_tensor: _details_tensor,
        _describe_op: _details_op,
        _describe_grad_fn: _details_grad_fn,
        _describe_saved: _details_saved,
        _describe_constant: _details_constant,
    }
)
