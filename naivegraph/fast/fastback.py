"""The fast layer's backward pass: the engine's whole pass with the per-node calls taken out.

:func:`naivegraph.dynamic.engine.execute` seeds the roots, orders the graph, builds a
visitor, and :func:`~naivegraph.dynamic.engine.backward_pass` hands each node and its
gradients to the visitor, which hands them to the node, which hands them to its op's
``pullback``, which runs the partial rules inside a wrapper that silences numpy; then
the visitor writes ``.grad``.  In a plain ``backward()`` (no ``create_graph``, no
``inputs=``, not ``autograd.grad``, no anomaly mode) most of those layers do nothing,
so the engine hands such a pass here whole (:func:`takes`, :func:`execute`):

- the start: ``loss.backward()`` alone (of a graph :mod:`.fastsmall` turns down) calls
  :func:`run` (:func:`tensor_backward`), which seeds one 0-d output with a copy of a
  cached 0-d one; any other start is the engine's;
- the order (:func:`order_of`): the engine's depth-first search, in the same order, with
  less on its stack; a chain of nodes with one live edge each (an edge that leads to a
  node) is walked without a stack or ``seen`` set;
- the pass (:func:`backward_pass`): ``Visitor.visit``, ``OpNode.apply``,
  ``OpDef.pullback`` and ``add_gradient`` written out in one loop: the same partial
  rules with the same arguments, the gradients summed in the same order, the same
  errors (it calls the readable code to raise them).  In a chain (nodes with one live
  edge each) a gradient goes straight to the next node; a run of negations
  (:mod:`~naivegraph.fast.fastnodes`) goes round one inner loop.  A node it does not
  know (hooks, a custom ``Function``, a view's rebase, saved-tensor hooks) goes to a
  visitor, the readable way;
- ``mean``'s and ``sum``'s rules over a whole tensor, without three op-table dispatches;
  ``shapes.sum_to``'s axes kept per pair of shapes (a sum to 0-d: an array of its
  own); ``.grad`` written inline with ``hooks.store_grad``'s rules (an array nothing
  else holds is kept without a copy).

Each gradient's fix-ups (summed back to shape, cast to its input's dtype) run right
after its partial, where the readable ``pullback`` runs every partial first: the same
values, as a fix-up reads only its own gradient.  Switch: ``fastback.on`` (and the whole
layer's ``NAIVEGRAPH_FAST=0``); either way the numbers are the same bits:

>>> import naivegraph as ng
>>> from naivegraph.fast import fastback
>>> x = ng.tensor(3.0, requires_grad=True)
>>> fastback.on = False
>>> (x * x).backward()
>>> fastback.on = True
>>> (x * x).backward()
>>> x.grad
tensor(12.)

What it saved: ``benchmarks/README.md``, "The fast layer, module by module".
"""

from __future__ import annotations

import gc
import math
from typing import Callable, Sequence

import numpy as np

from ..dynamic import engine
from ..dynamic import node as nodes
from ..dynamic.anomaly_mode import mode as anomaly
from ..dynamic.grad_mode import _state as grad_mode
from ..dynamic.hooks import Visitor, run_post_accumulate_hooks, store_grad
from ..dynamic.node import SECOND_BACKWARD, AccumulateGrad, Node, OpNode, data_shape_changed
from ..dynamic.tensor_autograd import TensorAutograd, _Counter
from ..ops.core import OPS, _in_dtype_of
from ..ops.shapes import sum_to
from . import tricks as fast
from .fastnodes import NEGATION as _COMPACT
from .fastrules import RULES as _dense_layer_rules
from .tricks import _fp_state

#: this trick's own switch (the whole layer's switch turns it off too)
on: bool = True

#: the engine's own ``execute``, which this module's replaces
readable_execute = engine.execute

#: the node classes whose nodes the loop runs itself: ``OpNode`` subclasses that keep
#: its ``apply`` and ``release`` (saved-tensor hooks swap a node's class for one that
#: does not); every class is sorted into this set or not the first time it is met
_op_classes: set[type] = set()
_classes_seen: set[type] = set()
if _COMPACT is not None:  # an OpNode with OpNode's apply and release
    _op_classes.add(_COMPACT)
    _classes_seen.add(_COMPACT)


def takes(create_graph: bool, capture, accumulate_into) -> bool:
    """Whether this pass runs a backward: nothing asked of it but ``.grad`` of every
    leaf (no ``inputs=``, not ``autograd.grad``), the gradients plain arrays (no
    ``create_graph``), and no anomaly mode."""
    return (
        on
        and fast.enabled
        and not create_graph
        and capture is None
        and accumulate_into is None
        and not anomaly.enabled
    )


def execute(
    outputs: Sequence,
    gradients: Sequence,
    keep_graph: bool,
    create_graph: bool,
    capture: Sequence | None = None,
    accumulate_into: Sequence | None = None,
) -> list:
    """:func:`naivegraph.dynamic.engine.execute` (the seam it replaces): this pass where
    :func:`takes` takes it, else the engine's own."""
    if takes(create_graph, capture, accumulate_into):
        return run(outputs, gradients, keep_graph, engine._roots)
    return readable_execute(outputs, gradients, keep_graph, create_graph, capture, accumulate_into)


#: ``Tensor.backward`` as the core defines it (``TensorAutograd.backward``)
readable_backward = TensorAutograd.backward


def tensor_backward(
    self, gradient=None, retain_graph: bool | None = None, create_graph: bool = False, inputs=None
) -> None:
    """``Tensor.backward`` (the seam it replaces): ``loss.backward()`` straight to
    :func:`run`, without ``engine.backward``'s and ``execute``'s generality (a list of
    outputs, their gradients, ``inputs=``); anything but a plain call is theirs, and so
    is every call while ``engine.execute`` is not this layer's."""
    # engine.execute replaced by anything but this layer's own (a watch counting the
    # passes, a debugger's wrapper) must see this pass too: the general way calls it
    if (
        gradient is None
        and inputs is None
        and not create_graph
        and engine.execute is execute
        and takes(False, None, None)
    ):
        run((self,), _NO_GRADIENT, create_graph if retain_graph is None else retain_graph, None)
        return None
    return readable_backward(self, gradient, retain_graph, create_graph, inputs)


tensor_backward.__doc__ = readable_backward.__doc__
tensor_backward.__qualname__ = readable_backward.__qualname__
_NO_GRADIENT = (None,)


def run(
    outputs: Sequence, gradients: Sequence, keep_graph: bool, roots_of: Callable | None
) -> list:
    """The backward pass, for a pass that :func:`takes` takes.

    ``roots_of`` is the engine's ``_roots`` (None: that same function): it seeds every
    start but the commonest (one output of one element, no gradient given), and raises
    the start's errors.  The collector paused (``fast.paused_gc``), numpy's errors
    ignored (``fast.ignoring_fp_errors``) and grad mode off (``set_grad_enabled(False)``:
    a hook or a custom Function's backward records nothing), each inline.
    """
    pending = _seeded(outputs, gradients, roots_of or engine._roots)
    order = order_of(list(pending))
    paused = gc.isenabled()
    if paused:
        gc.disable()
    was = grad_mode.enabled
    quiet = fast.enabled and fast.quiet_numpy  # inf - inf in a sum of gradients is NaN
    if quiet:
        token = _fp_state.set(fast._ignoring_version_of(_fp_state.get()))
    else:
        plain = np.errstate(all="ignore")
        plain.__enter__()
    try:
        grad_mode.enabled = False
        leaf_updates, visitor = backward_pass(order, pending, keep_graph)
        grad_mode.enabled = was
        del order, pending  # gone before .grad is written: a gradient may be owned
        _write_gradients(leaf_updates, visitor)
    finally:
        grad_mode.enabled = was
        if quiet:
            _fp_state.reset(token)
        else:
            plain.__exit__(None, None, None)
        if paused:
            gc.enable()
    return []


def _write_gradients(leaf_updates: list, visitor: Visitor | None) -> None:
    """``Visitor.write_gradients``: the leaves' ``.grad``, once the pass succeeded, with
    its commonest case (a first gradient of the leaf's dtype) inline.  A pass that met
    a readable node (hooks, ``retain_grad``) leaves the writing to its visitor."""
    if visitor is not None:  # its list of leaves is this one
        visitor.write_gradients()
        return
    for leaf, grad in leaf_updates:
        if grad.shape != leaf._data.shape:  # refuse before any .grad is written
            raise RuntimeError(data_shape_changed(grad.shape, leaf.shape))
    make = nodes.tensor_class._make
    while leaf_updates:
        leaf, grad = leaf_updates.pop()
        owned = fast.is_unshared(grad)  # on its own line: a call's arguments hold refs
        if leaf._grad is None and grad.dtype is leaf._data.dtype:  # hooks.store_grad
            if not (
                owned and type(grad) is np.ndarray and grad.base is None and grad.flags.writeable
            ):
                grad = np.array(grad, copy=True)
            leaf._grad = make(grad, False, None, 0)
        else:
            store_grad(leaf, grad, False, owned=owned)
        if leaf.__dict__.get("_post_accumulate_hooks"):  # rare: test before calling
            run_post_accumulate_hooks(leaf)


# -- the start -----------------------------------------------------------------------------
#: dtype -> a 0-d array of ones, copied for each seed (``np.ones_like`` costs ~10 times more)
_ones: dict = {}


def _seeded(outputs: Sequence, gradients: Sequence, roots_of: Callable) -> dict:
    """The pending gradients at the start: node -> its outputs' gradients (summed as
    ``engine.add_gradient`` sums them)."""
    if len(outputs) == 1 and gradients[0] is None:
        tensor = outputs[0]
        data = tensor._data
        if tensor._requires_grad and data.shape == ():  # engine._root_gradient's ones_like
            ones = _ones.get(data.dtype)
            if ones is None:
                ones = _ones[data.dtype] = np.ones_like(data)
            node, output_nr = tensor._edge()
            slot = [None] * node.num_outputs
            slot[output_nr] = ones.copy()
            return {node: slot}
    pending: dict = {}
    for node, output_nr, grad in roots_of(outputs, gradients, False):
        slot = pending.get(node)
        if slot is None:
            slot = pending[node] = [None] * node.num_outputs
        current = slot[output_nr]
        slot[output_nr] = grad if current is None else current + grad
    return pending


#: on the order's stack, in place of the iterator of a node with one edge: not followed yet
_ONE = object()


def order_of(roots: Sequence[Node]) -> list[Node]:
    """``engine.topological_order``, reversed: every node after the nodes it consumes.

    The same depth-first search, children in the same order, with less on its stack:
    a node without edges (a leaf) is finished as soon as it is found, and a node with
    one edge (a chain's) keeps a marker instead of an iterator.  A chain of a million
    ops puts a million nodes on the stack: 16 bytes each instead of ~110.  From a
    single root, the chain it starts with is walked without a stack or ``seen`` at all
    (:func:`_chain_from`).
    """
    if len(roots) == 1:
        chain, end = _chain_from(roots[0])
        if chain:
            postorder = order_of([end]) if end is not None else []
            chain.reverse()  # its nodes finish last, the deepest first
            chain[:0] = postorder  # one list: no second copy of a long chain
            return chain
    postorder: list[Node] = []
    seen: set[Node] = set()
    for root in roots:
        if root in seen:
            continue
        seen.add(root)
        edges = _edges_of(root)
        stack, iters = [root], [_ONE if len(edges) == 1 else iter(edges)]
        while stack:
            it = iters[-1]
            if it is _ONE:  # follow the one edge; None: followed, the node is finished
                iters[-1] = None
                child = _only_child(stack[-1])
                if child is not None and child not in seen:
                    seen.add(child)
                    edges = _edges_of(child)
                    if edges:
                        stack.append(child)
                        iters.append(_ONE if len(edges) == 1 else iter(edges))
                    else:
                        postorder.append(child)
            elif it is None:
                iters.pop()
                postorder.append(stack.pop())
            else:
                for child, _ in it:
                    if child is not None and child not in seen:
                        seen.add(child)
                        edges = _edges_of(child)
                        if edges:
                            stack.append(child)
                            iters.append(_ONE if len(edges) == 1 else iter(edges))
                            break
                        postorder.append(child)
                else:
                    iters.pop()
                    postorder.append(stack.pop())
    return postorder


def _chain_from(root: Node) -> tuple[list[Node], Node | None]:
    """The nodes from ``root`` down while each has one live edge, and the node that
    edge of the last one leads to (None: no node).

    A live edge leads to a node; an op with a Python number or a constant (``y *
    0.999``) has two edges, one of them to no node, and the search skips that one, so
    such a node is a chain's as a one-edge node is.  The depth-first search from a
    single root meets these first, one below the other, and finishes them last, the
    deepest first.  Nothing found below them can lead back to them (the graph is
    acyclic), so they need no ``seen``, and the search goes on from the end alone.
    """
    chain = []
    node: Node | None = root
    while node is not None:
        if type(node) is _COMPACT:  # its edge: the input's node alone (fastnodes)
            edges = node._edges
            if type(edges) is not tuple:
                chain.append(node)
                node = edges
                continue
        else:
            edges = node.next_functions
        if len(edges) == 1:
            child = edges[0][0]
        elif len(edges) == 2:  # one of the two edges leads to no node
            child = edges[0][0]
            other = edges[1][0]
            if child is None:
                child = other
            elif other is not None:
                break
        else:
            break
        chain.append(node)
        node = child
    return chain, node


def _edges_of(node: Node) -> tuple:
    """``node.next_functions``, or a stand-in of the same length for a compact node
    (whose edge ``_only_child`` reads)."""
    if type(node) is _COMPACT and type(node._edges) is not tuple:
        return _ONE_EDGE
    return node.next_functions


def _only_child(node: Node) -> Node | None:
    """The node the one edge of ``node`` leads to."""
    if type(node) is _COMPACT:
        edges = node._edges
        return edges if type(edges) is not tuple else edges[0][0]
    return node.next_functions[0][0]


#: what ``_edges_of`` gives for a compact node: one edge (read by ``_only_child``)
_ONE_EDGE = ((None, 0),)


# -- the pass ------------------------------------------------------------------------------
def checked_inputs(node, inputs: tuple) -> tuple:
    """``OpNode._check_versions`` (which raises) and ``_current_inputs``, read inline:
    the saved inputs of ``node`` once every saved tensor's version is the one it was
    saved at, with a tensor whose array was replaced since read afresh."""
    replaced = False
    for position, owner, version in node.sources:
        if position == "out":
            if owner.value != version:
                node._check_versions()  # raises
            continue
        counter = owner._version_counter
        if type(counter) is not _Counter:  # None, or an inference tensor's
            if owner._version != version:
                node._check_versions()
        elif counter.value != version:
            node._check_versions()
        if owner._data is not inputs[position]:
            replaced = True
    return node._current_inputs() if replaced else inputs


def backward_pass(postorder: list[Node], pending: dict, keep_graph: bool) -> tuple:
    """:func:`naivegraph.dynamic.engine.backward_pass` with the plain nodes run inline:
    ``Visitor.visit``, ``OpNode.apply``, ``OpDef.pullback`` and ``add_gradient`` in one
    loop (a call costs more than most of what those functions do on a small tensor).

    Walks ``postorder`` from its end (the engine's order).  Returns the leaves'
    gradients, to write, and the visitor the readable nodes met, or None.
    """
    visitor = None
    leaf_updates: list = []
    skipped = []  # nodes no gradient reached: not released
    op_classes, rules_of_op = _op_classes, _rules
    compact, negation_rule = _COMPACT, _negation_rule
    carried = None  # the next node's gradients, when they did not go through ``pending``
    left = len(postorder)  # nodes not run yet, this one included
    walk = reversed(postorder)
    for node in walk:
        left -= 1
        if carried is None:
            grads = pending.pop(node, None)
            if grads is None:
                skipped.append(node)
                continue  # no gradient reached this node
        else:
            grads, carried = carried, None
        if type(node) is compact and node._hooks is None and type(node._edges) is not tuple:
            # a run of negations fastpath built (the only nodes that keep their edge as
            # a node alone: op, attrs, needs and sources are its constants, nothing is
            # saved), each handing its gradient straight to the next
            g = grads[0]
            checked = None  # a saved list whose input's shape and dtype -g is known to have
            while True:
                inputs = node.saved
                value = inputs[0]
                gi = negation_rule(g, value, node.saved_out)
                if inputs is not checked:  # OpDef.pullback's fix-ups, as below
                    checked = inputs
                    if gi.shape != value.shape:
                        gi, checked = _summed(gi, value), None
                    try:
                        cast = gi.dtype is not value.dtype
                    except AttributeError:
                        cast = True
                    if cast:
                        gi, checked = _in_dtype_of(gi, value), None
                # else: g has that shape and dtype, and so has -g (numpy keeps both)
                child = node._edges
                if not (
                    left
                    and child is postorder[left - 1]  # every other consumer of child ran
                    and type(child) is compact
                    and child._hooks is None
                    and type(child._edges) is not tuple
                    and child not in pending  # and sent it nothing
                ):
                    break  # the edge below hands it on
                next(walk)  # the child, run here
                left -= 1
                node, g = child, gi
            grad_inputs = [gi]
        elif type(node) in op_classes and node._hooks is None:  # OpNode.apply, inline
            op = node.op
            if node._released and op.saves:
                raise RuntimeError(SECOND_BACKWARD)
            inputs = node.saved
            if node.sources:
                inputs = checked_inputs(node, inputs)
            rules = rules_of_op.get(op)
            if rules is None:
                rules = _rules_of(op)
            partials, count, elementwise, positions = rules
            needs = node.needs
            if partials is None or len(needs) != count:
                grad_inputs = op.pullback(grads[0], inputs, node.saved_out, node.attrs, needs)
            else:  # OpDef.pullback
                g = grads[0]
                grad_inputs = [None] * count
                out, attrs = node.saved_out, node.attrs
                for i, partial in partials:
                    if needs[i]:
                        if attrs:
                            gi = partial(g, *inputs, out, **attrs)
                        elif count == 2:  # no star: CPython 3.11 inlines the call (~100 ns less)
                            gi = partial(g, inputs[0], inputs[1], out)
                        elif count == 1:
                            gi = partial(g, inputs[0], out)
                        else:
                            gi = partial(g, *inputs, out)
                        if gi is not None:
                            value = inputs[i]
                            if elementwise and gi.shape != value.shape:
                                gi = _summed(gi, value)
                            try:  # the same dtype object: _in_dtype_of would give gi back
                                cast = gi.dtype is not value.dtype
                            except AttributeError:  # not an array: let it decide
                                cast = True
                            if cast:
                                gi = _in_dtype_of(gi, value)
                        grad_inputs[i] = gi
            if positions is not None:  # OpNode.grads_per_edge
                grad_inputs = [grad_inputs[i] for i in positions]
        elif (
            type(node) is AccumulateGrad
            and node._hooks is None
            and not (leaf := node.variable)._hooks
            and leaf._requires_grad  # turned off after the forward: the visitor skips it
        ):
            leaf_updates.append((leaf, grads[0]))  # what the visitor does
            continue
        else:  # the readable way (and a class met for the first time, sorted for next time)
            if type(node) not in _classes_seen:
                _sort_class(type(node))
            if visitor is None:
                visitor = Visitor(postorder, False)
                visitor.leaf_updates = leaf_updates  # one list: the leaves in pass order
            grad_inputs = visitor.visit(node, grads)
            if grad_inputs is None:
                continue  # a leaf
        edges = node.next_functions
        if left:  # a chain: the node of its one live edge's input is often the next
            live = -1  # the position of the one edge that leads to a node, if one does
            if len(edges) == 1:
                live = 0
            elif len(edges) == 2:  # an op with a Python number or a constant
                if edges[1][0] is None:
                    live = 0
                elif edges[0][0] is None:
                    live = 1
            if live >= 0:
                child = edges[live][0]
                if (
                    child is postorder[left - 1]
                    and child.num_outputs == 1
                    and child not in pending
                    and len(grad_inputs) > live
                    and grad_inputs[live] is not None
                ):  # every other consumer of child ran before this node: the only
                    # gradient (an edge to no node drops its own, as below)
                    carried = [grad_inputs[live]]
                    continue
        for (child, output_nr), grad in zip(edges, grad_inputs):
            if child is not None and grad is not None:  # engine.add_gradient
                slot = pending.get(child)
                if slot is None:
                    slot = pending[child] = [None] * child.num_outputs
                    slot[output_nr] = grad
                else:  # the same sum, in the same order
                    current = slot[output_nr]
                    slot[output_nr] = grad if current is None else current + grad
    if not keep_graph:
        _release(postorder, skipped)
    return leaf_updates, visitor


_NEGATION = OPS["neg"]
#: op ``neg``'s rule, which :func:`backward_pass` runs on a run of negations
_negation_rule = _NEGATION.partials[0]
assert not _NEGATION.saves and _NEGATION.vjp_all is None and _NEGATION.edge_inputs is None


def _release(postorder: list[Node], skipped: list[Node]) -> None:
    """Release every node that ran, as the engine does after its loop: every node a
    gradient reached but the leaves (releasing one node does not touch another, so the
    order is free)."""
    if skipped:
        skipped_ids = {id(node) for node in skipped}
    op_classes, meta_of = _op_classes, nodes.meta_of
    for node in postorder:
        cls = type(node)
        if cls is AccumulateGrad or (skipped and id(node) in skipped_ids):
            continue
        if cls in op_classes:  # OpNode.release, inline
            node._released = True
            sources = node.sources
            if sources:
                saved = node.saved
                for position, _, _ in sources:
                    if position == "out":
                        node.saved_out = meta_of(node.saved_out)
                    else:
                        saved[position] = meta_of(saved[position])
                node.sources = ()
        else:
            node.release()


def _sort_class(cls: type) -> None:
    """Note whether the loop may run nodes of class ``cls`` itself."""
    if issubclass(cls, OpNode) and cls.apply is OpNode.apply and cls.release is OpNode.release:
        _op_classes.add(cls)
    _classes_seen.add(cls)


#: op -> (its partial rules as (input position, rule), how many inputs it has, whether
#: gradients are summed back to shape, ``edge_inputs``); rules None for an op whose rule
#: takes all inputs at once (``vjp_all``): those go through ``OpDef.pullback``
_rules: dict = {}


def _rules_of(op) -> tuple:
    partials = None
    if op.vjp_all is None and op.partials is not None:
        partials = tuple(
            (i, _direct_rules.get((op.name, i), p))
            for i, p in enumerate(op.partials)
            if p is not None
        )
    count = len(op.partials) if op.partials is not None else 0
    rules = _rules[op] = (partials, count, op.elementwise, op.edge_inputs)
    return rules


#: (gradient's shape, input's shape) -> the axes ``shapes.sum_to`` sums over
_sum_axes: dict = {}


def _summed(g, value):
    """``g`` summed back to the shape of ``value``, as ``OpDef.pullback`` does (through
    op ``sum_to``: for an array, ``shapes.sum_to``, whose axes are kept per pair of shapes)."""
    shape = value.shape
    if shape is None or None in shape:  # not in dynamic mode; kept as the readable rule
        return OPS["sum_to_like"].dispatch(g, value)
    if type(g) is np.ndarray:
        axes = _sum_axes.get((g.shape, shape))
        if axes is None:
            return _summed_first(g, shape)
        if shape == ():  # numpy's scalar, in an array of its own: nothing to copy for .grad
            return np.asarray(np.add.reduce(g, axis=axes))
        return np.add.reduce(g, axis=axes, keepdims=True).reshape(shape)
    if isinstance(g, np.generic):
        return sum_to(np.asarray(g), shape)  # op sum_to's forward, unwrapped
    return OPS["sum_to"].dispatch(g, shape=tuple(shape))


def _summed_first(g: np.ndarray, shape: tuple):
    """``shapes.sum_to``, noting its axes for the next gradient of these shapes."""
    summed = sum_to(g, shape)
    shape = tuple(shape)
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and g.shape[lead + i] != 1
    )
    if axes and len(_sum_axes) < 4096:  # no axes: sum_to gives g back, not a reshape
        _sum_axes[(g.shape, shape)] = axes
    return summed


# -- rules written out ---------------------------------------------------------------------
def _whole_mean(g, x, out, dim=None, keepdim=False):
    """Op ``mean``'s rule over the whole tensor (``_restore(g, x, None, False) /
    count``): ``g`` divided by the count, once, in ``g``'s own scalar arithmetic (the
    same rounding as the array division), filled into the input's shape."""
    shape = x.shape
    if (
        dim is not None
        or type(g) is not np.ndarray  # _plain_scalar and _known, inline
        or g.shape != ()
        or g.dtype.kind != "f"
        or shape is None
        or None in shape
    ):
        return _readable_mean(g, x, out, dim, keepdim)
    share = g[()] / max(math.prod(shape), 1)
    if shape == ():
        return share
    grad = np.empty(shape, share.dtype)
    grad.fill(share)
    return grad


def _whole_sum(g, x, out, dim=None, keepdim=False):
    """Op ``sum``'s rule over the whole tensor (``_restore(g, x, None, False)``): ``g``
    seen in the input's shape, a read-only view as ``np.broadcast_to`` makes."""
    shape = x.shape
    if dim is not None or not _plain_scalar(g) or not _known(shape):
        return _readable_sum(g, x, out, dim, keepdim)
    grad = np.ndarray(shape, g.dtype, g, 0, (0,) * len(shape))
    grad.flags.writeable = False
    return grad


def _plain_scalar(g) -> bool:
    """A 0-d array of floating-point numbers."""
    return type(g) is np.ndarray and g.shape == () and g.dtype.kind == "f"


def _known(shape) -> bool:
    return shape is not None and None not in shape


_readable_mean = OPS["mean"].partials[0]
_readable_sum = OPS["sum"].partials[0]
#: (op name, input position) -> the rule the loop runs instead of the table's
_direct_rules = {("mean", 0): _whole_mean, ("sum", 0): _whole_sum, **_dense_layer_rules}
