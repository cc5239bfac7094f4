"""The fast layer's backward for a small graph: ``loss.backward()`` over a few dozen nodes.

:mod:`.fastback` is shaped for graphs of any size: a chain of a million nodes is walked
without a stack, its gradients handed from node to node.  On the reference example
(5 ops, 3 leaves) what costs is the fixed work around each node instead: the order's
search, the ``pending`` dict's lists, the chain tests, a call per rule.  Here a plain
``loss.backward()`` (a 0-d output, no gradient, ``inputs=`` or ``create_graph``, no
anomaly mode) on a graph of at most :data:`LIMIT` nodes, every one of them a plain op
node or a leaf without hooks, runs one walk and one loop:

- the walk is ``engine.topological_order``'s depth-first search, in the same order;
  the dict it marks nodes seen in holds each node's gradient during the pass (one
  entry per node, made once), and it turns down the graph before anything is run (a
  node with hooks, a custom ``Function``, too many nodes): then :mod:`.fastback`'s
  pass runs it, or the engine's;
- the loop is :func:`.fastback.backward_pass`'s op-node body without the chain tests:
  the same version checks and errors, the same rules with the same arguments, each
  gradient summed into its input's entry in the order the engine sums it (the same
  order, so the same bits); ``mul``, ``add`` and ``sub`` with no attributes run their
  rules as the numpy expressions the table's rules are (``g * y``, ``g``, ``-g``),
  without a call;
- the end is :mod:`.fastback`'s: ``.grad`` written after the whole pass succeeded
  (the commonest leaf inline, :func:`_write`), the saved arrays released.

The walk and the loop are one function, :func:`run`: on the reference example a call
and the list and tuple handed from one to the next cost more than the walk itself.

Why not the order of the nodes' creation stamps (``_seq``): it needs the same walk to
find the nodes, and it is another topological order, so a node with three or more
consumers would sum their gradients in another order (other bits in floating point).

Switch: ``fastsmall.on`` (and the whole layer's ``NAIVEGRAPH_FAST=0``); either way the
numbers are the same bits:

>>> import naivegraph as ng
>>> from naivegraph.fast import fastsmall
>>> w = ng.tensor(3.0, requires_grad=True)
>>> fastsmall.on = False
>>> (w * w + w).backward()
>>> fastsmall.on = True
>>> (w * w + w).backward()
>>> w.grad
tensor(14.)

What it saved: ``benchmarks/README.md``, "Round 5: a backward shaped for small graphs".
"""

from __future__ import annotations

from sys import getrefcount

import numpy as np

from ..dynamic import engine
from ..dynamic import node as nodes
from ..dynamic.anomaly_mode import mode as anomaly
from ..dynamic.grad_mode import _state as grad_mode
from ..dynamic.grad_mode import inference_users, mark_inference
from ..dynamic.node import SECOND_BACKWARD, AccumulateGrad, _metas, meta_of
from ..dynamic.tensor_autograd import _Counter
from ..ops.core import OPS, _in_dtype_of
from ..ops.table import times
from . import fastback
from . import tricks as fast
from .fastback import _op_classes, _rules, _rules_of, _summed, _write_gradients
from .tricks import _fp_state, _ignoring

_new = object.__new__

#: this trick's own switch (the whole layer's switch turns it off too)
on: bool = True

#: the most nodes (leaves included) a graph may have for this pass; a larger one goes
#: to :mod:`.fastback`, whose chain walk and hand-over pay off there
LIMIT = 64

#: ``Tensor.backward`` as :mod:`.fastback` installs it: every call this pass does not take
fast_backward = fastback.tensor_backward


def tensor_backward(
    self, gradient=None, retain_graph: bool | None = None, create_graph: bool = False, inputs=None
) -> None:
    """``Tensor.backward`` (the seam it replaces): a plain ``loss.backward()`` on a small
    graph here (:func:`run`), anything else :mod:`.fastback`'s."""
    if (
        on
        and gradient is None
        and inputs is None
        and not create_graph
        and fast.enabled
        and fast.quiet_numpy  # numpy's error state is a context variable (numpy 2)
        and not anomaly.enabled
        and engine.execute is fastback.execute  # a watch on execute sees every pass
        and fastback.on
        and run(self, False if retain_graph is None else retain_graph)
    ):
        return None
    return fast_backward(self, gradient, retain_graph, create_graph, inputs)


tensor_backward.__doc__ = fastback.readable_backward.__doc__
tensor_backward.__qualname__ = fastback.readable_backward.__qualname__


def run(tensor, keep_graph: bool) -> bool:
    """``tensor.backward()`` on a small graph; False (nothing done) for any other.

    One function, in three parts (a call each cost more than the list and tuple they
    handed on): the walk, the loop over its nodes, the leaves' ``.grad``."""
    root = tensor.grad_fn
    data = tensor._data
    if root is None or data.shape != () or not tensor._requires_grad:
        return False  # a leaf, or not 0-d: the general start (and its errors)

    # -- the walk: engine.topological_order's post-order from the root; ``grads`` has an
    # entry per node seen, its gradient during the loop.  A node the loop does not run,
    # or more than LIMIT nodes: nothing done, the general pass takes the graph.
    op_classes = _op_classes
    cls = type(root)
    if cls not in op_classes and not _sorted_in(cls) or root._hooks is not None:
        return False
    grads: dict = {root: None}
    postorder = []
    stack = [(root, iter(root.next_functions))]
    while stack:
        node, children = stack[-1]
        for child, _ in children:
            if child is not None and child not in grads:
                grads[child] = None
                cls = type(child)
                if cls is AccumulateGrad:  # no edges: finished as soon as found
                    leaf = child.variable
                    if child._hooks is not None or leaf._hooks or not leaf._requires_grad:
                        return False
                    postorder.append(child)
                    continue
                if cls not in op_classes and not _sorted_in(cls) or child._hooks is not None:
                    return False
                if len(grads) > LIMIT:
                    return False
                stack.append((child, iter(child.next_functions)))
                break
        else:
            stack.pop()
            postorder.append(node)
    if len(grads) > LIMIT:  # the leaves found last
        return False

    ones = fastback._ones.get(data.dtype)  # engine._root_gradient's ones_like
    if ones is None:
        ones = fastback._ones[data.dtype] = np.ones_like(data)
    grads[root] = ones.copy()
    was = grad_mode.enabled
    state = _fp_state.get()  # numpy's errors ignored: inf - inf in a sum is NaN
    quiet = _ignoring.get(state)
    token = None
    if quiet is not state:
        token = _fp_state.set(quiet if quiet is not None else fast._ignoring_version_of(state))
    try:
        grad_mode.enabled = False  # nothing runs that records: kept as fastback does

        # -- the loop: fastback.backward_pass's op-node body, the nodes in the engine's
        # order (the post-order from its end), each gradient summed into its input's
        # entry in the engine's order (so the same bits)
        leaf_updates = []
        ran = []
        rules_of_op = _rules
        bare = _BARE
        sum_axes, whole_mean = fastback._sum_axes, fastback._whole_mean
        ndarray, asarray, reduce = np.ndarray, np.asarray, np.add.reduce
        for node in reversed(postorder):
            g = grads.pop(node)
            if g is None:
                continue  # no gradient reached this node: not released
            if type(node) is AccumulateGrad:
                leaf_updates.append((node.variable, g))
                continue
            op = node.op
            if node._released and op.saves:
                raise RuntimeError(SECOND_BACKWARD)
            ran.append(node)
            inputs = node.saved
            sources = node.sources
            if sources:  # fastback.checked_inputs, inline: OpNode._check_versions raises
                replaced = False
                for position, owner, version in sources:
                    if position == "out":
                        if owner.value != version:
                            node._check_versions()
                        continue
                    counter = owner._version_counter
                    if counter is None:  # Tensor._version: 0
                        if version != 0:
                            node._check_versions()
                    elif type(counter) is not _Counter:  # an inference tensor's
                        if owner._version != version:
                            node._check_versions()
                    elif counter.value != version:
                        node._check_versions()
                    if owner._data is not inputs[position]:
                        replaced = True
                if replaced:
                    inputs = node._current_inputs()
            kind = bare.get(op)
            needs = node.needs
            attrs = node.attrs
            if kind is None:
                pass
            elif kind is _MEAN:  # over the whole tensor: fastback._whole_mean
                if len(attrs) == 2 and attrs.get("dim") is None and attrs.get("keepdim") is False:
                    gi = None
                    if needs[0]:
                        x = inputs[0]
                        gi = whole_mean(g, x, None)
                        try:
                            if gi.dtype is not x.dtype:
                                gi = _in_dtype_of(gi, x)
                        except AttributeError:
                            gi = _in_dtype_of(gi, x)
                    if gi is not None:
                        child = node.next_functions[0][0]
                        if child is not None:
                            current = grads[child]
                            grads[child] = gi if current is None else current + gi
                    continue
            elif not attrs:  # mul, add, sub: the table's rule, as an expression
                x, y = inputs
                gx = gy = None
                if needs[0]:
                    gx = g * y if kind is _MUL else g
                    if kind is _MUL and gx.dtype is not g.dtype:  # numpy widened g
                        gx = times(g, y)  # the table's rule: torch's promotion
                    shape = x.shape
                    if gx.shape != shape:  # fastback._summed, a sum to 0-d inline
                        axes = None
                        if shape == () and type(gx) is ndarray:
                            axes = sum_axes.get((gx.shape, shape))
                        gx = _summed(gx, x) if axes is None else asarray(reduce(gx, axis=axes))
                    try:  # the same dtype object: _in_dtype_of would give gx back
                        if gx.dtype is not x.dtype:
                            gx = _in_dtype_of(gx, x)
                    except AttributeError:  # not an array: let it decide
                        gx = _in_dtype_of(gx, x)
                if needs[1]:
                    gy = g * x if kind is _MUL else g if kind is _ADD else -g
                    if kind is _MUL and gy.dtype is not g.dtype:
                        gy = times(g, x)
                    shape = y.shape
                    if gy.shape != shape:
                        axes = None
                        if shape == () and type(gy) is ndarray:
                            axes = sum_axes.get((gy.shape, shape))
                        gy = _summed(gy, y) if axes is None else asarray(reduce(gy, axis=axes))
                    try:
                        if gy.dtype is not y.dtype:
                            gy = _in_dtype_of(gy, y)
                    except AttributeError:
                        gy = _in_dtype_of(gy, y)
                # engine.add_gradient, x's then y's (two edges: the op has no edge_inputs)
                (child, _), (other, _) = node.next_functions
                if child is not None and gx is not None:
                    current = grads[child]
                    grads[child] = gx if current is None else current + gx
                if other is not None and gy is not None:
                    current = grads[other]
                    grads[other] = gy if current is None else current + gy
                continue
            rules = rules_of_op.get(op)
            if rules is None:
                rules = _rules_of(op)
            partials, count, elementwise, positions = rules
            if partials is None or len(needs) != count:
                grad_inputs = op.pullback(g, inputs, node.saved_out, attrs, needs)
            else:  # OpDef.pullback
                grad_inputs = [None] * count
                out = node.saved_out
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
                            try:
                                cast = gi.dtype is not value.dtype
                            except AttributeError:
                                cast = True
                            if cast:
                                gi = _in_dtype_of(gi, value)
                        grad_inputs[i] = gi
            if positions is not None:  # OpNode.grads_per_edge
                grad_inputs = [grad_inputs[i] for i in positions]
            for (child, _), gi in zip(node.next_functions, grad_inputs):
                if child is not None and gi is not None:  # engine.add_gradient, one output
                    current = grads[child]
                    grads[child] = gi if current is None else current + gi
        if not keep_graph:  # fastback._release, every node here an op node that ran
            metas = _metas
            for node in ran:
                node._released = True
                sources = node.sources
                if sources:
                    saved = node.saved
                    for position, _, _ in sources:  # OpNode.release: node.meta_of, inline
                        value = node.saved_out if position == "out" else saved[position]
                        meta = metas.get((value.shape, value.dtype))
                        if meta is None:
                            meta = meta_of(value)
                        if position == "out":
                            node.saved_out = meta
                        else:
                            saved[position] = meta
                    node.sources = ()
        # the loop's names let go of every gradient: a leaf's is kept without a copy
        # only where nothing else holds it (fast.is_unshared)
        g = gi = gx = gy = current = grad_inputs = inputs = x = y = value = None

        # -- the leaves' .grad, once the whole pass succeeded
        grad_mode.enabled = was
        del grads, postorder  # gone before .grad is written: a gradient may be owned
        _write(leaf_updates)
    finally:
        grad_mode.enabled = was
        if token is not None:
            _fp_state.reset(token)
    return True


def _sorted_in(cls: type) -> bool:
    """Whether ``cls`` is one of the op-node classes the loop runs (sorted on first sight)."""
    if cls not in fastback._classes_seen:
        fastback._sort_class(cls)
    return cls in _op_classes


def _write(leaf_updates: list) -> None:
    """:func:`.fastback._write_gradients` with its commonest case inline: each leaf's
    first ``.grad``, of its own dtype and shape, without post-accumulate hooks, kept
    without a copy where nothing else holds it; any other leaf, that function for all.
    The tensor is ``Tensor._make``'s and the test ``fast.is_unshared``'s, written out:
    two calls a leaf, on every step of a learner's loop."""
    for leaf, grad in leaf_updates:
        data = leaf._data
        if (
            leaf._grad is not None
            or type(grad) is not np.ndarray
            or grad.dtype is not data.dtype
            or grad.shape != data.shape
            or leaf.__dict__.get("_post_accumulate_hooks")
        ):
            _write_gradients(leaf_updates, None)
            return
    tensor = nodes.tensor_class
    inference = inference_users[0] and grad_mode.inference
    unshared = _UNSHARED_HERE if fast.enabled else 0
    while leaf_updates:  # the last first, as _write_gradients writes them
        leaf, grad = leaf_updates.pop()
        if not (getrefcount(grad) <= unshared and grad.base is None and grad.flags.writeable):
            grad = np.array(grad, copy=True)  # another holder: the copy is the leaf's own
        made = _new(tensor)
        made._data = grad
        made._requires_grad = False
        made.grad_fn = None
        made._output_nr = 0
        leaf._grad = mark_inference(made) if inference else made


def _count_here() -> int:
    """What ``getrefcount`` gives in :func:`_write` for a gradient only its local holds
    (interpreters differ in the references a call adds)."""
    grad = object()
    return getrefcount(grad)


_UNSHARED_HERE = _count_here()


_MUL, _ADD, _SUB, _MEAN = OPS["mul"], OPS["add"], OPS["sub"], OPS["mean"]


def _bare_rules() -> dict:
    """op -> itself, for ``mul``, ``add`` and ``sub``: two inputs, one edge each, rules
    elementwise, and (checked here) the rules the expressions in :func:`run` are."""
    g, x, y = np.float64(3.0), np.float64(5.0), np.float64(7.0)
    expected = {_MUL: (g * y, g * x), _ADD: (g, g), _SUB: (g, -g)}
    bare = {}
    for op, values in expected.items():
        partials = op.partials
        if (
            op.vjp_all is None
            and op.edge_inputs is None
            and op.elementwise
            and partials is not None
            and len(partials) == 2
            and tuple(partial(g, x, y, None) for partial in partials) == values
        ):
            bare[op] = op
    if fastback._direct_rules.get(("mean", 0)) is fastback._whole_mean:
        bare[_MEAN] = _MEAN
    return bare


#: the ops whose rules :func:`run` writes out (the expressions are the table's rules)
_BARE = _bare_rules()
