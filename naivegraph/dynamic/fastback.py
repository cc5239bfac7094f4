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

Switch: ``fastback.on`` (and the whole layer's ``NAIVEGRAPH_FAST=0``); either way the
numbers are the same bits:

>>> import naivegraph as ng
>>> from naivegraph.dynamic import fastback
>>> x = ng.tensor(3.0, requires_grad=True)
>>> fastback.on = False
>>> (x * x).backward()
>>> fastback.on = True
>>> (x * x).backward()
>>> x.grad
tensor(12.)

Each gradient's fix-ups (summed back to shape, cast to its input's dtype) run right
after its partial, where the readable ``pullback`` runs every partial first: the same
values, as a fix-up reads only its own gradient.

Measured (2 cores shared with other jobs: instruction counts are the repeatable figure,
wall clock moved by 30% and more):

- backward alone, instructions (callgrind; graphs built first, then ``backward()`` on
  each, minus the same run without the backward calls): the 1,000-op chain
  ``y = y * 0.999; y = y + 0.001`` 35,259 -> 18,239 per node (-48%); the reference
  example 438,943 -> 393,920 per backward (-10%: its time is numpy's arithmetic, the
  rules' own dispatch of ``F.*`` ops, and writing ``.grad``).
- ``python benchmarks/instructions.py <before> <after>`` (forward + backward): (a)
  1,000 x reference 846.2M -> 719.5M (-15%), (b) 15 x 1,000-op chain 1,343.6M ->
  1,133.4M (-16%).
- wall clock, the chain's backward per node (``split.py``-style timing, best of 7 x 20
  chains, quiet machine): 3.46-3.49 us -> 1.80-1.86 us; the reference example's
  backward 68 us -> 53 us (best of 7 x 2,000).
"""

from __future__ import annotations

import numpy as np

from .. import fast
from ..ops.core import OPS, _in_dtype_of
from ..ops.shapes import sum_to
from .hooks import Visitor
from .node import SECOND_BACKWARD, AccumulateGrad, Node, OpNode

#: this trick's own switch (the whole layer's switch turns it off too)
on: bool = True

#: the node classes whose nodes the loop runs itself: ``OpNode`` subclasses that keep
#: its ``apply`` and ``release`` (saved-tensor hooks swap a node's class for one that
#: does not); every class is sorted into this set or not the first time it is met
_op_classes: set[type] = set()
_classes_seen: set[type] = set()


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


def _sort_class(cls: type) -> None:
    """Note whether the loop may run nodes of class ``cls`` itself."""
    if issubclass(cls, OpNode) and cls.apply is OpNode.apply and cls.release is OpNode.release:
        _op_classes.add(cls)
    _classes_seen.add(cls)


def backward_pass(order: list[Node], pending: dict, visitor: Visitor, keep_graph: bool) -> None:
    """:func:`naivegraph.dynamic.engine.backward_pass`, with the plain nodes run inline:
    ``Visitor.visit``, ``OpNode.apply``, ``OpDef.pullback`` and ``add_gradient`` in one
    loop (a call costs more than most of what those functions do on a small tensor)."""
    ran = []  # nodes to release, as the engine keeps them
    ran_plain = []  # op-table nodes that saved no tensor: releasing them is one flag
    leaf_updates = visitor.leaf_updates
    op_classes, rules_of_op = _op_classes, _rules
    for node in order:
        grads = pending.pop(node, None)
        if grads is None:
            continue  # no gradient reached this node
        if type(node) in op_classes and node._hooks is None:  # OpNode.apply, inline
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
        elif type(node) is AccumulateGrad and node._hooks is None and not node.variable._hooks:
            leaf_updates.append((node.variable, grads[0]))  # what the visitor does
            continue
        else:  # the readable way (and a class met for the first time, sorted for next time)
            if type(node) not in _classes_seen:
                _sort_class(type(node))
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
        return sum_to(np.asarray(g), shape)  # op sum_to's forward, unwrapped
    return OPS["sum_to"].dispatch(g, shape=tuple(shape))
