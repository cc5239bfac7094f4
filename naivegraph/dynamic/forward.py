"""Forward-mode AD for dynamic tensors: dual levels, tangents, and their propagation.

While a dual level is active, every op whose inputs carry tangents gives its output
the tangent :func:`naivegraph.ops.forward.jvp` derives from the op table.  Tangents
live in the level, keyed by tensor: they vanish with the level, as in PyTorch, and a
tensor never grows a field for them.  The public API is :mod:`naivegraph.autograd.forward_ad`.

Tangents are computed with tensor ops, so they are differentiable in reverse mode
(a tangent of inputs that require grad has a ``grad_fn``).  Computing them does not
propagate tangents again: there is one level at a time (PyTorch does not nest levels
either).

>>> import naivegraph as ng
>>> level = enter_level()
>>> x = ng.tensor([1.0, 2.0])
>>> set_tangent(x, ng.tensor([1.0, 0.0]))
>>> tangent_of(x.exp() * 2)
tensor([5.4366, 0.0000])
>>> exit_level(level)
"""

from __future__ import annotations

import contextlib
import weakref
from typing import Any, Iterator, Sequence

import numpy as np

from ..ops.core import OPS, OpDef
from ..ops.forward import jvp
from . import node as _node
from .engine import grad as _grad
from .grad_mode import _state as _grad_state
from .node import is_tensor

NESTED = "Nested forward mode AD is not supported at the moment"


class _Dual:
    """What ``apply`` checks once per op: ``active`` is True only while a level is
    entered and its tangents are not being computed (which would recurse)."""

    __slots__ = ("active", "level", "tangents")

    def __init__(self) -> None:
        self.active = False
        self.level: int | None = None
        #: id(tensor) -> (weak reference to the tensor, its tangent)
        self.tangents: dict[int, tuple[weakref.ref, Any]] = {}


dual = _Dual()


# ----------------------------------------------------------------------------- levels
def enter_level() -> int:
    """Start the (single) dual level and return its number, 0."""
    if dual.level is not None:
        raise RuntimeError(NESTED)
    dual.level, dual.active = 0, True
    return 0


def exit_level(level: int | None = None) -> None:
    """End the dual level: every tangent made in it is dropped."""
    if dual.level is None:
        raise RuntimeError(
            "Dual level must be a positive number. (No dual level is active: enter one "
            "first with enter_dual_level() or `with dual_level():`.)"
        )
    if level is not None and level != dual.level:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            f"This is not supported. (The active level is {dual.level}, not {level}.)"
        )
    dual.tangents.clear()
    dual.level, dual.active = None, False


# ----------------------------------------------------------------------------- storage
def tangent_of(tensor: Any) -> Any:
    """The tangent ``tensor`` carries in the active level, or None.

    A tensor that a backward pass rebuilt from its node (``create_graph=True`` hands a
    rule the saved output as a new tensor of that node) finds its tangent through the
    node: that is how forward mode runs over reverse mode (``hessian``)."""
    tangents = dual.tangents
    entry = tangents.get(id(tensor))
    if entry is not None and entry[0]() is tensor:
        return entry[1]
    node = getattr(tensor, "grad_fn", None)
    if node is not None:
        entry = tangents.get(id(node))
        if entry is not None and entry[0]() is node:
            return entry[1]
    base = getattr(tensor, "_base", None)
    if base is not None:
        return _view_of_base_tangent(tensor, base)
    return None


def _view_of_base_tangent(view: Any, base: Any) -> Any:
    """A view made before its base received a tangent (``base.copy_(dual)``) sees the
    base's tangent through the same view ops, as torch's views share their base's."""
    found = tangent_of(base)
    if found is None:
        return None
    active, dual.active = dual.active, False
    try:
        for op, attrs, _ in view._view_chain:
            found = op.dispatch(found, **attrs)
    finally:
        dual.active = active
    _remember(view, found)
    return found


def set_tangent(tensor: Any, tangent: Any) -> None:
    """Attach ``tangent`` to ``tensor`` for the rest of the active level."""
    _remember(tensor, tangent)


def _remember(owner: Any, tangent: Any) -> None:
    key = id(owner)
    tangents = dual.tangents

    def forget(ref: weakref.ref) -> None:  # the owner died: so does its tangent
        entry = tangents.get(key)
        if entry is not None and entry[0] is ref:
            del tangents[key]

    tangents[key] = (weakref.ref(owner, forget), tangent)


def alias(tensor: Any) -> Any:
    """A view of all of ``tensor``, with its history (if any) and no tangent."""
    active, dual.active = dual.active, False
    try:
        return OPS["reshape"].dispatch(tensor, shape=tuple(tensor.shape))
    finally:
        dual.active = active


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Ops inside carry no tangents (a custom Function's forward and jvp)."""
    active, dual.active = dual.active, False
    try:
        yield
    finally:
        dual.active = active


def dual_of(tensor: Any, tangent: Any) -> Any:
    """A view of ``tensor`` carrying ``tangent`` (inputs checked by the caller)."""
    view = alias(tensor)
    set_tangent(view, tangent)
    return view


# ----------------------------------------------------------------------------- propagation
def propagate(op: OpDef, inputs: Sequence, attrs: dict, result: Any) -> None:
    """Give ``result`` (``op``'s output, just made) the tangent its inputs imply."""
    tangents = [tangent_of(x) for x in inputs]
    if not any(t is not None for t in tangents) or not _floating(result):
        return
    tangent = _paused_jvp(op, inputs, result, attrs, tangents)
    if tangent is not None:
        _remember(result, tangent)
        if result.grad_fn is not None:  # the node's output, whoever rebuilds it
            _remember(result.grad_fn, tangent)


def propagate_inplace(
    op: OpDef, target: Any, others: Sequence, attrs: dict, new_data: np.ndarray
) -> None:
    """``target`` is about to receive ``new_data`` from op(target, *others): give it the
    tangent of that new value (called before the write, while the old value is readable)."""
    tangents = [tangent_of(target)] + [tangent_of(x) for x in others]
    if not any(t is not None for t in tangents) or new_data.dtype.kind not in "fc":
        return
    make = _node.tensor_class._make
    old = make(np.array(target._data, copy=True), False, None, 0)
    out = make(new_data, False, None, 0)
    tangent = _paused_jvp(op, [old, *others], out, attrs, tangents)
    if tangent is not None:
        _write_tangent(target, tangent)


def _write_tangent(target: Any, tangent: Any) -> None:
    """Store the new tangent of an in-place op's target *into* its current tangent, as
    torch does: the views of a tensor carry views of its tangent, so a write through a
    view (``y[1:] = x``) moves the base's tangent too, and vice versa."""
    dual.active = False
    try:
        slot = _tangent_slot(target)
        if slot is not None and slot.shape == tangent.shape:
            try:
                slot.copy_(tangent)
                return
            except (RuntimeError, ValueError):  # read-only (broadcast) or a grad leaf
                pass
        _remember(target, tangent)
    finally:
        dual.active = dual.level is not None


def _tangent_slot(target: Any) -> Any:
    """``target``'s tangent; for a view of a tensor without one, the view (rebuilt
    along the same view ops) of a zero tangent given to its base."""
    found = tangent_of(target)
    base = target._base
    if found is not None or base is None or base._data.dtype.kind not in "fc":
        return found
    found = tangent_of(base)
    if found is None:
        found = _node.tensor_class._make(np.zeros_like(base._data), False, None, 0)
        _remember(base, found)
    for op, attrs, _ in target._view_chain:
        found = op.dispatch(found, **attrs)
    _remember(target, found)
    return found


def _paused_jvp(op: OpDef, inputs: Sequence, out: Any, attrs: dict, tangents: list) -> Any:
    # The JVP needs a graph of its own only when an input or a tangent requires grad
    # (reverse mode over forward mode) and grad mode is on.
    keep_graph = _grad_state.enabled and any(
        is_tensor(v) and v._requires_grad for v in (*inputs, *tangents)
    )

    def transpose(inner, like: Any) -> Any:
        return _transpose(inner, like, keep_graph)

    dual.active = False  # the tangent's own ops carry no tangent (one level)
    try:
        return jvp(op, inputs, out, attrs, tangents, transpose)
    finally:
        dual.active = dual.level is not None


def _floating(tensor: Any) -> bool:
    return tensor._data.dtype.kind in "fc"


def _transpose(inner, out: Any, keep_graph: bool) -> Any:
    """d inner(u) / du by the reverse engine (``inner`` is linear in ``u``)."""
    make = _node.tensor_class._make
    u = make(np.zeros(out._data.shape, dtype=out._data.dtype), True, None, 0)
    previous = _grad_state.enabled
    _grad_state.enabled = True  # the transpose trick needs u's graph even under no_grad
    try:
        total = inner(u)
    finally:
        _grad_state.enabled = previous
    found = None
    if total is not None and total._requires_grad:
        (found,) = _grad(total, [u], create_graph=keep_graph, allow_unused=True)
    return make(np.zeros_like(out._data), False, None, 0) if found is None else found


def is_dual_tensor(value: Any) -> bool:
    """Whether ``value`` is a tensor carrying a tangent in the active level."""
    return is_tensor(value) and tangent_of(value) is not None
