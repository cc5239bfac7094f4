"""Dynamic mode's fast layer: lighter nodes for long chains of one-input ops.

A node of ``y = -y`` keeps its edges as ``next_functions = ((prev, 0),)``: two tuples
(104 bytes) per node, both tracked by Python's cyclic garbage collector, which rescans
every object of a growing graph at each of its full collections (over half of a
million-op chain's forward was the collector).  Here the negation's node class,
``NegBackward0``, keeps the edges of a one-input node as that input's node alone and
builds the tuple when ``next_functions`` is read: ``((prev, 0),)``, equal item for
item, as PyTorch builds a new tuple on each read of ``grad_fn.next_functions``.

``compact_class(name)`` makes such a class, registered as :func:`node.node_class`'s
class of that name before anything else made it, so nodes of that op built the
readable way are of the very same class; they store the edges they are given (a
tuple) through the property, and read back what they stored.  The fast layer's own
code (:func:`naivegraph.fast.fastpath.negation` writing,
:mod:`naivegraph.fast.fastback` reading) uses the slot itself, ``_edges`` (the
``next_functions`` slot of :class:`~naivegraph.dynamic.node.Node` under a second name:
no field is added, a node is the same 136 bytes).

Switch: ``NAIVEGRAPH_FAST=0`` at import leaves ``NegBackward0`` the plain class of
``node.node_class``; ``fastnodes.on`` (and the whole layer's switch) at run time: off,
the negation stores the tuple, as the readable path does; either way every read gives
the same ``next_functions``.

A node's ``output_ref`` (for drawings) is its own weak reference to its output; once
that output is gone a later negation may swap it for ``DEAD_REF``, the one dead weak
reference all such nodes share (``shared_dead_ref``, in
:func:`naivegraph.fast.fastpath.negation`): ``output_ref()`` is None either way.

What it saves on the negation chain ``y = -y``: ``benchmarks/README.md``, "The fast
layer, module by module".
"""

from __future__ import annotations

import weakref

from ..dynamic import node as nodes
from . import tricks as fast

#: this trick's run-time switch (the whole layer's switch turns it off too)
on: bool = True

#: the slot that holds ``next_functions`` in every node (a member descriptor works
#: under any name of a class that has the slot)
_EDGES = nodes.Node.__dict__["next_functions"]


def _next_functions(node) -> tuple:
    """``next_functions``: the stored tuple, or the one edge ``(node, 0)`` built."""
    edges = node._edges
    if type(edges) is tuple:
        return edges
    return ((edges, 0),)


def _store_next_functions(node, edges: tuple) -> None:
    node._edges = edges  # as given: the readable path's tuple stays its tuple


class _Gone:
    """Something no one holds: ``DEAD_REF`` is a weak reference to it, dead at once."""


#: the one dead weak reference a node's dead ``output_ref`` may give way to
DEAD_REF = weakref.ref(_Gone())

#: a negation swaps the dead ``output_ref`` of the node two back for ``DEAD_REF``
shared_dead_ref: bool = True


def compact_class(name: str) -> type | None:
    """``node.node_class(name)``, made here with compact edges; None where the layer
    was off at import or a class of that name exists already (then that one serves).

    >>> import naivegraph as ng
    >>> y = -ng.tensor(2.0, requires_grad=True)
    >>> z = -y
    >>> z.grad_fn.next_functions == ((y.grad_fn, 0),)
    True
    >>> type(z.grad_fn) is type(y.grad_fn)
    True
    """
    if not fast.enabled or name in nodes._node_classes:
        return None
    body = {
        "__slots__": (),
        "__module__": nodes.__name__,  # as ``node.node_class`` makes it
        "next_functions": property(_next_functions, _store_next_functions),
        "_edges": _EDGES,
        **nodes.saved_attributes(name),
    }
    cls = type(name, (nodes.OpNode,), body)
    nodes._node_classes[name] = cls
    return cls


#: ``NegBackward0`` with compact edges (None: the plain class, the layer was off at import)
NEGATION: type | None = compact_class("NegBackward0")
