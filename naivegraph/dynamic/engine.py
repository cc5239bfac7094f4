"""The backward engine: reverse-mode automatic differentiation over ``grad_fn`` nodes.

Read :func:`execute` and :func:`backward_pass` top to bottom: that is the whole
algorithm.  Every recorded op left a node; the nodes are put in an order where each
one comes before the nodes of its inputs, and then each node turns the gradient of its
output into gradients of its inputs (its VJP), which are summed per input until that
input's own node runs.  Leaves collect what reaches them into ``.grad``.

Iterative throughout (no recursion, so million-op chains work) and linear in the size
of the graph.  What happens at a node besides its VJP (hooks, leaves, ``retain_grad``,
``autograd.grad``'s capture) is the :class:`~naivegraph.dynamic.hooks.Visitor`'s job;
the speed tricks live in :mod:`naivegraph.fast`, which may replace :func:`execute`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .anomaly_mode import mode as anomaly
from .grad_mode import set_grad_enabled
from .hooks import AnomalyVisitor, Visitor
from .node import Node, as_tensor, is_tensor


def execute(
    outputs: Sequence,
    gradients: Sequence,
    keep_graph: bool,
    create_graph: bool,
    capture: Sequence | None = None,
    accumulate_into: Sequence | None = None,
) -> list:
    """Run backward from ``outputs``, seeded with ``gradients``.

    ``capture``: return the gradients reaching these tensors instead of accumulating
    (``autograd.grad``).  ``accumulate_into``: accumulate only into these (``inputs=``).
    """
    roots = _roots(outputs, gradients, create_graph)
    order = topological_order([node for node, _, _ in roots])
    visitor = (AnomalyVisitor if anomaly.enabled else Visitor)(
        order, create_graph, capture, accumulate_into
    )
    # inf - inf in a sum of gradients is NaN, silently, as in torch
    with np.errstate(all="ignore"):
        with set_grad_enabled(create_graph):  # create_graph: the VJPs are recorded too
            backward_pass(order, roots, visitor, keep_graph)
        visitor.write_gradients()
    return visitor.found()


def backward_pass(order: list[Node], roots: list, visitor: Visitor, keep_graph: bool) -> None:
    """Push gradients from the roots through ``order`` to the leaves."""
    pending: dict[Node, list] = {}  # node -> the gradient of each of its outputs, summed
    for node, output_nr, grad in roots:
        add_gradient(pending, node, output_nr, grad)
    ran = []
    for node in order:
        grads = pending.pop(node, None)
        if grads is None:
            continue  # no gradient reached this node
        grad_inputs = visitor.visit(node, grads)  # its VJP (and hooks; leaves: stored)
        if grad_inputs is None:
            continue
        ran.append(node)
        for (child, output_nr), grad in zip(node.next_functions, grad_inputs):
            if child is not None and grad is not None:
                add_gradient(pending, child, output_nr, grad)
    if not keep_graph:  # free what the VJPs saved: a second backward must be asked for
        for node in ran:
            node.release()


def add_gradient(pending: dict, node: Node, output_nr: int, grad) -> None:
    """Sum ``grad`` into what ``node``'s output ``output_nr`` has received so far."""
    slot = pending.get(node)
    if slot is None:
        slot = pending[node] = [None] * node.num_outputs
    current = slot[output_nr]
    slot[output_nr] = grad if current is None else current + grad


def topological_order(roots: Sequence[Node]) -> list[Node]:
    """Nodes reachable from ``roots``, every consumer before what it consumes
    (an iterative depth-first search, reversed post-order)."""
    postorder: list[Node] = []
    seen: set[Node] = set()
    for root in roots:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(root.next_functions))]
        while stack:
            node, children = stack[-1]
            for child, _ in children:
                if child is not None and child not in seen:
                    seen.add(child)
                    stack.append((child, iter(child.next_functions)))
                    break
            else:
                stack.pop()
                postorder.append(node)
    postorder.reverse()
    return postorder


def _roots(outputs: Sequence, gradients: Sequence, create_graph: bool) -> list:
    """(node, output_nr, gradient) where the pass starts, one per output."""
    roots = []
    for i, (tensor, gradient) in enumerate(zip(outputs, gradients)):
        if not tensor._requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have "
                "a grad_fn (call .requires_grad_() on a leaf, or check that "
                "no_grad() was not active when it was computed)"
            )
        roots.append(
            (
                tensor._edge()[0],
                tensor._output_nr,
                _root_gradient(tensor, gradient, i, create_graph),
            )
        )
    return roots


def _root_gradient(tensor, gradient, index: int, create_graph: bool):
    if gradient is None:
        if tensor._data.size != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        return np.ones_like(tensor._data)
    if not is_tensor(gradient):
        gradient = as_tensor(np.asarray(gradient, dtype=tensor._data.dtype))
    if gradient.shape != tensor.shape:
        raise RuntimeError(
            f"Mismatch in shape: grad_output[{index}] has a shape of {gradient.shape} and "
            f"output[{index}] has a shape of {tensor.shape}."
        )
    return gradient if create_graph else gradient._data


def backward(
    tensors,
    grad_tensors=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs=None,
) -> None:
    """Accumulate gradients of ``tensors`` into the leaves' ``.grad`` (torch.autograd.backward)."""
    tensors = [tensors] if is_tensor(tensors) else list(tensors)
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    elif is_tensor(grad_tensors):
        grad_tensors = [grad_tensors]
    if inputs is not None:
        inputs = [inputs] if is_tensor(inputs) else list(inputs)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    _check_gradient_count(tensors, grad_tensors)
    keep = create_graph if retain_graph is None else retain_graph
    execute(tensors, list(grad_tensors), keep, create_graph, accumulate_into=inputs)


def _check_gradient_count(outputs: list, gradients) -> None:
    """One gradient per output, or the extra outputs would be silently dropped."""
    if len(gradients) != len(outputs):
        raise RuntimeError(
            f"got {len(outputs)} tensors and {len(gradients)} gradients: "
            "pass one gradient (or None) per output."
        )


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
    materialize_grads: bool = False,
) -> tuple:
    """Gradients of ``outputs`` with respect to ``inputs``, returned, not accumulated.

    An input the outputs do not use is an error, or None with ``allow_unused=True``, or
    zeros with ``materialize_grads=True`` (which implies ``allow_unused``).

    >>> import naivegraph as ng
    >>> x = ng.tensor(3.0, requires_grad=True)
    >>> (dx,) = ng.autograd.grad(x ** 3, x, create_graph=True)
    >>> dx, ng.autograd.grad(dx, x)[0]
    (tensor(27., grad_fn=<MulBackward0>), tensor(18.))
    """
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    allow_unused = bool(allow_unused) or materialize_grads
    outputs = [outputs] if is_tensor(outputs) else list(outputs)
    single = is_tensor(inputs)
    inputs = [inputs] if single else list(inputs)
    for t in inputs:
        if not is_tensor(t):
            raise TypeError(f"grad(): inputs must be Tensors, got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif is_tensor(grad_outputs):
        grad_outputs = [grad_outputs]
    _check_gradient_count(outputs, grad_outputs)
    keep = create_graph if retain_graph is None else retain_graph
    found = execute(outputs, list(grad_outputs), keep, create_graph, capture=inputs)
    results = []
    for g, t in zip(found, inputs):
        if g is None and materialize_grads:  # as torch: zeros, requiring grad under create_graph
            results.append(as_tensor(np.zeros_like(t._data)).requires_grad_(create_graph))
        elif g is None:
            if not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been "
                    "used in the graph. Set allow_unused=True if this is the "
                    "desired behavior."
                )
            results.append(None)
        else:
            results.append(as_tensor(g) if create_graph else as_tensor(np.array(g, copy=True)))
    return tuple(results)
