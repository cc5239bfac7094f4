"""Describe what a program built, field by field, with names instead of identities.

Two runs of one program (the fast layer on and off) must build the same tensors and
nodes; comparing descriptions shows a field one path forgot as missing.
"""

from __future__ import annotations

import numpy as np

import naivegraph as ng
from naivegraph.dynamic.node import Node
from naivegraph.ops.core import Meta


def _slots(cls: type) -> list:
    names = [n for k in reversed(cls.__mro__) for n in vars(k).get("__slots__", ())]
    # ``_seq`` stamps creation order, different in two runs of one program (its order is
    # tested with the walkthrough, tests/render/test_walkthrough.py)
    return [n for n in dict.fromkeys(names) if n not in ("__weakref__", "_seq")]


def _value(v, names: dict):
    """A comparable description of a value a node holds."""
    if isinstance(v, np.ndarray):
        owner = names.get(id(v))  # the very array of a named tensor, as the readable path
        return ("array", owner, v.dtype.str, v.shape, v.tobytes())
    if isinstance(v, Meta):
        return ("meta", tuple(v.shape), np.dtype(v.dtype).str)
    if isinstance(v, ng.Tensor):
        return ("tensor", names.get(id(v), "?"))
    if isinstance(v, Node):
        return ("node", names.get(id(v), "?"))
    if type(v).__name__ == "ReferenceType":
        return ("weakref", _value(v(), names))
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, tuple(_value(i, names) for i in v))
    if isinstance(v, dict):
        return ("dict", tuple(sorted((k, _value(i, names)) for k, i in v.items())))
    if type(v).__name__ == "_Hooks":  # a node's hooks: which kinds, how many
        return ("hooks", tuple(len(getattr(v, k) or ()) for k in v.__slots__))
    if type(v).__name__ == "_Counter":  # a version counter
        return ("counter", names.get(id(v), "?"), v.value)
    if hasattr(v, "name") and hasattr(v, "forward"):  # an OpDef
        return ("op", v.name)
    return (type(v).__name__, repr(v))


def describe(tensors: dict) -> list:
    """Every named tensor's value and state, and every node reachable from them with
    every field of its class (a field the fast path forgot shows up as missing)."""
    names = {}
    for name, t in tensors.items():
        names[id(t)] = name
        names[id(t._data)] = name + ".data"
        names[id(t._version_counter)] = name + ".version_counter"
    nodes, todo = [], [t.grad_fn for t in tensors.values() if t.grad_fn is not None]
    while todo:
        node = todo.pop(0)
        if id(node) in names:
            continue
        names[id(node)] = f"node{len(nodes)}"
        nodes.append(node)
        todo.extend(fn for fn, _ in node.next_functions if fn is not None)
    out = []
    for name, t in tensors.items():
        d = t._data
        out.append((name, d.dtype.str, d.shape, d.tobytes(), t.requires_grad, t.is_leaf))
        out.append((name, "version", t._version, _value(t.grad_fn, names)))
        out.append((name, "output_nr", t._output_nr, type(t).__name__, sorted(vars(t))))
    for node in nodes:
        fields = [type(node).__name__]
        for slot in _slots(type(node)):
            fields.append((slot, _value(getattr(node, slot, "<unset>"), names)))
        out.append(tuple(fields))
    return out
