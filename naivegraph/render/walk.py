"""A step-through of one training step, shown on the drawing of its graph.

:class:`Walkthrough` is a drawing plus a list of :class:`Step` s: what happens, in
words and numbers, and which nodes of the drawing exist, run, are done or freed at
that step.  The page pages through them (Previous / Next, ← / →, "step K of N").

Dynamic mode (:func:`dynamic_walkthrough`, ``ng.walkthrough``): the forward build in
the order the ops ran (nodes carry a creation stamp), then the backward pass node by
node as the engine runs it, then what ``backward()`` frees.  The backward steps are
computed here, by calling each node's VJP (its ``apply``) as the engine does, without
the engine: no ``.grad`` is written, nothing is freed, no hook runs.

Static mode: :mod:`naivegraph.render.walk_static`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..dynamic import engine
from ..dynamic.grad_mode import no_grad
from ..dynamic.node import AccumulateGrad, Node, OpNode
from ..dynamic.tensor import Tensor
from .dot import Sketch, emit, format_shape
from .dynamic import (
    _input_of,
    _op_name,
    _reachable_nodes,
    dynamic_sketch,
    format_gradient,
    names_from,
    saved_roles,
)
from .interactive import page, view_html, write_page

#: a walkthrough of more forward ops than this is refused (it would be pages of steps)
MAX_OPS = 200

#: the colour of a static run's values in a walkthrough's labels (view.js reveals them)
VALUE_COLOR = "#0d47a1"


@dataclass
class Step:
    """One step of a walkthrough: its text, and the state of the drawing's nodes (by
    DOT name): ``show`` (None: every node), ``active``, ``done``, ``freed``, and the
    nodes whose gradient (``grads``) and run value (``values``) label lines show."""

    title: str
    lines: list[str]
    show: list[str] | None = None
    active: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    freed: list[str] = field(default_factory=list)
    grads: list[str] = field(default_factory=list)
    values: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The title and the lines, as the page shows them."""
        return "\n".join([self.title, *self.lines])

    def as_data(self) -> dict:
        return {
            "title": self.title,
            "lines": self.lines,
            "show": self.show,
            "active": self.active,
            "done": self.done,
            "freed": self.freed,
            "grads": self.grads,
            "values": self.values,
        }


class Walkthrough:
    """Steps shown on one drawing: ``.steps``, ``.to_html()``, ``.save_html(path)``, and
    an interactive view in Jupyter (Previous / Next, ← / →, "step K of N").

    ``print(walkthrough)`` lists the steps as text.
    """

    def __init__(
        self, drawing: Any, steps: Sequence[Step], label: str, reveal_labels: bool = False
    ) -> None:
        self.drawing = drawing
        self.steps = list(steps)
        self.label = label
        self.reveal_labels = reveal_labels

    def __len__(self) -> int:
        return len(self.steps)

    def __repr__(self) -> str:
        return f"<Walkthrough of {self.label}: {len(self.steps)} steps>"

    def __str__(self) -> str:
        return "\n\n".join(
            f"step {k} of {len(self.steps)}: {step.text}" for k, step in enumerate(self.steps, 1)
        )

    def html_fragment(self) -> str:
        """The view as one ``<div>`` (what Jupyter shows)."""
        return view_html(
            self.drawing.fitted_svg(),
            self.drawing.details,
            label=f"naivegraph walkthrough: {self.label}",
            steps=[s.as_data() for s in self.steps],
            reveal_labels=self.reveal_labels,
        )

    def to_html(self) -> str:
        """A standalone HTML page (everything inline: no request leaves it)."""
        return page(self.html_fragment(), f"walkthrough: {self.label}")

    def save_html(self, path: Any) -> str:
        """Write :meth:`to_html` to ``path`` and return the path."""
        return write_page(path, self.to_html())

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **_: Any) -> dict:
        """The view, and the plain drawing where scripts do not run (untrusted notebooks)."""
        return {
            "text/html": self.html_fragment(),
            "image/svg+xml": self.drawing.fitted_svg(),
            "text/plain": repr(self),
        }


def value_text(value: Any) -> str:
    """``[[7, 7], [7, 7]]`` when small, else the shape and a summary (no leading "=").

    >>> value_text(np.full((2, 2), 7.0)), value_text(np.full((3, 4), 0.5))
    ('[[7, 7], [7, 7]]', '(3, 4) all 0.5')
    """
    text = format_gradient(np.asarray(value))
    return text[2:] if text.startswith("= ") else text


# ----------------------------------------------------------------------------- dynamic


class _Names:
    """Names for what the steps talk about: the caller's names, else descriptions."""

    def __init__(self, names: dict[int, str], output: Tensor, tensors: Iterable[Any]) -> None:
        self.names = names
        self.output = output
        self.root = names.get(id(output), "output")
        # named tensors by the node that made them: how nodes that keep no reference to
        # their output (CopySlices after b[0] = ..., a custom Function's) find its name
        self.by_node = {
            id(t.grad_fn): names[id(t)]
            for t in tensors
            if isinstance(t, Tensor) and t.grad_fn is not None and id(t) in names
        }

    def of_output(self, fn: Node) -> str:
        """The name of the tensor ``fn`` made (``fn``'s op and inputs when unnamed)."""
        if id(fn) in self.by_node:
            return self.by_node[id(fn)]
        ref = fn.output_ref if isinstance(fn, OpNode) else None
        tensor = ref() if ref is not None else None
        if tensor is not None and tensor.grad_fn is fn:
            if id(tensor) in self.names:
                return self.names[id(tensor)]
            if tensor is self.output:
                return self.root
        return self.formula(fn)

    def of_input(self, fn: Node, i: int) -> str:
        metas = fn.inputs_meta if isinstance(fn, OpNode) else None
        key, tensor, producer, extra = _input_of(fn, fn.input_edges[i], i, metas)
        if tensor is not None and id(tensor) in self.names:
            return self.names[id(tensor)]
        if producer is not None:
            return self.of_output(producer)
        if key[0] == "const" and extra is not None:
            return value_text(np.asarray(extra))
        return "tensor"

    def formula(self, fn: Node) -> str:
        count = len(fn.input_edges)
        args = ", ".join(self.of_input(fn, i) for i in range(count))
        return f"{_op_name(fn)}({args})"

    def leaf(self, acc: AccumulateGrad) -> str:
        return self.names.get(id(acc.variable), "leaf")


def _forward_order(nodes: Iterable[Node]) -> list[Node]:
    """The op nodes in the order they were created (their ``_seq`` stamp)."""
    ops = [n for n in nodes if not isinstance(n, AccumulateGrad)]
    if all(hasattr(n, "_seq") for n in ops):
        return sorted(ops, key=lambda n: n._seq)
    # a node made elsewhere carries no stamp: an order that could have run instead
    order = engine.topological_order(ops)[::-1] if ops else []
    return [n for n in order if not isinstance(n, AccumulateGrad)]


def _births(sketch: Sketch, rank: dict[int, int]) -> dict[int, int]:
    """For each sketch item, the forward step (0-based) at which it exists: an op's
    items at its own step, a tensor or AccumulateGrad at the first step next to it."""
    birth: dict[int, int] = {}
    for index, item in enumerate(sketch.items):
        payload = item.payload
        fn = payload if item.style == "op" else None
        if item.style in ("grad_fn", "saved"):  # payload (node, ...)
            fn = payload[0]
        if fn is not None and id(fn) in rank:
            birth[index] = rank[id(fn)]
    neighbours: dict[int, list[int]] = {}
    for tail, head, _, _ in sketch.edges:
        neighbours.setdefault(tail, []).append(head)
        neighbours.setdefault(head, []).append(tail)
    for _ in range(3):  # tensors next to ops; AccumulateGrad next to grad_fns; their leaves
        for index in range(len(sketch.items)):
            if index in birth:
                continue
            known = [birth[n] for n in neighbours.get(index, ()) if n in birth]
            if known:
                birth[index] = min(known)
    return birth


def _hooks_note(node: Node, names: _Names) -> list[str]:
    """What hooks the user registered would do at this node (they are not run here)."""
    lines = []
    hooks = node._hooks
    if isinstance(node, AccumulateGrad):
        leaf = names.leaf(node)
        if getattr(node.variable, "_hooks", None):
            lines.append(
                f"a hook registered with {leaf}.register_hook(...) would run now on "
                f"∂{names.root}/∂{leaf}, before it is added into {leaf}.grad"
            )
    elif hooks is not None and hooks.tensor:
        out = names.of_output(node)
        lines.append(
            f"a hook registered with {out}.register_hook(...) would run now on "
            f"∂{names.root}/∂{out}, before {node.name()}'s VJP"
        )
    if hooks is not None and (hooks.pre or hooks.post):
        lines.append(f"hooks registered on {node.name()} itself would run now")
    if hooks is not None and hooks.retained:
        out = names.of_output(node)
        lines.append(f"{out}.retain_grad(): backward() would keep this gradient in {out}.grad")
    if lines:
        lines.append("(the walkthrough runs no hook: it changes nothing)")
    return lines


@dataclass
class _Visit:
    """One node the simulated backward pass ran: what reached it and what it sent."""

    node: Node
    received: list[tuple[Node | None, np.ndarray]]  # (consumer, gradient); None: the seed
    total: np.ndarray
    sent: list[np.ndarray | None]


def _simulate_backward(output: Tensor, gradient: Any) -> tuple[list[_Visit], str | None]:
    """The backward pass of ``output`` as the engine runs it, node by node, changing
    nothing: each node's VJP (``apply``) is called on the summed gradient; no hook runs,
    no ``.grad`` is written, nothing is freed.  Returns the visits and, when a VJP
    raised (as ``backward()`` would), its message."""
    ((root, output_nr, seed),) = engine._roots([output], [gradient], False)
    order = engine.topological_order([root])
    pending: dict[Node, list] = {}
    received: dict[Node, list] = {root: [(None, np.asarray(seed))]}
    engine.add_gradient(pending, root, output_nr, np.asarray(seed))
    visits: list[_Visit] = []
    with no_grad(), np.errstate(all="ignore"):
        for node in order:
            grads = pending.pop(node, None)
            if grads is None:
                continue
            total = grads[0] if len(grads) == 1 else grads
            if isinstance(node, AccumulateGrad):
                visits.append(_Visit(node, received.get(node, []), np.asarray(total), []))
                continue
            try:
                sent = node.apply(list(grads), False)
            except RuntimeError as error:
                return visits, str(error)
            sent = [None if g is None else np.array(getattr(g, "_data", g)) for g in sent]
            visits.append(_Visit(node, received.get(node, []), np.asarray(total), sent))
            for (child, nr), g in zip(node.next_functions, sent):
                if child is not None and g is not None:
                    engine.add_gradient(pending, child, nr, g)
                    received.setdefault(child, []).append((node, g))
    return visits, None


def _arriving_text(visit: _Visit, target: str, names: _Names) -> list[str]:
    """``∂loss/∂l1 = ...``; for a tensor used several times, the sum over its consumers
    written out, one line per consumer."""
    head = f"∂{names.root}/∂{target}"
    parts = visit.received
    if len(parts) == 1 and parts[0][0] is None:
        return [f"{head} = {value_text(visit.total)}   (the seed backward() starts from)"]
    if len(parts) <= 1:
        return [f"{head} = {value_text(visit.total)}"]
    lines = [f"{head}: {target} is used {len(parts)} times, so its consumers' gradients add up:"]
    for k, (consumer, g) in enumerate(parts):
        sign = "   " if k == 0 else " + "
        lines.append(
            f"{sign}{value_text(g)}   from {consumer.name()} ({names.of_output(consumer)})"
        )
    lines.append(f" = {value_text(visit.total)}")
    return lines


def _vjp_lines(visit: _Visit, names: _Names) -> list[str]:
    fn = visit.node
    out = names.of_output(fn)
    lines = []
    if isinstance(fn, OpNode):
        for position, _, _ in fn.sources:
            role = "result" if position == "out" else f"input {position}"
            who = out if position == "out" else names.of_input(fn, position)
            value = fn.saved_array(position)
            lines.append(f"uses its saved {role} ({who}) = {value_text(value)}")
    lines.append(f"its VJP maps ∂{names.root}/∂{out} to one gradient per input:")
    edges = fn.input_edges
    sent = _sent_per_input(fn, visit.sent)
    for i in range(len(edges)):
        name = names.of_input(fn, i)
        g = sent[i]
        if g is None:
            lines.append(f"  → {name}: no gradient (it does not require grad)")
            continue
        text = f"  → {name}: ∂{names.root}/∂{name} += {value_text(g)}"
        out_shape = getattr(getattr(fn, "output_meta", None), "shape", None)
        if out_shape is not None and tuple(np.shape(g)) != tuple(out_shape):
            shapes = f"{format_shape(out_shape)} → {format_shape(np.shape(g))}"
            bigger = np.size(g) > int(np.prod(out_shape))
            text += (
                f"   (spread back over its elements: {shapes})"
                if bigger
                else (f"   (summed over the broadcast: {shapes})")
            )
        lines.append(text)
    return lines


def _sent_per_input(fn: Node, sent: list) -> list:
    """The gradients ``apply`` returned (one per edge), one per input of the op."""
    positions = fn.op.edge_inputs if isinstance(fn, OpNode) else None
    if positions is None:
        return list(sent) + [None] * (len(fn.input_edges) - len(sent))
    per_input: list = [None] * len(fn.input_edges)
    for position, g in zip(positions, sent):
        per_input[position] = g
    return per_input


def dynamic_walkthrough(
    output: Any, gradient: Any = None, params: Mapping[str, Any] | None = None
) -> Walkthrough:
    """The walkthrough of ``output``'s graph: forward build, backward, freeing.

    See ``ng.walkthrough``.  ``params`` names tensors (``{"w1": w1}``).
    """
    if not isinstance(output, Tensor):
        raise TypeError(
            "walkthrough() steps through the graph of one Tensor (the loss, usually); "
            f"got {type(output).__name__}"
        )
    if output.grad_fn is None:
        raise ValueError(
            "walkthrough() needs an output computed from tensors that require grad: this "
            "tensor has no grad_fn (create the leaves with requires_grad=True, outside "
            "no_grad(), before computing it)"
        )
    nodes = _reachable_nodes([output])
    ops = _forward_order(nodes)
    if len(ops) > MAX_OPS:
        raise ValueError(
            f"walkthrough() shows graphs of up to {MAX_OPS} ops, one step each; this one "
            f"has {len(ops)}.  Step through a smaller example, or draw this graph with "
            "ng.render(output, kind='both')"
        )
    names = _Names(names_from(params), output, (params or {}).values())
    freed = [n for n in nodes if n.freed]
    visits: list[_Visit] = []
    error = None
    if not freed:
        visits, error = _simulate_backward(output, gradient)
    else:
        engine._roots([output], [gradient], False)  # the errors backward() would give
    arriving = {id(v.node): (v.total,) for v in visits}
    sketch = dynamic_sketch(
        [output], "both", names.names, True, arriving=arriving if visits else None
    )
    from .drawing import new_drawing

    drawing = new_drawing(None, "TB", None)
    emit(sketch, drawing, max_nodes=None, legend=True)
    drawing.halves = ("forward", "backward")
    ids = _Ids(sketch, drawing)
    steps = _forward_steps(ops, names, ids, sketch)
    if freed:
        steps.append(_already_freed_step(output, nodes, names, ids))
    else:
        steps += _backward_steps(visits, names, ids)
        if error is not None:
            steps.append(
                Step(
                    "backward() would stop here with an error",
                    [error],
                    active=[],
                    done=ids.fns([v.node for v in visits]),
                    grads=ids.fns([v.node for v in visits]),
                )
            )
        else:
            steps.append(_freeing_step(visits, output, names, ids))
    return Walkthrough(drawing, steps, names.root, reveal_labels=bool(visits))


class _Ids:
    """DOT names of the drawing's items, found by what they show."""

    def __init__(self, sketch: Sketch, drawing: Any) -> None:
        self.sketch = sketch
        self.item_ids = drawing.item_ids

    def of(self, *key: Any) -> str | None:
        index = self.sketch._index.get(key)
        return None if index is None else self.item_ids.get(index)

    def fn(self, node: Node) -> str | None:
        return self.of("backward", "fn", id(node))

    def fns(self, nodes: Iterable[Node]) -> list[str]:
        return [i for i in (self.fn(n) for n in nodes) if i is not None]

    def forward_op(self, node: Node) -> list[str]:
        found = [self.of("forward", "op", id(node)), self.of("forward", "out", id(node), 0)]
        return [i for i in found if i is not None]

    def saved(self, node: Node) -> list[str]:
        if not isinstance(node, OpNode):
            return []
        found = [self.of("backward", "saved", id(node), role) for role, _ in saved_roles(node)]
        return [i for i in found if i is not None]

    def leaf(self, acc: AccumulateGrad) -> list[str]:
        found = [self.fn(acc), self.of("backward", "tensor", id(acc.variable))]
        return [i for i in found if i is not None]


def _saved_name(fn: OpNode, role: str, names: _Names) -> str:
    """``input 0 (l2)``: a saved value and the tensor it is."""
    who = names.of_output(fn) if role == "result" else names.of_input(fn, int(role.split()[1]))
    return f"{role} ({who})"


def _forward_steps(ops: list[Node], names: _Names, ids: _Ids, sketch: Sketch) -> list[Step]:
    rank = {id(fn): k for k, fn in enumerate(ops)}
    birth = _births(sketch, rank)
    steps = []
    for k, fn in enumerate(ops):
        out = names.of_output(fn)
        formula = names.formula(fn)
        title = f"forward {k + 1}/{len(ops)}: {out} = {formula}"
        if out == formula:
            title = f"forward {k + 1}/{len(ops)}: {formula}"
        lines = []
        tensor = fn.output_ref() if isinstance(fn, OpNode) and fn.output_ref else None
        if tensor is not None:
            lines.append(
                f"computed at once (eager): {out} = {value_text(tensor._data)}, shape "
                f"{format_shape(tensor.shape)}"
            )
        edges = ", ".join(
            "None" if child is None else child.name() for child, _ in fn.next_functions
        )
        lines.append(f"and recorded: {out}.grad_fn = {fn.name()}, next_functions = ({edges})")
        if isinstance(fn, OpNode):
            roles = [_saved_name(fn, role, names) for role, _ in saved_roles(fn)]
            lines.append(
                "saved for backward: " + ", ".join(roles)
                if roles
                else f"saves nothing for backward ({_op_name(fn)}'s VJP needs no values)"
            )
        if k == len(ops) - 1:
            lines.append(f"{names.root} is the output: backward() starts here")
        shown = [ids.item_ids[i] for i, b in birth.items() if b <= k and i in ids.item_ids]
        active = ids.forward_op(fn) + ([ids.fn(fn)] if ids.fn(fn) else [])
        steps.append(Step(title, lines, show=sorted(shown), active=active))
    return steps


def _backward_steps(visits: list[_Visit], names: _Names, ids: _Ids) -> list[Step]:
    steps = []
    ran: list[Node] = []
    for j, visit in enumerate(visits, 1):
        fn = visit.node
        count = f"backward {j}/{len(visits)}"
        if isinstance(fn, AccumulateGrad):
            leaf = names.leaf(fn)
            variable = fn.variable
            lines = _arriving_text(visit, leaf, names)
            if variable._grad is None:
                lines.append(f"{leaf}.grad = {value_text(visit.total)}")
            else:
                old = variable._grad._data
                lines.append(
                    f"{leaf}.grad = {value_text(old)} + {value_text(visit.total)} = "
                    f"{value_text(old + visit.total)}   (backward() adds to what .grad "
                    "holds: zero it between training steps)"
                )
            lines.append(f"(the walkthrough itself writes nothing: {leaf}.grad is unchanged)")
            lines += _hooks_note(fn, names)
            title = f"{count}: AccumulateGrad adds into {leaf}.grad"
            active = ids.leaf(fn)
        else:
            out = names.of_output(fn)
            lines = [*_arriving_text(visit, out, names), *_vjp_lines(visit, names)]
            lines += _hooks_note(fn, names)
            title = f"{count}: {fn.name()} runs (the backward of {out} = {names.formula(fn)})"
            if out == names.formula(fn):
                title = f"{count}: {fn.name()} runs (the backward of {out})"
            active = [i for i in [ids.fn(fn)] if i] + ids.saved(fn) + ids.forward_op(fn)
        done = ids.fns(ran)
        ran.append(fn)
        steps.append(Step(title, lines, active=active, done=done, grads=ids.fns(ran)))
    return steps


def _freeing_step(visits: list[_Visit], output: Tensor, names: _Names, ids: _Ids) -> Step:
    freed_ids: list[str] = []
    what = []
    for visit in visits:
        fn = visit.node
        if isinstance(fn, OpNode):
            what += [f"{fn.name()}'s saved {_saved_name(fn, r, names)}" for r, _ in saved_roles(fn)]
            freed_ids += ids.saved(fn)
    grads = []
    for visit in visits:
        if isinstance(visit.node, AccumulateGrad):
            leaf = visit.node.variable
            total = visit.total if leaf._grad is None else leaf._grad._data + visit.total
            grads.append(f"{names.leaf(visit.node)}.grad = {value_text(total)}")
    lines = [
        "without retain_graph=True, backward() frees what the nodes saved for it: "
        + (", ".join(what) if what else "(these nodes saved nothing)"),
        "the grad_fn nodes stay linked, but a second backward() through them raises "
        '"Trying to backward through the graph a second time"; '
        f"{names.root}.backward(retain_graph=True) keeps the saved values",
        "the leaves keep their gradients: " + ", ".join(grads),
        "the next forward pass builds a new graph",
    ]
    ran = ids.fns([v.node for v in visits])
    return Step("after backward(): what it frees", lines, done=ran, freed=freed_ids, grads=ran)


def _already_freed_step(output: Tensor, nodes: list[Node], names: _Names, ids: _Ids) -> Step:
    leaves = [n for n in nodes if isinstance(n, AccumulateGrad)]
    grads = [
        f"{names.leaf(acc)}.grad = "
        + ("None" if acc.variable._grad is None else value_text(acc.variable._grad._data))
        for acc in leaves
    ]
    freed = [n for n in nodes if isinstance(n, OpNode) and n.freed and saved_roles(n)]
    return Step(
        "backward() already ran on this graph and freed it",
        [
            "a backward() without retain_graph=True freed the values these nodes saved ("
            + ", ".join(f"{n.name()} of {names.of_output(n)}" for n in freed)
            + "): the backward pass cannot be stepped through again",
            "what is left: the forward values and the leaves' gradients: " + ", ".join(grads),
            "to step through backward, make the walkthrough before calling backward(), or "
            f"call {names.root}.backward(retain_graph=True)",
        ],
        freed=[i for n in freed for i in ids.saved(n)],
    )
