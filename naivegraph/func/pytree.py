"""Nested containers of tensors ("pytrees"), as torch.func takes and returns them.

A transform's arguments and results may be tensors or tuples, lists and dicts of them,
nested: a model's parameters as a dict, a function returning ``(loss, logits)``.
:func:`flatten` lists the leaves in a fixed order and describes the nesting;
:func:`unflatten` puts new leaves back into the same nesting.

>>> leaves, spec = flatten({"w": 1, "b": (2, 3)})
>>> leaves, spec
([1, 2, 3], {'w': *, 'b': (*, *)})
>>> unflatten([10, 20, 30], spec)
{'w': 10, 'b': (20, 30)}
"""

from __future__ import annotations

from typing import Any, Callable


class Spec:
    """The nesting of a pytree: a leaf (``kind`` None) or a container and its children."""

    __slots__ = ("kind", "keys", "children")

    def __init__(self, kind: type | None = None, keys: tuple = (), children: tuple = ()):
        self.kind, self.keys, self.children = kind, keys, children

    @property
    def is_leaf(self) -> bool:
        return self.kind is None

    @property
    def num_leaves(self) -> int:
        return 1 if self.is_leaf else sum(c.num_leaves for c in self.children)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Spec) and (self.kind, self.keys, self.children) == (
            other.kind,
            other.keys,
            other.children,
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.keys, self.children))

    def __repr__(self) -> str:
        if self.is_leaf:
            return "*"
        inner = [repr(c) for c in self.children]
        if issubclass(self.kind, dict):
            return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(self.keys, inner)) + "}"
        if issubclass(self.kind, list):
            return "[" + ", ".join(inner) + "]"
        return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"


LEAF = Spec()


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def flatten(tree: Any) -> tuple[list, Spec]:
    """The leaves of ``tree`` (depth first, dicts in insertion order) and its nesting."""
    leaves: list = []
    return leaves, _flatten_into(tree, leaves)


def _flatten_into(tree: Any, leaves: list) -> Spec:
    if isinstance(tree, dict):
        keys = tuple(tree)
        return Spec(type(tree), keys, tuple(_flatten_into(tree[k], leaves) for k in keys))
    if isinstance(tree, (tuple, list)):
        return Spec(type(tree), (), tuple(_flatten_into(v, leaves) for v in tree))
    leaves.append(tree)
    return LEAF


def unflatten(leaves: list, spec: Spec) -> Any:
    """``leaves`` put back into the nesting ``spec`` describes."""
    if len(leaves) != spec.num_leaves:
        raise ValueError(f"expected {spec.num_leaves} leaves for {spec}, got {len(leaves)}")
    return _build(iter(leaves), spec)


def _build(leaves, spec: Spec) -> Any:
    if spec.is_leaf:
        return next(leaves)
    children = [_build(leaves, c) for c in spec.children]
    if issubclass(spec.kind, dict):
        return spec.kind(zip(spec.keys, children))
    if issubclass(spec.kind, tuple) and hasattr(spec.kind, "_fields"):
        return spec.kind(*children)  # a namedtuple
    return spec.kind(children)


def tree_map(fn: Callable, tree: Any) -> Any:
    """``tree`` with ``fn`` applied to every leaf."""
    leaves, spec = flatten(tree)
    return unflatten([fn(leaf) for leaf in leaves], spec)


def broadcast_prefix(prefix: Any, tree: Any) -> list | None:
    """One entry of ``prefix`` per leaf of ``tree``: ``prefix`` matches the top of
    ``tree``'s nesting and each of its leaves covers a whole subtree (``vmap``'s
    ``in_dims=(0, None)`` for arguments ``(x, {"w": w, "b": b})``). None if it does not fit."""
    out: list = []
    return out if _broadcast_into(prefix, tree, out) else None


def _broadcast_into(prefix: Any, tree: Any, out: list) -> bool:
    if not isinstance(prefix, (tuple, list, dict)):
        out.extend([prefix] * flatten(tree)[1].num_leaves)
        return True
    if isinstance(prefix, dict):
        if not isinstance(tree, dict) or set(prefix) != set(tree):
            return False
        return all(_broadcast_into(prefix[k], tree[k], out) for k in tree)
    if not isinstance(tree, (tuple, list)) or len(prefix) != len(tree):
        return False
    return all(_broadcast_into(p, t, out) for p, t in zip(prefix, tree))
