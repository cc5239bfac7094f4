"""The static-mode walkthrough: build, run (with the memory plan), backward sweep.

:func:`static_walkthrough` (``ns.walkthrough(loss, feed_dict)``) steps through what a
TF1 / Theano user's training step does with a graph built once: the build (nodes, no
values), one run with the feeds, op by op in the executor's order, with the values
alive after each step (intermediates are freed after their last use unless the
backward sweep needs them), then the numeric backward sweep that ``g.backward(loss)``
runs.  Everything is computed here, on copies: no ``.value``, ``.grad`` or Variable
of the graph changes, and no update (assign, optimiser step) is committed.

Static mode needs numpy only and sits below the renderer, so ``naivegraph/__init__.py``
installs :func:`walkthrough` as ``naivegraph.static.walkthrough``.
"""

from __future__ import annotations

import functools
import html
import os
import sys
from typing import Any, Mapping

import numpy as np

from .. import static
from ..static.executor import Plan, collect_feeds, kept_for_backward, topological_order
from ..static.gradients import flowing
from .dot import Colored, emit, format_shape
from .dynamic import GRADIENT_COLOR
from .static import static_sketch
from .walk import MAX_OPS, VALUE_COLOR, Step, Walkthrough, value_text

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _Names:
    """The Python names the caller gave to operations (``l1 = x * w1``: their node
    names are made up, ``mul_1``), else node names (leaves have the names given)."""

    def __init__(self, aliases: dict[int, str]) -> None:
        self.aliases = aliases

    def __call__(self, node: Any) -> str:
        if node.kind != "operation":
            return node.name
        return self.aliases.get(id(node), node.name)

    def formula(self, node: Any) -> str:
        args = ", ".join(self(i) for i in node.inputs)
        return f"{node.op_name}({args})"

    def titled(self, node: Any) -> str:
        """``l1 = mul(input, w1)  (node 'mul')``."""
        own = "" if self(node) == node.name else f"   (node {node.name!r})"
        return f"{self(node)} = {self.formula(node)}{own}"


def walkthrough(loss: Any, feed_dict: Mapping | None = None) -> Walkthrough:
    """Step through building ``loss``'s graph, one run of it and ``g.backward(loss)``.

    The build (nodes appear, no values), the run with ``feed_dict`` op by op in the
    executor's order with the values alive after each step (intermediates are freed
    after their last use unless the backward sweep needs them), then the numeric sweep
    ``g.backward(loss)`` runs, one VJP per op, down to each Variable's gradient.
    Everything is computed on copies: no ``.value``, ``.grad`` or Variable changes and
    no update is committed.  Steps name nodes by the caller's variables where they have
    one (``l1 = x * w1``).

    Returns a :class:`~naivegraph.render.walk.Walkthrough`: ``.steps``,
    ``.to_html()``, ``.save_html(path)``, Previous / Next in Jupyter.

    >>> import numpy as np, naivegraph.static as ns
    >>> with ns.Graph() as g:
    ...     x = ns.placeholder("x", shape=(2,))
    ...     w = ns.Variable(3.0, name="w")
    ...     loss = ns.sum(x * w)
    >>> steps = ns.walkthrough(loss, {x: np.array([1.0, 2.0])}).steps
    >>> [s.title for s in steps if "collects" in s.title]
    ['backward: w collects its gradient']
    >>> w.grad is None and loss.value is None
    True
    """
    return static_walkthrough(loss, feed_dict, caller_aliases(_PACKAGE_DIR))


def caller_aliases(package_dir: str) -> dict[int, str]:
    """``id(node) -> name`` for static nodes held by local variables of the first frame
    outside naivegraph (so the steps speak the names of the caller's code)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(package_dir):
        frame = frame.f_back
    if frame is None:
        return {}
    aliases: dict[int, str] = {}
    for name, value in frame.f_locals.items():
        if isinstance(value, static.Node) and not name.startswith("_"):
            aliases.setdefault(id(value), name)
    return aliases


def static_walkthrough(
    loss: Any, feed_dict: Mapping | None = None, aliases: dict[int, str] | None = None
) -> Walkthrough:
    """See ``ns.walkthrough``; ``aliases`` (``id(node) -> name``) names nodes."""
    if not isinstance(loss, static.Node):
        raise TypeError(
            "ns.walkthrough() steps through a static graph from one scalar node (the "
            f"loss); got {type(loss).__name__} (for a dynamic tensor use ng.walkthrough)"
        )
    graph = loss.graph
    fed = collect_feeds(graph, feed_dict, {})
    order = topological_order(graph, [loss])
    ops = [n for n in order if isinstance(n, static.Operation)]
    if len(ops) > MAX_OPS:
        raise ValueError(
            f"ns.walkthrough() shows graphs of up to {MAX_OPS} ops, one step each; this "
            f"one has {len(ops)}.  Draw it with ng.render(graph) instead"
        )
    names = _Names(aliases or {})
    keep = kept_for_backward(graph, order)
    plan = Plan(graph, [loss], list(fed), keep=keep, free=True, order=order)
    sketch, _ = static_sketch(loss, "forward", show_values=False)

    def dot_names(nodes: Any) -> list:
        """The sketch indices of ``nodes``: DOT names once the drawing is made."""
        found = (sketch._index.get(("", id(n))) for n in nodes)
        return [i for i in found if i is not None]

    steps = _build_steps(order, names, dot_names)
    values, run_steps, alive = _run_steps(plan, fed, keep, names, dot_names)
    loss_value = values[loss]
    if np.size(loss_value) != 1:
        raise ValueError(
            f"ns.walkthrough() needs a scalar loss to start the backward sweep from; "
            f"{names(loss)} has shape {format_shape(np.shape(loss_value))}"
        )
    steps += run_steps
    grads: dict = {}
    steps += _backward_steps(order, loss, values, grads, names, dot_names)
    for step in steps[len(steps) - len(grads) - 1 :]:
        step.values = dot_names(alive)  # the sweep reads what the run kept
    _label_with_run(sketch, values, grads, names, names(loss))
    from .drawing import new_drawing

    drawing = new_drawing(f"{graph.name}: one training step", "TB", None)
    emit(sketch, drawing, max_nodes=None, legend=True)
    for step in steps:
        for field in ("show", "active", "done", "freed", "grads", "values"):
            indices = getattr(step, field)
            if indices is not None:
                setattr(step, field, [drawing.item_ids[i] for i in indices])
    return Walkthrough(drawing, steps, names(loss), reveal_labels=True)


def _label_with_run(sketch: Any, values: dict, grads: dict, names: _Names, root: str) -> None:
    """Add the run's value (blue) and gradient (red) under each node's label, named as
    the steps name them; the page shows each line from the step that computes it."""
    for item in sketch.items:
        node = item.payload[0]
        lines = []
        if node.kind == "operation" and node in values:
            lines.append(Colored(f"= {value_text(values[node])}", VALUE_COLOR))
        if node in grads:
            lines.append(
                Colored(f"∂{root}/∂{names(node)} = {value_text(grads[node])}", GRADIENT_COLOR)
            )
        if lines:
            item.describe = _with_lines(item.describe, lines)


def _with_lines(describe: Any, lines: list) -> Any:
    @functools.wraps(describe)  # __wrapped__: the details panel stays the node's
    def wrapped(item: Any) -> tuple[str, str]:
        label, tooltip = describe(item)
        extra = "".join(
            f'<br/><font point-size="10" color="{line.color}">{html.escape(line)}</font>'
            for line in lines
        )
        return label[:-1] + extra + ">", tooltip

    return wrapped


def _build_steps(order: list, names: _Names, dot_names: Any) -> list[Step]:
    steps = []
    for k, node in enumerate(order, 1):
        count = f"build {k}/{len(order)}"
        if node.kind == "operation":
            title = f"{count}: {names.titled(node)}"
            lines = [
                f"a node is recorded: op {node.op_name}, shape {format_shape(node.shape)}; "
                f"nothing is computed ({node.name}.value is None)"
            ]
        elif node.kind == "variable":
            title = f"{count}: {names(node)} = Variable({value_text(node.value)})"
            lines = ["a trainable leaf: it keeps its value from run to run"]
        elif node.kind == "placeholder":
            title = f"{count}: {names(node)} = placeholder, shape {format_shape(node.shape)}"
            lines = ["an input: its value is fed when the graph runs"]
        else:
            title = f"{count}: {names(node)} = constant {value_text(node.value)}"
            lines = ["a fixed leaf"]
        if k == len(order):
            lines.append("the graph is built once; every run replays it with new feeds")
        steps.append(Step(title, lines, show=dot_names(order[:k]), active=dot_names([node])))
    return steps


def _run_steps(
    plan: Plan, fed: dict, keep: set, names: _Names, dot_names: Any
) -> tuple[dict, list[Step], list]:
    """One run of ``plan`` as the executor runs it, on copies: every value computed
    (by node), and a step per op with the values alive after it."""
    order = plan.order
    slots = list(plan.template)
    for slot, state in plan.variables:
        slots[slot] = state[0]
    for placeholder, value in fed.items():
        if placeholder in plan.slot:
            slots[plan.slot[placeholder]] = value
    values: dict = {n: slots[i] for i, n in enumerate(order) if slots[i] is not None}
    feeds = ", ".join(f"{names(p)} = {value_text(v)}" for p, v in fed.items()) or "nothing"
    kept = [names(n) for n in order if n in keep and n.kind == "operation"]
    steps = [
        Step(
            "run: the values flow through the graph built before",
            [
                f"feeds: {feeds}; Variables read as they are now",
                "memory plan: each intermediate value is freed right after its last use, "
                "except those the backward sweep needs"
                + (f" (kept: {', '.join(kept)})" if kept else ""),
            ],
            active=dot_names(fed),
        )
    ]
    computed: list = []
    with np.errstate(all="ignore"):
        for k, (fn, ins, out, frees) in enumerate(plan.steps, 1):
            node = order[out]
            slots[out] = fn(*[slots[i] for i in ins])
            values[node] = slots[out]
            computed.append(node)
            for slot in frees:
                slots[slot] = None
            alive = [order[i] for i in range(len(order)) if slots[i] is not None]
            held = [names(n) for n in alive if n.kind == "operation"]
            lines = [
                f"{names(node)} = {value_text(slots[out])}",
                "intermediate values alive after this step: " + (", ".join(held) or "none"),
            ]
            if frees:
                lines.append(
                    "freed now (this was their last use): "
                    + ", ".join(names(order[i]) for i in frees)
                )
            steps.append(
                Step(
                    f"run step {k}/{len(plan.steps)}: {names.titled(node)}",
                    lines,
                    active=dot_names([node]),
                    done=dot_names(computed[:-1]),
                    freed=dot_names(n for n in computed if slots[plan.slot[n]] is None),
                    values=dot_names(n for n in computed if slots[plan.slot[n]] is not None),
                )
            )
    alive = [n for n in computed if slots[plan.slot[n]] is not None]
    return values, steps, alive


def _backward_steps(
    order: list, loss: Any, values: dict, arrived: dict, names: _Names, dot_names: Any
) -> list:
    """The numeric sweep of ``g.backward(loss)``: reverse order, one VJP per op.
    ``arrived`` receives the gradient that reached each node."""
    sources = [n for n in order if (n.kind == "variable" and getattr(n, "trainable", True))] + [
        n for n in order if n.retains_grad
    ]
    flows = flowing(order, sources)
    if loss not in flows:
        return [
            Step(
                "backward: nothing to sweep",
                [f"{names(loss)} depends on no trainable Variable: there is no gradient"],
            )
        ]
    root = names(loss)
    grads: dict = {loss: np.ones_like(np.asarray(values[loss]))}
    received: dict = {loss: []}
    swept: list = []
    steps = []
    with np.errstate(all="ignore"):
        for node in reversed(order):
            g = grads.get(node)
            if g is None or node not in flows:
                continue
            swept.append(node)
            arrived[node] = g
            arriving = _arriving(node, g, received.get(node, []), root, names)
            if node.kind == "variable":
                steps.append(
                    Step(
                        f"backward: {names(node)} collects its gradient",
                        [
                            *arriving,
                            f"g.backward({root}) stores it: {names(node)}.grad = {value_text(g)} "
                            "(it replaces the last one: a static graph does not accumulate)",
                        ],
                        active=dot_names([node]),
                        done=dot_names(swept[:-1]),
                        grads=dot_names(swept),
                    )
                )
                continue
            if node.kind != "operation":
                continue
            needs = [inp in flows for inp in node.inputs]
            inputs = [values[i] for i in node.inputs]
            sent = node.op.pullback(g, inputs, values[node], node.attrs, needs)
            lines = [*arriving, f"its VJP maps ∂{root}/∂{names(node)} to its inputs:"]
            for inp, gi, need in zip(node.inputs, sent, needs):
                if gi is None or not need:
                    lines.append(f"  → {names(inp)}: no gradient needed")
                    continue
                lines.append(f"  → {names(inp)}: ∂{root}/∂{names(inp)} += {value_text(gi)}")
                before = grads.get(inp)
                grads[inp] = gi if before is None else before + gi
                received.setdefault(inp, []).append((node, gi))
            steps.append(
                Step(
                    f"backward: the VJP of {names.titled(node)}",
                    lines,
                    active=dot_names([node]),
                    done=dot_names(swept[:-1]),
                    grads=dot_names(swept),
                )
            )
    variables = [n for n in order if n.kind == "variable"]
    steps.append(
        Step(
            "after the step: nothing was committed",
            [
                "the walkthrough changed no value, .grad or Variable of the graph: "
                + ", ".join(f"{names(v)} is still {value_text(v.value)}" for v in variables),
                "an update (an optimiser's minimize(loss), an assign fetched in g.run) would "
                "now store new values into the Variables, all together at the end of the run",
            ],
            done=dot_names(swept),
            grads=dot_names(swept),
        )
    )
    return steps


def _arriving(node: Any, total: Any, parts: list, root: str, names: _Names) -> list[str]:
    head = f"∂{root}/∂{names(node)}"
    if not parts:
        return [f"{head} = {value_text(total)}   (the seed the sweep starts from)"]
    if len(parts) == 1:
        return [f"{head} = {value_text(total)}"]
    lines = [
        f"{head}: {names(node)} is used {len(parts)} times, so its consumers' gradients add up:"
    ]
    for k, (consumer, g) in enumerate(parts):
        lines.append(f"{'   ' if k == 0 else ' + '}{value_text(g)}   from {names(consumer)}")
    lines.append(f" = {value_text(total)}")
    return lines
