"""The backward engine: walks ``grad_fn`` nodes from the outputs to the leaves.

Iterative throughout (no recursion, so million-op chains work) and linear in the size
of the graph: one depth-first pass orders the nodes, one pass runs them.  Leaf
gradients are written only after the whole pass succeeded, so a hook that raises
leaves every ``.grad`` as it was.
"""

from __future__ import annotations

import gc
import sys
from typing import Sequence

import numpy as np

from .grad_mode import _state
from .anomaly_mode import check_outputs, warn_error_in
from .anomaly_mode import mode as anomaly
from .node import AccumulateGrad, Node, data_shape_changed
from .tensor import Tensor


def _topological_order(roots: Sequence[Node]) -> list[Node]:
    """Nodes reachable from ``roots``, every consumer before what it consumes."""
    postorder: list[Node] = []
    seen: set[Node] = set()  # nodes hash by identity
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


def _nodes_leading_to(order: list[Node], targets: set[int]) -> set[int]:
    """ids of nodes from which some target node can be reached."""
    useful: set[int] = set()
    for node in reversed(order):  # producers first: children are decided before parents
        if id(node) in targets or any(
                child is not None and id(child) in useful for child, _ in node.next_functions):
            useful.add(id(node))
    return useful


def _root_gradient(tensor: Tensor, gradient, index: int, create_graph: bool):
    if gradient is None:
        if tensor._data.size != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        return np.ones_like(tensor._data)
    if not isinstance(gradient, Tensor):
        gradient = Tensor._make(np.asarray(gradient, dtype=tensor._data.dtype), False, None, 0)
    if gradient.shape != tensor.shape:
        raise RuntimeError(
            f"Mismatch in shape: grad_output[{index}] has a shape of {gradient.shape} and "
            f"output[{index}] has a shape of {tensor.shape}.")
    return gradient if create_graph else gradient._data


def _as_tensor(grad) -> Tensor:
    return grad if isinstance(grad, Tensor) else Tensor._make(grad, False, None, 0)


def _for_hook(grad) -> Tensor | None:
    """The gradient as a tensor user code may read, keep, or even change in place."""
    if grad is None or isinstance(grad, Tensor):
        return grad
    if not grad.flags.writeable:  # a broadcast view: give the hook its own copy
        grad = grad.copy()
    return Tensor._make(grad, False, None, 0)


def _from_hook(hook, result, shown, create_graph: bool):
    """A hook's return value: None keeps the (perhaps changed) ``shown``; a tensor replaces it."""
    if result is None:
        result = shown
    elif not isinstance(result, Tensor):
        raise TypeError(f"a gradient hook must return a Tensor or None, got {type(result).__name__}")
    elif shown is not None:
        _check_replacement(hook, result, shown)
    return result if create_graph or result is None else result._data


def _check_replacement(hook, result: Tensor, shown: Tensor) -> None:
    """A replacement gradient must look like the one it replaces, or a leaf would store
    a .grad of the wrong shape or dtype and fail later, far from the hook (as torch)."""
    name = getattr(hook, "__name__", type(hook).__name__)
    if result.shape != shown.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value: the gradient has "
                           f"shape {tuple(shown.shape)}, the hook returned shape "
                           f"{tuple(result.shape)}. Return a gradient of the same shape.")
    if result.dtype != shown.dtype:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {shown.dtype} "
                           f"got {result.dtype}). Return a gradient of the same dtype, "
                           "e.g. with .to(grad.dtype).")


def _apply_hook(hook, grad, create_graph: bool):
    shown = _for_hook(grad)
    return _from_hook(hook, hook(shown), shown, create_graph)


def _apply_tuple_hook(hook, grads: list, *more: list, create_graph: bool) -> list:
    """Node hooks see tuples of gradients and may return a replacement tuple."""
    shown = [_for_hook(g) for g in grads]
    replaced = hook(tuple(shown), *(tuple(_for_hook(g) for g in m) for m in more))
    if replaced is None:
        replaced = shown
    return [_from_hook(hook, r, s, create_graph) for r, s in zip(replaced, shown)]


def _run_tensor_hooks(node: Node, grads: list, create_graph: bool) -> None:
    for output_nr, hook in list(node._hooks.tensor.values()):
        if grads[output_nr] is not None:
            grads[output_nr] = _apply_hook(hook, grads[output_nr], create_graph)


def _run_node(node: Node, grads: list, create_graph: bool) -> list:
    hooks = node._hooks
    if hooks is not None and hooks.pre:
        for hook in list(hooks.pre.values()):
            grads = _apply_tuple_hook(hook, grads, create_graph=create_graph)
    grad_inputs = node.apply(grads, create_graph)
    if hooks is not None and hooks.post:
        for hook in list(hooks.post.values()):
            grad_inputs = _apply_tuple_hook(hook, grad_inputs, grads, create_graph=create_graph)
    return grad_inputs


def _leaf_gradient(leaf: Tensor, grad, create_graph: bool):
    """Run a leaf's own hooks on the gradient that reached it."""
    for hook in list(leaf._hooks.values()):
        grad = _apply_hook(hook, grad, create_graph)
    return grad


def execute(outputs: Sequence[Tensor], gradients: Sequence, keep_graph: bool,
            create_graph: bool, capture: Sequence[Tensor] | None = None,
            accumulate_into: Sequence[Tensor] | None = None) -> list:
    """Run backward from ``outputs``.

    ``capture``: return the gradients reaching these tensors instead of accumulating
    (``autograd.grad``).  ``accumulate_into``: accumulate only into these (``inputs=``).
    """
    # A pass allocates per node while the whole graph is alive: left on, the cyclic
    # collector would rescan that graph again and again (most of the cost of a
    # 1,000,000-op chain).  The graph is acyclic and freed by reference counting.
    collecting = gc.isenabled()
    gc.disable()
    try:
        with np.errstate(all="ignore"):  # summing inf and -inf gradients is NaN, silently
            found, retained, leaf_updates = _execute(outputs, gradients, keep_graph,
                                                     create_graph, capture, accumulate_into)
            _write_gradients(retained, leaf_updates, create_graph)
        return found
    finally:
        if collecting:
            gc.enable()


def _execute(outputs, gradients, keep_graph, create_graph, capture, accumulate_into) -> tuple:
    """One pass: returns (captured gradients, retain_grad updates, leaf updates)."""
    roots = _roots(outputs, gradients, create_graph)
    order = _topological_order([node for node, _, _ in roots])
    run = _Pass(order, create_graph, capture, accumulate_into)
    buffers: dict[Node, list] = {}
    for node, nr, grad in roots:
        _add_to_buffer(buffers, node, nr, grad)
    plain = run.targets is None
    ran: list[Node] = []
    previous_mode = _state.enabled
    _state.enabled = create_graph
    try:
        for node in order:
            grads = buffers.pop(node, None)
            if grads is None:
                continue
            if anomaly.enabled:
                grad_inputs = _visit_checked(run, node, grads)
                if grad_inputs is None:
                    continue
            elif plain and node._hooks is None and type(node) is not AccumulateGrad:
                grad_inputs = node.apply(grads, create_graph)  # the common case
            else:
                grad_inputs = run.visit(node, grads)
                if grad_inputs is None:
                    continue  # a leaf, or a node that leads to no requested input
            ran.append(node)
            for (child, nr), grad in zip(node.next_functions, grad_inputs):
                if child is not None and grad is not None:
                    _add_to_buffer(buffers, child, nr, grad)
    finally:
        _state.enabled = previous_mode
    if not keep_graph:
        for node in ran:
            node.release()
    return run.found(), run.retained, run.leaf_updates


def _visit_checked(run: "_Pass", node: Node, grads: list) -> list | None:
    """``run.visit`` in anomaly mode: say where a failing node was created, and stop at
    the first node that returns NaN."""
    try:
        grad_inputs = run.visit(node, grads)
    except Exception:
        warn_error_in(node)
        raise
    if grad_inputs is not None:
        check_outputs(node, grad_inputs)
    return grad_inputs


def _roots(outputs: Sequence[Tensor], gradients: Sequence, create_graph: bool) -> list:
    """(node, output_nr, gradient) where the pass starts, one per output."""
    roots = []
    for i, (tensor, gradient) in enumerate(zip(outputs, gradients)):
        if not tensor._rg:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               "a grad_fn (call .requires_grad_() on a leaf, or check that "
                               "no_grad() was not active when it was computed)")
        roots.append((tensor._edge()[0], tensor._output_nr,
                      _root_gradient(tensor, gradient, i, create_graph)))
    return roots


class _Pass:
    """One backward pass's handling of everything but plain nodes: hooks, leaves,
    ``retain_grad``, and the tensors asked for by ``autograd.grad`` or ``inputs=``."""

    __slots__ = ("create_graph", "capture", "targets", "target_edges", "useful", "captured",
                 "leaf_updates", "retained")

    def __init__(self, order: list[Node], create_graph: bool, capture, accumulate_into) -> None:
        self.create_graph = create_graph
        self.capture = capture
        self.targets = capture if capture is not None else accumulate_into
        self.target_edges: dict[int, list] = {}  # id(node) -> [(output_nr, tensor)]
        self.useful: set[int] = set()
        if self.targets is not None:
            for t in self.targets:
                node, nr = t._edge()
                if node is None:
                    raise RuntimeError("One of the differentiated Tensors does not require grad")
                self.target_edges.setdefault(id(node), []).append((nr, t))
            self.useful = _nodes_leading_to(order, set(self.target_edges))
        self.captured: dict[int, object] = {}
        self.leaf_updates: list[tuple[Tensor, object]] = []
        self.retained: list[tuple[Tensor, object]] = []

    def visit(self, node: Node, grads: list) -> list | None:
        """Run ``node``'s hooks and collect what is asked for; return its input
        gradients, or None when the pass stops here."""
        if self.targets is not None and id(node) not in self.useful:
            return None
        is_leaf = type(node) is AccumulateGrad
        hooks = node._hooks
        if hooks is not None:
            if hooks.tensor:
                _run_tensor_hooks(node, grads, self.create_graph)
            if hooks.retained:
                _collect_retained(node, grads, self.retained)
        if is_leaf and node.variable._hooks:
            grads[0] = _leaf_gradient(node.variable, grads[0], self.create_graph)
        if id(node) in self.target_edges:
            self._take(node, grads, is_leaf)
            if not is_leaf and not any(id(child) in self.useful
                                       for child, _ in node.next_functions if child is not None):
                return None
        if is_leaf:
            if self.capture is None and (self.targets is None or id(node) in self.target_edges):
                self.leaf_updates.append((node.variable, grads[0]))
            return None
        if hooks is None:
            return node.apply(grads, self.create_graph)
        return _run_node(node, grads, self.create_graph)

    def _take(self, node: Node, grads: list, is_leaf: bool) -> None:
        """Keep the gradients of the requested tensors that ``node`` produced."""
        for nr, t in self.target_edges[id(node)]:
            if grads[nr] is None:
                continue
            if self.capture is not None:
                self.captured[id(t)] = grads[nr]
            elif not is_leaf:  # backward(inputs=[non-leaf])
                self.leaf_updates.append((t, grads[nr]))

    def found(self) -> list:
        if self.capture is None:
            return []
        return [self.captured.get(id(t)) for t in self.capture]


def _add_to_buffer(buffers: dict, node: Node, nr: int, grad) -> None:
    slot = buffers.get(node)
    if slot is None:
        slot = buffers[node] = [None] * node.num_outputs
    current = slot[nr]
    slot[nr] = grad if current is None else current + grad


def _write_gradients(retained: list, leaf_updates: list, create_graph: bool) -> None:
    """Store the gradients of a pass that succeeded: ``retain_grad`` tensors, then leaves.

    Runs once the pass's own frame is gone, so a gradient array is referred to only by
    this function, and by whatever else still holds it: another leaf's update (``a + b``
    hands one array to both), a hook that kept it, or the caller who passed it in.  An
    array nothing else holds becomes the leaf's ``.grad`` without a copy, as PyTorch's
    AccumulateGrad steals a gradient whose use count is 1.
    """
    for leaf, grad in leaf_updates:
        if tuple(grad.shape) != leaf.shape:  # refuse before any .grad is written
            raise RuntimeError(data_shape_changed(grad.shape, leaf.shape))
    for tensor, grad in retained:
        _store_grad(tensor, grad, create_graph, retain=True)
    retained.clear()
    while leaf_updates:
        leaf, grad = leaf_updates.pop()
        owned = _reference_count(grad) <= _UNSHARED_COUNT
        _store_grad(leaf, grad, create_graph, owned=owned)


def _reference_count(value) -> int:
    return sys.getrefcount(value)


def _count_when_unshared() -> int:
    """What ``_reference_count`` reports for a local nothing else holds, measured the
    way ``_write_gradients`` asks: interpreters differ in the references a call adds."""
    grad = np.empty(0)
    return _reference_count(grad)


_UNSHARED_COUNT = _count_when_unshared()


def _collect_retained(node: Node, grads: list, retained: list) -> None:
    for nr, ref in node._hooks.retained.items():
        tensor = ref()
        if tensor is not None and grads[nr] is not None:
            retained.append((tensor, grads[nr]))


def _store_grad(tensor: Tensor, grad, create_graph: bool, retain: bool = False,
                owned: bool = False) -> None:
    """Add ``grad`` to ``tensor.grad`` (PyTorch's AccumulateGrad, and retain_grad).

    ``owned``: nothing else refers to ``grad``, so it may be kept without a copy.
    """
    if isinstance(grad, Tensor) and not create_graph:
        grad = grad._data
    current = tensor._grad
    if create_graph:
        grad = _as_tensor(grad)
        tensor._grad = grad if current is None else current + grad
        return
    if grad.dtype != tensor._data.dtype and tensor._data.dtype.kind in "fc":
        grad = grad.astype(tensor._data.dtype)
        owned = True
    if current is None:
        keep = owned and not retain and grad.base is None and grad.flags.writeable
        tensor._grad = Tensor._make(grad if keep else np.array(grad, copy=True), False, None, 0)
    elif retain:  # a retained grad accumulates across backward calls, as a leaf's does
        tensor._grad = Tensor._make(np.asarray(current._data + grad), False, None, 0)
    elif current._data.shape == grad.shape and current._data.flags.writeable:
        current._data += grad
    else:  # np.asarray: numpy hands back a scalar, not an array, for 0-d sums
        tensor._grad = Tensor._make(np.asarray(current._data + grad), False, None, 0)


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs=None) -> None:
    """Accumulate gradients of ``tensors`` into the leaves' ``.grad`` (torch.autograd.backward)."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    elif isinstance(grad_tensors, Tensor):
        grad_tensors = [grad_tensors]
    if inputs is not None:
        inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    _check_gradient_count(tensors, grad_tensors)
    keep = create_graph if retain_graph is None else retain_graph
    execute(tensors, list(grad_tensors), keep, create_graph, accumulate_into=inputs)


def _check_gradient_count(outputs: list, gradients) -> None:
    """One gradient per output, or the extra outputs would be silently dropped."""
    if len(gradients) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(gradients)} gradients: "
                           "pass one gradient (or None) per output.")


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None,
         create_graph: bool = False, allow_unused: bool = False) -> tuple:
    """Gradients of ``outputs`` with respect to ``inputs``, returned, not accumulated.

    >>> import naivegraph as ng
    >>> x = ng.tensor(3.0, requires_grad=True)
    >>> (dx,) = ng.autograd.grad(x ** 3, x, create_graph=True)
    >>> dx, ng.autograd.grad(dx, x)[0]
    (tensor(27., grad_fn=<MulBackward0>), tensor(18.))
    """
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    single = isinstance(inputs, Tensor)
    inputs = [inputs] if single else list(inputs)
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"grad(): inputs must be Tensors, got {type(t).__name__}")
        if not t._rg:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs]
    _check_gradient_count(outputs, grad_outputs)
    keep = create_graph if retain_graph is None else retain_graph
    found = execute(outputs, list(grad_outputs), keep, create_graph, capture=inputs)
    results = []
    for t, g in zip(inputs, found):
        if g is None:
            if not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been "
                                   "used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
            results.append(None)
        else:
            results.append(_as_tensor(g) if create_graph else
                           Tensor._make(np.array(g, copy=True), False, None, 0))
    return tuple(results)

