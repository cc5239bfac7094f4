"""The fast layer's backward pass: the engine's loop with the per-node calls taken out.

:func:`naivegraph.dynamic.engine.backward_pass` hands a node and its gradients to the
visitor, which hands them to the node, which hands them to its op's ``pullback``,
which runs the partial rules inside a wrapper that silences numpy.  In a plain
``backward()`` (no ``create_graph``, no ``inputs=``, not ``autograd.grad``, no anomaly
mode) most of those layers do nothing: the pass already runs with numpy's warnings
off, a node without hooks goes straight to its VJP, and most gradients already have
their input's shape and dtype.  :func:`backward_pass` is that loop with those calls
written out inline: the same partial rules, called with the same arguments in the same
order, the same topological order, the gradients summed in the same order, and the
same errors (it calls the readable code to raise them).  A node it does not know
(hooks, a leaf with hooks, a custom ``Function``, a view's rebase, saved-tensor hooks)
goes to the visitor, the readable way, for that node alone.

Switch: ``fastback.on`` (and the whole layer's ``NAIVEGRAPH_FAST=0``).

Measured (this machine: 2 cores shared with other jobs, so wall clock is rough):

- ``python split.py`` on the 1,000-op chain ``y = y * 0.999; y = y + 0.001`` (float32
  0-d), microseconds per node of backward: TODO.
- ``python benchmarks/instructions.py`` (callgrind): TODO.
"""

from __future__ import annotations

import numpy as np

from .. import fast
from ..ops.core import OPS, _in_dtype_of
from .hooks import Visitor
from .node import SECOND_BACKWARD, AccumulateGrad, Node, OpNode

#: this trick's own switch (the whole layer's switch turns it off too)
on: bool = True

_OP, _LEAF, _OTHER = 0, 1, 2
#: node class -> how the fast loop runs it (a class, not an instance: nodes change class
#: only to one made for them, e.g. by saved-tensor hooks, which is looked up anew)
_kinds: dict[type, int] = {}

#: the numpy function behind op ``sum_to``, without the dispatch and the silencing
#: wrapper: inside a backward pass numpy is already silent and gradients are arrays
_sum_to = getattr(OPS["sum_to"].forward, "__wrapped__", OPS["sum_to"].forward)


def takes(visitor: Visitor) -> bool:
    """Whether this pass can run here: a plain visitor, with nothing asked of it but
    ``.grad`` of every leaf, and the gradients plain arrays (no ``create_graph``)."""
    return (
        on
        and fast.enabled
        and type(visitor) is Visitor
        and visitor.targets is None
        and not visitor.create_graph
    )


def _kind_of(cls: type) -> int:
    """How nodes of class ``cls`` run: inline, as a leaf, or through the visitor."""
    kind = _OTHER
    if issubclass(cls, OpNode) and cls.apply is OpNode.apply and cls.release is OpNode.release:
        kind = _OP
    elif cls is AccumulateGrad:
        kind = _LEAF
    _kinds[cls] = kind
    return kind


def backward_pass(order: list[Node], roots: list, visitor: Visitor, keep_graph: bool) -> None:
    """:func:`naivegraph.dynamic.engine.backward_pass`, with the plain nodes run inline:
    ``Visitor.visit``, ``OpNode.apply``, ``OpDef.pullback`` and ``add_gradient`` in one
    loop (a call costs more than most of what those functions do on a small tensor)."""
    pending: dict[Node, list] = {}
    for node, output_nr, grad in roots:
        _add(pending, node, output_nr, grad)
    ran = []  # nodes to release, as the engine keeps them
    ran_plain = []  # op-table nodes that saved no tensor: releasing them is one flag
    leaf_updates = visitor.leaf_updates
    kinds, rules_of_op = _kinds, _rules
    for node in order:
        grads = pending.pop(node, None)
        if grads is None:
            continue  # no gradient reached this node
        kind = kinds.get(type(node))
        if kind is None:
            kind = _kind_of(type(node))
        if node._hooks is not None:
            kind = _OTHER
        if kind == _OP:  # OpNode.apply
            op = node.op
            if node._released and op.saves:
                raise RuntimeError(SECOND_BACKWARD)
            inputs = node.saved
            if node.sources:
                inputs = _checked_inputs(node)
                ran.append(node)
            else:
                ran_plain.append(node)
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
                        gi = (
                            partial(g, *inputs, out, **attrs) if attrs else partial(g, *inputs, out)
                        )
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
        elif kind == _LEAF and not node.variable._hooks:
            leaf_updates.append((node.variable, grads[0]))  # what the visitor does
            continue
        else:
            grad_inputs = visitor.visit(node, grads)
            if grad_inputs is None:
                continue
            ran.append(node)
        for (child, output_nr), grad in zip(node.next_functions, grad_inputs):
            if child is not None and grad is not None:  # engine.add_gradient
                slot = pending.get(child)
                if slot is None:
                    slot = pending[child] = [None] * child.num_outputs
                    slot[output_nr] = grad
                else:  # the same sum, in the same order
                    current = slot[output_nr]
                    slot[output_nr] = grad if current is None else current + grad
    if not keep_graph:  # releasing one node does not touch another: the order is free
        for node in ran:
            node.release()
        for node in ran_plain:  # OpNode.release, with nothing saved to let go of
            node._released = True
            node.sources = ()


def _add(pending: dict, node: Node, output_nr: int, grad) -> None:
    """:func:`naivegraph.dynamic.engine.add_gradient`."""
    slot = pending.get(node)
    if slot is None:
        slot = pending[node] = [None] * node.num_outputs
    current = slot[output_nr]
    slot[output_nr] = grad if current is None else current + grad


#: op -> (its partial rules as (input position, rule), how many inputs it has, whether
#: gradients are summed back to shape, ``edge_inputs``); rules None for an op whose rule
#: takes all inputs at once (``vjp_all``): those go through ``OpDef.pullback``
_rules: dict = {}


def _rules_of(op) -> tuple:
    partials = None
    if op.vjp_all is None and op.partials is not None:
        partials = tuple((i, p) for i, p in enumerate(op.partials) if p is not None)
    count = len(op.partials) if op.partials is not None else 0
    rules = _rules[op] = (partials, count, op.elementwise, op.edge_inputs)
    return rules


def _checked_inputs(node: OpNode) -> list:
    """The saved inputs after the version check (``OpNode._check_versions``, which
    raises the error) and read through their tensors (``OpNode._current_inputs``)."""
    inputs = node.saved
    replaced = False
    for position, owner, version in node.sources:
        if position == "out":
            if owner.value != version:
                node._check_versions()
        else:
            if owner._version != version:
                node._check_versions()
            if owner._data is not inputs[position]:
                replaced = True
    return node._current_inputs() if replaced else inputs


def _summed(g, value):
    """``g`` summed back to the shape of ``value``, as ``OpDef.pullback`` does."""
    shape = value.shape
    if shape is None or None in shape:  # not in dynamic mode; kept as the readable rule
        return OPS["sum_to_like"].dispatch(g, value)
    if type(g) is np.ndarray or isinstance(g, np.generic):
        return _sum_to(g, shape=tuple(shape))
    return OPS["sum_to"].dispatch(g, shape=tuple(shape))
