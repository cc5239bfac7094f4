"""What a backward pass does at each node besides the VJP: hooks, leaves, capture.

The engine (:mod:`naivegraph.dynamic.engine`) walks the graph and hands every node and
the gradients that reached it to a :class:`Visitor`.  The visitor runs the node's hooks
and its VJP, notes the gradients of leaves and of ``retain_grad`` tensors (written only
once the whole pass succeeded, so a hook that raises leaves every ``.grad`` as it was),
and keeps the gradients ``autograd.grad`` asked for.
"""

from __future__ import annotations

import numpy as np

from .anomaly_mode import check_outputs, warn_error_in
from .grad_mode import set_grad_enabled
from .node import AccumulateGrad, Node, as_tensor, data_shape_changed, is_tensor


class Visitor:
    """One backward pass's handling of each node.

    ``capture``: tensors whose gradients are returned instead of accumulated
    (``autograd.grad``); ``accumulate_into``: the only tensors that get ``.grad``
    (``backward(inputs=...)``).  Either way, nodes that lead to none of them are skipped.
    """

    def __init__(
        self, order: list[Node], create_graph: bool, capture=None, accumulate_into=None
    ) -> None:
        self.create_graph = create_graph
        self.capture = capture
        self.targets = capture if capture is not None else accumulate_into
        self.target_edges: dict[int, list] = {}  # id(node) -> [(output_nr, tensor)]
        self.useful: set[int] = set()
        if self.targets is not None:
            for t in self.targets:
                node, output_nr = t._edge()
                if node is None and capture is None:  # backward(inputs=...), as torch says it
                    raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
                if node is None:
                    raise RuntimeError("One of the differentiated Tensors does not require grad")
                self.target_edges.setdefault(id(node), []).append((output_nr, t))
            self.useful = _nodes_leading_to(order, set(self.target_edges))
        self.captured: dict[int, object] = {}
        self.leaf_updates: list[tuple] = []  # (leaf, gradient), written after the pass
        self.retained: list[tuple] = []  # (non-leaf tensor, gradient), likewise
        self.accumulated: dict[int, tuple] = {}  # id(leaf) -> (its node, gradients): post-hooks

    def visit(self, node: Node, grads: list) -> list | None:
        """Run ``node`` on the gradients of its outputs; return the gradients of its
        inputs, or None where the pass stops (a leaf, or nothing asked for beyond)."""
        hooks = node._hooks
        is_leaf = type(node) is AccumulateGrad
        if hooks is None and not is_leaf and self.targets is None:
            return node.apply(grads, self.create_graph)  # most nodes: just the VJP
        if self.targets is not None and id(node) not in self.useful:
            return None
        if hooks is not None:
            if hooks.tensor:
                _run_tensor_hooks(node, grads, self.create_graph)
            if hooks.retained:
                self._keep_retained(node, grads)
        if is_leaf and node.variable._hooks:
            grads[0] = _leaf_gradient(node.variable, grads[0], self.create_graph)
        if id(node) in self.target_edges:
            self._take(node, grads, is_leaf)
            if not is_leaf and not any(
                id(child) in self.useful for child, _ in node.next_functions if child is not None
            ):
                return None
        if is_leaf:
            if self.capture is None and (self.targets is None or id(node) in self.target_edges):
                if hooks is not None and (hooks.pre or hooks.post):
                    grads = self._leaf_node_hooks(node, grads)
                self.leaf_updates.append((node.variable, grads[0]))
            return None
        return _run_node(node, grads, self.create_graph)

    def _leaf_node_hooks(self, node: Node, grads: list) -> list:
        """The hooks registered on a leaf's AccumulateGrad node itself, as torch runs
        them: its pre-hooks now, on the gradient the leaf's own hooks left (they may
        replace it); its post-hooks, ``fn((), grad_outputs)``, once ``.grad`` is
        written (:meth:`write_gradients`).  ``autograd.grad`` runs neither: the node
        does not run."""
        pre = node._hooks.pre
        if pre:
            for hook in list(pre.values()):
                grads = _apply_tuple_hook(hook, grads, create_graph=self.create_graph)
        if node._hooks.post:
            self.accumulated[id(node.variable)] = (node, grads)
        return grads

    def _keep_retained(self, node: Node, grads: list) -> None:
        for output_nr, ref in node._hooks.retained.items():
            tensor = ref()
            if tensor is not None and grads[output_nr] is not None:
                self.retained.append((tensor, grads[output_nr]))

    def _take(self, node: Node, grads: list, is_leaf: bool) -> None:
        """Keep the gradients of the requested tensors that ``node`` produced."""
        for output_nr, t in self.target_edges[id(node)]:
            if grads[output_nr] is None:
                continue
            if self.capture is not None:
                self.captured[id(t)] = grads[output_nr]
            elif not is_leaf:  # backward(inputs=[non-leaf])
                self.leaf_updates.append((t, grads[output_nr]))

    def found(self) -> list:
        """The captured gradients, one per ``capture`` tensor (None if none reached it)."""
        if self.capture is None:
            return []
        return [self.captured.get(id(t)) for t in self.capture]

    def write_gradients(self) -> None:
        """Store the gradients of a pass that succeeded: ``retain_grad`` tensors, then
        leaves (each ``.grad`` a copy: the fast backward keeps an unshared array)."""
        for leaf, grad in self.leaf_updates:  # refuse before any .grad is written
            if grad is not None and tuple(grad.shape) != leaf.shape:
                raise RuntimeError(data_shape_changed(grad.shape, leaf.shape))
        for tensor, grad in self.retained:
            store_grad(tensor, grad, self.create_graph, retain=True)
        self.retained.clear()
        while self.leaf_updates:
            leaf, grad = self.leaf_updates.pop()
            # as torch's AccumulateGrad: nothing is added to a leaf whose requires_grad
            # was turned off after the forward (its hooks still run)
            if leaf._requires_grad and grad is not None:  # None: a node hook dropped it
                store_grad(leaf, grad, self.create_graph)
            if leaf.__dict__.get("_post_accumulate_hooks"):  # rare: test before calling
                run_post_accumulate_hooks(leaf, self.create_graph)
            if self.accumulated:
                self._leaf_post_hooks(leaf)

    def _leaf_post_hooks(self, leaf) -> None:
        """The post-hooks of ``leaf``'s AccumulateGrad: ``fn((), grad_outputs)``, after
        its ``.grad`` was written; the node has no inputs, so they return None (or ())."""
        found = self.accumulated.pop(id(leaf), None)
        if found is not None:
            node, grads = found
            for hook in list(node._hooks.post.values()):
                _apply_tuple_hook(hook, [], grads, create_graph=self.create_graph)


class AnomalyVisitor(Visitor):
    """The visitor under ``detect_anomaly()``: says where a failing node was created,
    and stops at the first node that returns NaN."""

    def visit(self, node: Node, grads: list) -> list | None:
        try:
            grad_inputs = Visitor.visit(self, node, grads)
        except Exception:
            warn_error_in(node)
            raise
        if grad_inputs is not None:
            check_outputs(node, grad_inputs)
        return grad_inputs


def _nodes_leading_to(order: list[Node], targets: set[int]) -> set[int]:
    """ids of nodes from which some target node can be reached."""
    useful: set[int] = set()
    for node in reversed(order):  # producers first: children are decided before parents
        if id(node) in targets or any(
            child is not None and id(child) in useful for child, _ in node.next_functions
        ):
            useful.add(id(node))
    return useful


# -- hooks -------------------------------------------------------------------------------
def _for_hook(grad):
    """The gradient as a tensor user code may read, keep, or even change in place."""
    if grad is None or is_tensor(grad):
        return grad
    if not grad.flags.writeable:  # a broadcast view: give the hook its own copy
        grad = grad.copy()
    return as_tensor(grad)


def _from_hook(hook, result, shown, create_graph: bool):
    """A hook's return value: None keeps the (perhaps changed) ``shown``; a tensor replaces it."""
    if result is None:
        result = shown
    elif not is_tensor(result):
        raise TypeError(
            f"a gradient hook must return a Tensor or None, got {type(result).__name__}"
        )
    elif shown is not None:
        _check_replacement(hook, result, shown)
    return result if create_graph or result is None else result._data


def _check_replacement(hook, result, shown) -> None:
    """A replacement gradient must look like the one it replaces, or a leaf would store
    a .grad of the wrong shape or dtype and fail later, far from the hook (as torch)."""
    name = getattr(hook, "__name__", type(hook).__name__)
    if result.shape != shown.shape:
        raise RuntimeError(
            f"hook '{name}' has changed the size of value: the gradient has "
            f"shape {tuple(shown.shape)}, the hook returned shape "
            f"{tuple(result.shape)}. Return a gradient of the same shape."
        )
    if result.dtype != shown.dtype:
        raise RuntimeError(
            f"hook '{name}' has changed the type of value (was {shown.dtype} "
            f"got {result.dtype}). Return a gradient of the same dtype, "
            "e.g. with .to(grad.dtype)."
        )


def _apply_hook(hook, grad, create_graph: bool):
    shown = _for_hook(grad)
    return _from_hook(hook, hook(shown), shown, create_graph)


def _apply_tuple_hook(hook, grads: list, *more: list, create_graph: bool) -> list:
    """Node hooks see tuples of gradients and may return a replacement tuple."""
    shown = [_for_hook(g) for g in grads]
    replaced = hook(tuple(shown), *(tuple(_for_hook(g) for g in m) for m in more))
    if replaced is None:
        return [g if g is None or create_graph else g._data for g in shown]
    elif not isinstance(replaced, tuple):  # as torch: a list, or one tensor, is refused
        raise TypeError(f"expected tuple, but hook returned '{type(replaced).__name__}'")
    elif len(replaced) != len(shown):  # zipped, it would hand gradients to the wrong inputs
        raise RuntimeError(
            f"hook '{getattr(hook, '__name__', hook)}' has returned an incorrect number of "
            f"values (got {len(replaced)}, but expected {len(shown)}): return one gradient "
            "(or None) per entry of the tuple the hook was given"
        )
    # as torch: a None in the returned tuple drops that gradient (a tensor hook's None keeps it)
    return [
        None if r is None else _from_hook(hook, r, s, create_graph) for r, s in zip(replaced, shown)
    ]


def _run_tensor_hooks(node: Node, grads: list, create_graph: bool) -> None:
    for output_nr, hook in list(node._hooks.tensor.values()):
        if grads[output_nr] is not None:
            grads[output_nr] = _apply_hook(hook, grads[output_nr], create_graph)


def _run_node(node: Node, grads: list, create_graph: bool) -> list:
    """``node``'s VJP between its pre-hooks and its post-hooks."""
    hooks = node._hooks
    if hooks is not None and hooks.pre:
        for hook in list(hooks.pre.values()):
            grads = _apply_tuple_hook(hook, grads, create_graph=create_graph)
    if any(g is not None for g in grads):
        grad_inputs = node.apply(grads, create_graph)
    else:  # a pre-hook dropped every gradient: as torch, none flows on to the inputs
        grad_inputs = [None] * len(node.next_functions)
    if hooks is not None and hooks.post:
        for hook in list(hooks.post.values()):
            grad_inputs = _apply_tuple_hook(hook, grad_inputs, grads, create_graph=create_graph)
    return grad_inputs


def _leaf_gradient(leaf, grad, create_graph: bool):
    """Run a leaf's own hooks on the gradient that reached it."""
    for hook in list(leaf._hooks.values()):
        grad = _apply_hook(hook, grad, create_graph)
    return grad


# -- .grad -------------------------------------------------------------------------------
def run_post_accumulate_hooks(leaf, grad_enabled: bool = False) -> None:
    """Run ``leaf``'s post-accumulate-grad hooks (after its ``.grad`` was written).

    As torch's engine runs them: grad mode is on only for ``create_graph=True``, so a
    hook may update its parameter in place (``p.add_(p.grad, alpha=-lr)``)."""
    hooks = leaf.__dict__.get("_post_accumulate_hooks")
    for hook in tuple(hooks.values()) if hooks else ():
        with set_grad_enabled(grad_enabled):
            result = hook(leaf)
        # torch ignores a returned tensor (``lambda p: p.add_(...)`` returns p)
        if result is not None and not is_tensor(result):
            raise TypeError(
                f"a post accumulate grad hook must return None (it may change the tensor "
                f"in place; a returned tensor is ignored), but it returned "
                f"'{type(result).__name__}'"
            )


def store_grad(tensor, grad, create_graph: bool, retain: bool = False, owned: bool = False) -> None:
    """Add ``grad`` to ``tensor.grad`` (PyTorch's AccumulateGrad, and retain_grad).

    ``owned``: nothing else refers to ``grad``, so it may be kept without a copy.
    """
    if is_tensor(grad) and not create_graph:
        grad = grad._data
    current = tensor._grad
    if create_graph:
        grad = as_tensor(grad)
        tensor._grad = grad if current is None else current + grad
        return
    if grad.dtype != tensor._data.dtype and tensor._data.dtype.kind in "fc":
        grad = grad.astype(tensor._data.dtype)
        owned = True
    if current is None:
        keep = owned and not retain and grad.base is None and grad.flags.writeable
        tensor._grad = as_tensor(grad if keep else np.array(grad, copy=True))
    elif retain:  # a retained grad accumulates across backward calls, as a leaf's does
        tensor._grad = as_tensor(np.asarray(current._data + grad))
    elif current._data.shape == grad.shape and current._data.flags.writeable:
        current._data += grad
    else:  # np.asarray: numpy hands back a scalar, not an array, for 0-d sums
        tensor._grad = as_tensor(np.asarray(current._data + grad))
