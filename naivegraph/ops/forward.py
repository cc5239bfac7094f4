"""Forward mode from the op table: every op's JVP, derived from its VJP rule.

No derivative is written here.  :mod:`naivegraph.ops.table` classifies each op (see its
docstring), and the classification picks one of three derivations:

* ``SELF_TRANSPOSED`` (elementwise): the Jacobian is diagonal, so it is its own
  transpose; the VJP partial applied to the input's tangent (broadcast to the output
  shape, with no sum back to the input's shape) is that input's share of the JVP.
* ``LINEAR``: the op is its own derivative, so the JVP is the op applied to the tangents
  (zero for an input without one).  ``MULTILINEAR`` ops (matmul) are linear in each
  argument separately: one such term per input that has a tangent.
* anything else: the *transpose trick*.  ``u -> VJP(u)`` is linear in ``u``, so
  ``d/du <VJP(u), t>`` is ``J t``.  Differentiating with respect to ``u`` is up to the
  backend (the dynamic engine, or ``ns.gradients``), passed in as ``transpose``.

The rules only dispatch ops, so one derivation serves dynamic tensors (tangents are
tensors) and static nodes (``ns.jvp`` builds the tangent graph).

>>> import numpy as np
>>> from naivegraph.ops import OPS
>>> x = np.array([1.0, 2.0])
>>> jvp(OPS["mul"], [x, 3.0], OPS["mul"].forward(x, 3.0), {}, [np.ones(2), None], None)
array([3., 3.])
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from .core import OPS, OpDef
from .shapes import same_shape, unknown_shape
from .table import LINEAR, MULTILINEAR, SELF_TRANSPOSED, F

#: ``transpose(inner, out)``: d inner(u) / du for a ``u`` shaped like ``out`` (``inner``
#: returns a scalar that is linear in ``u``).
Transpose = Callable[[Callable[[Any], Any], Any], Any]


def derivation_of(op: OpDef) -> str:
    """How ``op``'s JVP is derived: ``"self-transposed"``, ``"linear"``,
    ``"multilinear"`` or ``"transposed"`` (the generic fallback).

    >>> from naivegraph.ops import OPS
    >>> [derivation_of(OPS[n]) for n in ("exp", "sum", "matmul", "softmax")]
    ['self-transposed', 'linear', 'multilinear', 'transposed']
    """
    if op.name in SELF_TRANSPOSED:
        return "self-transposed"
    if op.name in LINEAR:
        return "linear"
    if op.name in MULTILINEAR:
        return "multilinear"
    return "transposed"


def jvp(
    op: OpDef,
    inputs: Sequence,
    out: Any,
    attrs: dict,
    tangents: Sequence,
    transpose: Transpose | None,
) -> Any:
    """The tangent of ``op(*inputs, **attrs)`` (whose value is ``out``) when each input
    moves along its tangent (``None``: it does not move); ``None`` if nothing moves.

    ``inputs`` is flat (a variadic op's list of tensors); they, ``out`` and the tangents
    are arrays, tensors or static nodes, as ``OpDef.pullback`` takes them.
    """
    if not op.differentiable or all(t is None for t in tangents):
        return None
    if op.name in ("max", "min") and attrs.get("dim") is None:
        return _evenly_read(inputs[0], out, tangents[0], attrs)
    how = derivation_of(op)
    if how == "self-transposed":
        return _self_transposed(op, inputs, out, attrs, tangents)
    if how == "linear":
        return _linear(op, inputs, attrs, tangents)
    if how == "multilinear":
        return _multilinear(op, inputs, attrs, tangents)
    if transpose is None:
        raise NotImplementedError(f"forward mode through {op.name} needs a backend to transpose")
    return _transposed(op, inputs, out, attrs, tangents, transpose)


def _self_transposed(op: OpDef, inputs, out, attrs: dict, tangents) -> Any:
    total = None
    for partial, t in zip(op.partials or (), tangents):
        if t is None or partial is None:
            continue
        term = partial(_broadcast_to(t, out), *inputs, out, **attrs)
        total = term if total is None else total + term
    return total


def _linear(op: OpDef, inputs, attrs: dict, tangents) -> Any:
    args = [
        t if t is not None else x if _not_differentiated(op, i) else _zero(x)
        for i, (x, t) in enumerate(zip(inputs, tangents))
    ]
    return _run(op, args, attrs)


def _multilinear(op: OpDef, inputs, attrs: dict, tangents) -> Any:
    total = None
    for i, t in enumerate(tangents):
        if t is None:
            continue
        term = _run(op, [t if j == i else x for j, x in enumerate(inputs)], attrs)
        total = term if total is None else total + term
    return total


def _transposed(op: OpDef, inputs, out, attrs: dict, tangents, transpose: Transpose) -> Any:
    needs = [t is not None for t in tangents]

    def inner(u):  # <VJP(u), t>: linear in u
        total = None
        for g, t in zip(op.pullback(u, list(inputs), out, attrs, needs), tangents):
            if g is not None and t is not None:
                term = F.sum(g * t)
                total = term if total is None else total + term
        return total

    return transpose(inner, out)


def _evenly_read(x, out, t, attrs: dict) -> Any:
    """max() / min() over everything: the mean tangent of the entries equal to the
    result, torch's formula.  Its reverse rule counts a NaN as the winner; this one, as
    torch's, finds no entry equal to a NaN result and gives 0 / 0 = NaN."""
    hit = F.eq(x, out)
    total = F.sum(t * hit) / F.sum(hit)
    return F.reshape_like(total, out) if attrs.get("keepdim") else total


# ----------------------------------------------------------------------------- helpers
def _run(op: OpDef, args: list, attrs: dict) -> Any:
    return op.dispatch(args, **attrs) if op.variadic else op.dispatch(*args, **attrs)


def _not_differentiated(op: OpDef, i: int) -> bool:
    """An operand the op reads only for its shape or as a selector (no partial)."""
    return op.partials is not None and op.partials[i] is None


def _zero(x: Any) -> Any:
    """A zero tangent for an operand that does not move: a number stays a number."""
    if isinstance(x, (bool, int, float, complex)):
        return 0 * x
    return OPS["zeros_like"].dispatch(x)


def _broadcast_to(t: Any, out: Any) -> Any:
    """Tangent ``t`` broadcast to the shape of ``out`` (an elementwise op's operands
    broadcast; the tangents do likewise)."""
    if same_shape(t.shape, out.shape):
        return t
    if unknown_shape(out.shape):
        return F.expand_like(t, out)
    return F.expand(t, shape=tuple(out.shape))
