"""Every primitive of naivegraph, once: numpy forward + one partial VJP per input.

How to read a ``defop``::

    defop("mul", np.multiply, [lambda g, x, y, out: g * y,
                               lambda g, x, y, out: g * x],
          saves={0: (1,), 1: (0,)}, elementwise=True)

- the name, then the numpy forward: ``mul(x, y)`` computes ``np.multiply(x, y)``;
- one partial per input, each a vector-Jacobian product: given ``g``, the gradient of
  the output, the first returns the gradient of ``x`` (``g * y``), the second that of
  ``y``; ``None`` where an input gets no gradient (an index, a mask);
- ``saves``: the values the partials read, by input position (or ``"out"``): here
  the gradient of ``x`` reads ``y`` and that of ``y`` reads ``x``, so a node keeps only
  the factor its needed gradients read; a tuple (``saves=(0,)``) when every partial
  reads the same values, ``saves=()`` when none reads a value;
- ``elementwise``: numpy broadcasting applies, and each gradient is summed back to its
  input's shape.

Partials only use operators and ``F.<op>(...)``, so one rule differentiates arrays,
dynamic tensors (``create_graph=True``) and static nodes (symbolic gradients) alike (see
:mod:`naivegraph.ops.core`).

Forward mode (JVPs) needs no rule of its own, only a classification
(``SELF_TRANSPOSED``, ``LINEAR``, ``MULTILINEAR`` below; :mod:`naivegraph.ops.forward`):
an elementwise op's Jacobian is diagonal, its own transpose, so its VJP partial applied
to the tangent (broadcast to the output, not summed back) is its JVP; a linear op is its
own JVP (the op applied to the tangents), a multilinear one (matmul) in each argument
separately.  Every other op falls back to the transpose trick: a partial is linear in
``g``, so ``d/dg <VJP(g), t>`` is the JVP.  Adding an op means adding one ``defop``
here (and, optionally, its name to one of those sets: a faster JVP); its ONNX form goes
beside the exporter (:mod:`naivegraph.export.onnx_map`), and the tests that hold every
op to a gradient check and to torch's ``next_functions`` name the file and the line to
add for a new one.

The entries run from the simplest (elementwise arithmetic) to the most composite
(losses); what PyTorch calls each op's backward node is kept apart, in
:mod:`naivegraph.ops.names`.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .core import (
    OPS,
    Meta,
    default_float,
    defop,
    op_function,
    promote,
    promoted,
    result_type,
    summed_to,
    torch_dtype_name,
    warn_at_caller,
    writes_like,
)
from .shapes import normalize_dims, reduced_keepdim_shape, same_shape, unknown_shape
from .shapes import sum_to as _np_sum_to


class _Functions:
    """``F.exp(x)`` dispatches op ``exp`` on whatever ``x`` is (array, tensor, node)."""

    def __getattr__(self, name: str):
        if name not in OPS:
            raise AttributeError(f"no op named {name!r} in the op table")
        function = op_function(name)
        setattr(self, name, function)  # cache: later lookups skip __getattr__
        return function

    def __dir__(self):  # dir(F) and tab completion list the ops, not only those used yet
        return sorted(set(OPS) | set(super().__dir__()))


F = _Functions()

# How forward mode derives each op's JVP from its partials (see the module docstring).
# An op in none of these sets is differentiated by the transpose trick, which always works.
SELF_TRANSPOSED = frozenset(
    {
        *("mul", "div", "reciprocal", "pow_scalar", "pow", "rsub", "rpow", "maximum"),
        *("minimum", "where", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid"),
        *("relu", "abs", "clamp", "fill"),
    }
)
LINEAR = frozenset(
    {
        *("add", "sub", "neg", "clone", "to_copy", "zero", "copy", "sum", "mean"),
        *("reshape", "expand", "sum_to", "reshape_like", "expand_like", "sum_to_like"),
        *("transpose", "t", "permute", "squeeze", "unsqueeze", "getitem", "scatter"),
        *("scatter_like", "index_put", "cat", "stack"),
    }
)
MULTILINEAR = frozenset({"matmul", "bmm"})  # linear in each argument separately


# ----------------------------------------------------------------------------------
# Shapes in rules.  A rule reads the shape of a value it did not keep from a Meta, and
# arrays and tensors always know theirs.  A static graph may not: a placeholder of shape
# (None, 3) takes any batch size.  There the helpers below build an op that reads the
# size from the value itself when the graph runs (``reshape_like``, ``expand_like``,
# ``sum_to_like``, ``count``), so one symbolic gradient serves every batch size.  Known
# shapes take the plain ops, so what dynamic mode records does not change.
# ----------------------------------------------------------------------------------
def _reshape_to(g, like):
    """``g`` with the shape of ``like`` (its saved value or its Meta)."""
    if unknown_shape(like.shape):
        return F.reshape_like(g, like)
    return F.reshape(g, shape=tuple(like.shape))


def _expand_to(g, like):
    """``g`` broadcast to the shape of ``like``."""
    if unknown_shape(like.shape):
        return F.expand_like(g, like)
    return F.expand(g, shape=tuple(like.shape))


def _restore(g, x, dim, keepdim):
    """Broadcast a reduced gradient ``g`` back over the shape of the input ``x``."""
    if x.shape is None or None in x.shape:  # unknown_shape, inline: every reduction passes
        axes = None if dim is None else normalize_dims(dim, _rank_of(x, "a reduction's gradient"))
        if axes is not None and not keepdim:
            for axis in sorted(axes):
                g = F.unsqueeze(g, dim=axis)
        return F.expand_like(g, x)
    if not keepdim or dim is None:
        g = F.reshape(g, shape=reduced_keepdim_shape(x.shape, dim))
    return F.expand(g, shape=tuple(x.shape))


def _rank_of(x, what: str) -> int:
    if x.shape is None:
        raise ValueError(
            f"{what} needs the rank of its input, which the graph does not know; give the "
            f"placeholder it depends on a shape (None marks a size known only at run time)"
        )
    return len(x.shape)


def _count_of_shape(shape, dim) -> int:
    """How many elements a reduction over ``dim`` takes in (at least 1)."""
    axes = normalize_dims(dim, len(shape))
    count = math.prod(shape) if axes is None else math.prod(shape[a] for a in axes)
    return max(count, 1)


def _count(x, dim):
    """:func:`_count_of_shape` of ``x``: a number, or a node reading it at run time."""
    if x.shape is None or None in x.shape:  # unknown_shape, inline (as in _restore)
        return F.count(x, dim=dim)
    return _count_of_shape(x.shape, dim)


# ----------------------------------------------------------------------------------
# Elementwise arithmetic (numpy broadcasting; gradients are summed back to shape)
# ----------------------------------------------------------------------------------
def _is_bool(value) -> bool:
    return isinstance(value, (bool, np.bool_)) or getattr(value, "dtype", None) == np.bool_


@writes_like(np.subtract)
def _subtract(x, y, out=None):
    # torch refuses to subtract booleans (numpy raises a TypeError about ufuncs).
    bools = _is_bool(x), _is_bool(y)
    if all(bools):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not "
            "supported. Use the `^` or `logical_xor()` operator instead."
        )
    if any(bools):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not "
            "supported. If you are trying to invert a mask, use the `~` or "
            "`logical_not()` operator instead."
        )
    return np.subtract(*promote(x, y), out=out)


@writes_like(np.true_divide)
def _divide(x, y, out=None):
    # True division, as torch: integers and booleans divide as floats.
    dtype = result_type(x, y)
    if dtype is not None and dtype.kind in "biu":
        x, y = np.asarray(x, dtype=default_float()), np.asarray(y, dtype=default_float())
        return np.true_divide(x, y, out=out)
    return np.true_divide(*promote(x, y), out=out)


#: what a rule's operands are on arrays: a 0-d product is a numpy scalar
_NUMPY = (np.ndarray, np.generic)


def times(a, b):
    """``a * b`` in a rule, promoted as torch promotes: numpy lets a 0-d float64 array, or
    an integer array, widen a float32 gradient to float64 before the product is rounded
    back; torch casts such an operand to the gradient's dtype first (a 0-d tensor does
    not promote a dimensioned one), then multiplies.  Tensors and static nodes already
    promote as torch, and so do Python numbers."""
    if isinstance(b, _NUMPY) and isinstance(a, _NUMPY) and a.dtype is not b.dtype:
        return np.multiply(*promote(a, b))  # (b first: a Python number, the commonest, ends it)
    return a * b


def over(a, b):
    """``a / b`` in a rule, promoted as torch promotes (see :func:`times`)."""
    if isinstance(b, _NUMPY) and isinstance(a, _NUMPY) and a.dtype is not b.dtype:
        return _divide(a, b)
    return a / b


def divisor_partial(g, x, y):
    """The gradient of ``x / y`` for ``y``, as torch's ``div_tensor_other_backward``:
    ``-g * ((x / y) / y)``.  Written ``-g * x / (y * y)``, ``y * y`` overflows (or
    underflows to 0) for half the exponent range where the quotients do not."""
    return times(-g, over(over(x, y), y))


defop(
    "add",
    promoted(np.add),
    [lambda g, x, y, out: g, lambda g, x, y, out: g],
    saves=(),
    elementwise=True,
    commutative=True,
)
defop(
    "sub",
    _subtract,
    [lambda g, x, y, out: g, lambda g, x, y, out: -g],
    saves=(),
    elementwise=True,
)
defop(
    "mul",
    promoted(np.multiply),
    [lambda g, x, y, out: times(g, y), lambda g, x, y, out: times(g, x)],
    saves={0: (1,), 1: (0,)},
    elementwise=True,
    commutative=True,
)
defop(
    "div",
    _divide,
    [lambda g, x, y, out: over(g, y), lambda g, x, y, out: divisor_partial(g, x, y)],
    saves={0: (1,), 1: (0, 1)},
    elementwise=True,
)
defop(
    "reciprocal",
    lambda x: np.true_divide(1, _as_floating(x)),
    [lambda g, x, out: -g * (out * out)],  # torch rounds out * out first
    saves=("out",),
    elementwise=True,
)


def _pow_scalar_partial(g, x, out, exponent):
    if exponent == 0:
        return g * 0.0
    return g * exponent * F.pow_scalar(x, exponent=exponent - 1)  # the op's own special cases


def _power_scalar(x, exponent):
    if isinstance(exponent, bool):
        return _power(x, exponent)  # a mask to a bool power stays a mask
    if isinstance(exponent, int) and exponent < 0 and np.result_type(x).kind in "biu":
        raise RuntimeError(
            "Integers to negative integer powers are not allowed. Use a float "
            f"exponent ({exponent}.0) or convert the tensor with .double() first"
        )
    if exponent == -0.5 and np.result_type(x).kind == "f":
        # torch's x ** -0.5 is rsqrt, 1 / sqrt(x): -inf at -0.0 and nan at -inf, where C's
        # pow gives inf and 0 (numpy already takes sqrt for 0.5).  x ** 0.5's gradient,
        # 0.5 * x ** -0.5, reads it: -inf at -0.0, nan at -inf, as torch's.
        return np.true_divide(1, np.sqrt(x))
    return np.power(*promote(x, exponent))  # int ** 2.5: the default float, as torch


defop(
    "pow_scalar",
    _power_scalar,
    [_pow_scalar_partial],
    saves=(0,),
    elementwise=True,
)


def _pow_base_partial(g, x, y, out):
    # PyTorch masks this partial to 0 where the exponent is 0: at x = 0 the formula
    # would be 0 * 0 ** -1 = nan, yet x ** 0 is the constant 1.
    zero = F.eq(y, 0.0)
    return F.where(zero, 0.0, g * y * x ** F.where(zero, 1.0, y - 1.0))


def _pow_exponent_partial(g, x, y, out):
    # d(x**y)/dy = x**y * log(x); PyTorch defines it as 0 where x == 0 and y >= 0.
    safe = F.logical_and(F.eq(x, 0.0), F.ge(y, 0.0))
    return F.where(safe, 0.0, g * out * F.log(F.where(safe, 1.0, x)))


def _power(x, y):
    dtype = result_type(x, y)
    if dtype == np.bool_:
        if isinstance(y, bool):  # torch's mask ** True is the mask, mask ** False all True
            return np.logical_or(x, not y)
        raise NotImplementedError(
            "\"pow\" not implemented for 'Bool': raise numbers, not "
            "masks; convert first, e.g. mask.long() ** 2"
        )
    x, y = promote(x, y)
    if dtype is not None and dtype.kind in "iu" and np.any(np.asarray(y) < 0):
        # in the result's dtype: a Python int base (2 ** x) would be an int64 array
        return _integer_power_with_negative_exponents(
            np.asarray(x, dtype=dtype), np.asarray(y, dtype=dtype)
        )
    return np.power(x, y)


def _integer_power_with_negative_exponents(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """torch's integer x ** y for y < 0 (numpy refuses): 1 stays 1, -1 alternates in sign
    with the parity of y, every other base truncates 1 / x**|y| to 0."""
    positive = np.power(x, np.maximum(y, 0))
    negative = np.where(x == 1, 1, np.where(x == -1, np.where(y % 2 == 0, 1, -1), 0))
    return np.where(y < 0, negative, positive).astype(positive.dtype, copy=False)


defop(
    "pow",
    _power,
    [_pow_base_partial, _pow_exponent_partial],
    saves=(0, 1, "out"),
    elementwise=True,
)
# A Python number before the tensor, as torch's Scalar overloads: the number is an
# attribute, not an input, so the node has one edge (``2 - x``, ``2 ** x``).
defop(
    "rsub",
    lambda x, other: _subtract(other, x),
    [lambda g, x, out, other: -g],
    saves=(),
    elementwise=True,
    doc="``other - x`` for a number ``other`` (``2 - x``).",
)
defop(
    "rpow",
    lambda x, base: _power(base, x),
    [lambda g, x, out, base: _pow_exponent_partial(g, base, x, out)],
    saves=(0, "out"),
    elementwise=True,
    doc="``base ** x`` for a number ``base`` (``2 ** x``).",
)


def _unless_beaten(g, x, y, beaten):
    # PyTorch: the whole gradient unless the other operand wins, half of it on a tie.
    # Comparisons with NaN are False, so both operands get the gradient at a NaN.  A
    # beaten operand gets an exact 0 (a mask, not g * 0, which is NaN for g = inf).
    return F.where(beaten, 0.0, F.where(F.eq(x, y), g * 0.5, g))


def _extremum(wins):
    """Elementwise max/min as torch: a NaN wins, and on a tie (0.0 and -0.0 included)
    the first operand is the result (numpy's maximum returns the second)."""

    def forward(x, y):
        x, y = promote(x, y)
        return np.where(np.logical_or(wins(y, x), np.not_equal(y, y)), y, x)

    return forward


defop(
    "maximum",
    _extremum(np.greater),
    [
        lambda g, x, y, out: _unless_beaten(g, x, y, F.lt(x, y)),
        lambda g, x, y, out: _unless_beaten(g, x, y, F.gt(x, y)),
    ],
    saves=(0, 1),
    elementwise=True,
    commutative=True,
)
defop(
    "minimum",
    _extremum(np.less),
    [
        lambda g, x, y, out: _unless_beaten(g, x, y, F.gt(x, y)),
        lambda g, x, y, out: _unless_beaten(g, x, y, F.lt(x, y)),
    ],
    saves=(0, 1),
    elementwise=True,
    commutative=True,
)


#: ``np.where``, the selection of ``where`` and ``relu`` (a seam: the fast layer zeroes
#: part of a large float array with cheaper integer arithmetic, the same bits)
select = np.where


def _where(condition, x, y):
    # A float condition would scale the gradient by its value: refuse it, as torch does.
    if np.asarray(condition).dtype != np.bool_:
        raise RuntimeError(
            "where expected condition to be a boolean tensor, but got a tensor "
            f"with dtype {np.asarray(condition).dtype}: compare first, "
            "e.g. where(c > 0, x, y), or convert with c.bool()."
        )
    return select(condition, *promote(x, y))


defop(
    "where",
    _where,
    # where(), not g * c: the unselected side gets an exact 0 even where g is inf
    [None, lambda g, c, x, y, out: F.where(c, g, 0.0), lambda g, c, x, y, out: F.where(c, 0.0, g)],
    saves=(0,),
    elementwise=True,
)


# ----------------------------------------------------------------------------------
# Elementwise unary
# ----------------------------------------------------------------------------------
def _as_floating(x):
    """Integers and booleans as naivegraph's default float, as torch computes exp(int):
    numpy would pick float16 for int8/uint8/bool and float32 for int16."""
    x = np.asarray(x)
    return x.astype(default_float()) if x.dtype.kind in "biu" else x


def _floating(ufunc):
    @writes_like(ufunc)
    def forward(x, out=None):
        return ufunc(_as_floating(x), out=out)

    forward.__name__ = ufunc.__name__
    forward.__doc__ = ufunc.__doc__
    return forward


@writes_like(np.negative)
def _negative(x, out=None):
    if np.asarray(x).dtype == np.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If "
            "you are trying to invert a mask, use the `~` or `logical_not()` "
            "operator instead."
        )
    return np.negative(x, out=out)


defop("neg", _negative, [lambda g, x, out: -g], saves=(), elementwise=True)
defop("exp", _floating(np.exp), [lambda g, x, out: g * out], saves=("out",), elementwise=True)
defop("log", _floating(np.log), [lambda g, x, out: g / x], saves=(0,), elementwise=True)
defop(
    "sqrt",
    _floating(np.sqrt),
    [lambda g, x, out: g / (out * 2.0)],
    saves=("out",),
    elementwise=True,
)
defop("sin", _floating(np.sin), [lambda g, x, out: g * F.cos(x)], saves=(0,), elementwise=True)
defop("cos", _floating(np.cos), [lambda g, x, out: -g * F.sin(x)], saves=(0,), elementwise=True)
defop(
    "tanh",
    _floating(np.tanh),
    [lambda g, x, out: g * (1.0 - out * out)],
    saves=("out",),
    elementwise=True,
)


def _sigmoid(x):
    # exp(-|x|) never overflows, and both branches avoid cancellation in the tails.
    x = _as_floating(x)
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(
        np.result_type(x, 1.0), copy=False
    )


defop(
    "sigmoid", _sigmoid, [lambda g, x, out: g * out * (1.0 - out)], saves=("out",), elementwise=True
)


# relu and abs follow PyTorch at special values: relu keeps -0.0 and NaN (it only
# replaces x < 0), passes the gradient at NaN (only out <= 0 blocks it), and abs's
# gradient at NaN is 0 (torch's sgn(NaN) is 0, numpy's sign(NaN) is NaN).
# Masks select with where rather than multiply: g * 0 would be NaN for an infinite g.
def _relu(x):
    x = np.asarray(x)
    if x.dtype == np.bool_:
        raise RuntimeError(
            "Boolean inputs not supported for relu: a mask is already >= 0; "
            "convert it with .float() if you need numbers"
        )
    return select(x < 0, 0, x).astype(x.dtype, copy=False)


def _abs(x):
    if np.asarray(x).dtype == np.bool_:
        raise NotImplementedError(
            "\"abs_cpu\" not implemented for 'Bool': a mask has no sign; "
            "convert it with .long() or .float() first"
        )
    return np.abs(x)


def _sign(x):
    # torch: the sign of a mask is the mask, and the sign of NaN is 0 (numpy's is NaN).
    x = np.asarray(x)
    if x.dtype == np.bool_:
        return x.copy()
    out = np.sign(x)
    return (
        np.where(np.isnan(out), 0, out).astype(out.dtype, copy=False)
        if x.dtype.kind in "fc"
        else out
    )


defop(
    "relu",
    _relu,
    [lambda g, x, out: F.where(F.le(out, 0.0), 0.0, g)],
    saves=("out",),
    elementwise=True,
)
defop(
    "abs",
    _abs,
    [lambda g, x, out: F.where(F.gt(x, 0.0), g, F.where(F.lt(x, 0.0), -g, g * 0.0))],
    saves=(0,),
    elementwise=True,
)


def _clamp(x, min=None, max=None):
    # The bounds take part in torch's promotion: float32 clamped by a 0-d float64 tensor
    # stays float32, an integer tensor clamped by 0.5 becomes float.
    given = [b for b in (min, max) if b is not None]
    x, *promoted_bounds = promote(x, *given)
    low = promoted_bounds.pop(0) if min is not None else None
    high = promoted_bounds.pop(0) if max is not None else None
    out = np.clip(x, low, high)
    # torch keeps x where it equals its bound: clamp(-0.0, min=0.0) is -0.0 (np.clip: 0.0)
    return np.where(out == x, x, out) if out.dtype.kind == "f" else out


def _clamp_partial(g, x, out, min=None, max=None):
    inside = F.ge(x, min) if min is not None else None
    if max is not None:
        inside = F.le(x, max) if inside is None else F.logical_and(inside, F.le(x, max))
    return F.where(inside, g, 0.0)


defop("clamp", _clamp, [_clamp_partial], saves=(0,), elementwise=True)
defop("clone", np.copy, [lambda g, x, out: g], saves=())
defop(
    "to_copy",
    lambda x, dtype: np.asarray(x).astype(dtype),
    [lambda g, x, out, dtype: g if g.dtype == x.dtype else F.to_copy(g, dtype=x.dtype)],
    saves=(),
    doc="A copy cast to ``dtype`` (``x.float()``, ``x.to(...)``).",
)
# What in-place writers compute; the old value gets no gradient: zeros that are
# constants (not g * 0, which is NaN where g is inf and stays connected to g's graph).
defop("zeros_like", np.zeros_like, doc="Zeros of ``x``'s shape and dtype; no gradient flows.")
defop(
    "fill",
    lambda x, value: np.full_like(x, value),
    [lambda g, x, out, value: F.zeros_like(g)],
    saves=(),
)  # fill_(scalar)
defop("zero", np.zeros_like, [lambda g, x, out: F.zeros_like(g)], saves=())
defop(
    "copy",
    lambda x, src: np.array(
        np.broadcast_to(np.asarray(src, dtype=np.asarray(x).dtype), np.shape(x))
    ),
    [lambda g, x, src, out: F.zeros_like(g), lambda g, x, src, out: g],
    saves=(),
    elementwise=True,
    doc="``src`` broadcast to ``x``'s shape and dtype (``x.copy_(src)``).",
)

# Comparisons and friends: results carry no gradient (PyTorch returns bool tensors).
for _name, _fn in [
    ("eq", np.equal),
    ("ne", np.not_equal),
    ("gt", np.greater),
    ("ge", np.greater_equal),
    ("lt", np.less),
    ("le", np.less_equal),
    ("logical_and", np.logical_and),
    ("logical_or", np.logical_or),
]:
    defop(
        _name,
        promoted(_fn),
        elementwise=True,
        commutative=_name in ("eq", "ne", "logical_and", "logical_or"),
    )
defop("logical_not", np.logical_not, elementwise=True)


def _integer_or_bool(kernel: str, dtype: np.dtype | None) -> None:
    """torch has the bitwise kernels for integers and bools only (on bools they are the
    logical ones); a floating result names the missing kernel, as torch does."""
    if dtype is not None and dtype.kind not in "biu":
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{torch_dtype_name(dtype)}': the bitwise "
            "operators take integer or bool tensors; for masks of a comparison use "
            "logical_and() / logical_or(), for numbers an integer dtype"
        )


def _bitwise(kernel: str, ufunc: np.ufunc) -> Callable:
    """``x & y``, ``x | y``, ``x ^ y``: bitwise on integers, logical on bools."""
    forward = promoted(ufunc)

    @writes_like(ufunc)
    def checked(x, y, out=None):
        _integer_or_bool(kernel, result_type(x, y))
        return forward(x, y, out=out)

    checked.__name__ = forward.__name__
    return checked


for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):  # numpy's ufuncs of these names
    defop(_name, _bitwise(f"{_name}_cpu", getattr(np, _name)), elementwise=True, commutative=True)


def _bitwise_not(x):
    _integer_or_bool("bitwise_not_cpu", np.asarray(x).dtype)
    return np.invert(x)  # on bools: not


defop("bitwise_not", _bitwise_not, elementwise=True)
defop("sign", _sign, [lambda g, x, out: F.zeros_like(g)], saves=(), elementwise=True)

# ----------------------------------------------------------------------------------
# Reductions
# ----------------------------------------------------------------------------------


def _sum(x, dim=None, keepdim=False):
    # The ufunc's own reduce: np.sum adds a Python-level dispatch layer per call.  Integers
    # and booleans add up in int64, as in torch (numpy would use uint64 for uint8).
    dtype = np.int64 if np.result_type(x).kind in "biu" else None
    return np.add.reduce(x, axis=normalize_dims(dim, np.ndim(x)), keepdims=keepdim, dtype=dtype)


def _mean(x, dim=None, keepdim=False):
    shape = np.shape(x)
    axes = normalize_dims(dim, len(shape))
    count = math.prod(shape) if axes is None else math.prod(shape[a] for a in axes)
    total = _sum(x, dim, keepdim)
    if count == 0:  # the mean of nothing is nan, quietly, as in PyTorch
        with np.errstate(invalid="ignore", divide="ignore"):
            return total / count
    return total / count


defop(
    "sum",
    _sum,
    [lambda g, x, out, dim=None, keepdim=False: _restore(g, x, dim, keepdim)],
    saves=(),
)
defop(
    "mean",
    _mean,
    [lambda g, x, out, dim=None, keepdim=False: _restore(g, x, dim, keepdim) / _count(x, dim)],
    saves=(),
)


def _check_not_empty(name: str, x, dim, whole_error: type = IndexError, hint: str = "") -> None:
    """torch's errors for reducing nothing (numpy's say "zero-size array ... identity").
    torch raises ``whole_error`` for a full reduction (max: RuntimeError, argmax:
    IndexError) and IndexError for an empty ``dim``."""
    shape = np.shape(x)
    if dim is None:
        if math.prod(shape) == 0:
            raise whole_error(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0.{hint}"
            )
        return
    for axis in dim if isinstance(dim, tuple) else (dim,):
        if -len(shape) <= axis < len(shape) and shape[axis] == 0:
            raise IndexError(
                f"{name}(): Expected reduction dim {axis % len(shape)} to have non-zero size."
            )


_SPECIFY_DIM = " Specify the reduction dim with the 'dim' argument."


def _extreme(name, reducer):
    def forward(x, dim=None, keepdim=False):
        _check_not_empty(name, x, dim, RuntimeError, _SPECIFY_DIM)
        return reducer(x, axis=normalize_dims(dim, np.ndim(x)), keepdims=keepdim)

    return forward


def _first_true(mask, dim):
    """Keep only the first True along ``dim``: where max(dim)/min(dim) put their index."""
    mask = np.asarray(mask)
    if mask.ndim == 0:
        return mask
    first = np.expand_dims(np.argmax(mask, axis=dim), dim)
    out = np.zeros(mask.shape, dtype=bool)
    np.put_along_axis(out, first, np.take_along_axis(mask, first, axis=dim), axis=dim)
    return out


defop("first_true", _first_true)  # a mask: carries no gradient


def _extreme_partial(g, x, out, dim=None, keepdim=False):
    value = _restore(out, x, dim, keepdim)
    # A NaN wins the reduction, so it takes the gradient (x != x only at NaN), as in torch.
    hit = F.logical_or(F.eq(x, value), F.logical_and(F.ne(x, x), F.ne(value, value)))
    if dim is not None:
        # max(dim)/min(dim) return an index per slice; only that element gets the gradient.
        return _restore(g, x, dim, keepdim) * F.first_true(hit, dim=dim)
    # A full reduction shares the gradient evenly between ties (PyTorch's MaxBackward1).
    count = F.sum(hit * 1.0, dim=dim, keepdim=True)
    return _restore(g, x, dim, keepdim) * hit / _expand_to(count, x)


defop(
    "max",
    _extreme("max", np.max),
    [_extreme_partial],
    saves=(0, "out"),
)
defop(
    "min",
    _extreme("min", np.min),
    [_extreme_partial],
    saves=(0, "out"),
)


def _position_of(name, finder):
    def forward(x, dim=None, keepdim=False):
        if np.result_type(x) == np.bool_:
            raise RuntimeError(
                f"{name}(): does not support bool input; convert the mask with .long() first"
            )
        _check_not_empty(name, x, dim)
        return finder(x, axis=dim, keepdims=keepdim)

    return forward


defop("argmax", _position_of("argmax", np.argmax), doc="Index of the largest value (over ``dim``).")
defop(
    "argmin", _position_of("argmin", np.argmin), doc="Index of the smallest value (over ``dim``)."
)

# ----------------------------------------------------------------------------------
# Shape and indexing (numpy views where numpy gives one)
# ----------------------------------------------------------------------------------
defop(
    "reshape",
    # ``kind`` only names the node (ops/names.py): torch's view, _reshape_alias, _unsafe_view
    lambda x, shape, kind="view": np.reshape(x, shape),
    [lambda g, x, out, shape, kind="view": _reshape_to(g, x)],
    saves=(),
)


def _expand(x, shape):
    x = np.asarray(x)
    lead = len(shape) - x.ndim
    # -1 keeps the size the tensor has in that dimension (new leading ones have none; too
    # few sizes fail in broadcast_to, which the error explainer turns into a message).
    sizes = tuple(x.shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(shape))
    return np.broadcast_to(x, sizes)


defop("expand", _expand, [lambda g, x, out, shape: summed_to(g, x)], saves=())
defop(
    "sum_to",
    lambda x, shape: _np_sum_to(np.asarray(x), shape),
    [lambda g, x, out, shape: _expand_to(g, x)],
    saves=(),
)
# The same three with the target shape read from a second operand when the graph runs
# (static graphs with unknown sizes; see _unknown above).  The operand gives only its shape.
defop(
    "reshape_like",
    lambda x, like: np.reshape(x, np.shape(like)),
    [lambda g, x, like, out: _reshape_to(g, x), None],
    saves=(),
    doc="``x`` reshaped to the shape of ``like``.",
)
defop(
    "expand_like",
    lambda x, like: np.broadcast_to(x, np.shape(like)),
    [lambda g, x, like, out: summed_to(g, x), None],
    saves=(),
    doc="``x`` broadcast to the shape of ``like``.",
)
defop(
    "sum_to_like",
    lambda x, like: _np_sum_to(np.asarray(x), np.shape(like)),
    [lambda g, x, like, out: _expand_to(g, x), None],
    saves=(),
    doc="``x`` summed back to the shape of ``like`` (the inverse of broadcasting).",
)
defop(
    "count",
    lambda x, dim=None: np.asarray(
        _count_of_shape(np.shape(x), dim),
        dtype=np.result_type(x) if np.result_type(x).kind == "f" else default_float(),
    ),
    doc="How many elements a reduction of ``x`` over ``dim`` averages (at least 1).",
)


def _transpose(x, dim0, dim1):
    if np.ndim(x) == 0:  # torch lets a 0-d tensor swap dim 0 (or -1) with itself
        normalize_dims(dim0, 0), normalize_dims(dim1, 0)  # each in range; one dim twice is fine
        return np.asarray(x).view()
    return np.swapaxes(x, dim0, dim1)


defop(
    "transpose",
    _transpose,
    [lambda g, x, out, dim0, dim1: F.transpose(g, dim0=dim0, dim1=dim1)],
    saves=(),
)


def _t(x):
    if np.ndim(x) > 2:
        raise ValueError(f"t() expects a tensor with <= 2 dimensions, but self is {np.ndim(x)}D")
    return np.transpose(x)


defop("t", _t, [lambda g, x, out: F.t(g)], saves=())


def _permute(x, dims):
    x = np.asarray(x)
    if len(dims) != x.ndim:
        raise RuntimeError(
            f"permute(): number of dimensions in the tensor input does not match the length "
            f"of the desired ordering of dimensions i.e. input.dim() = {x.ndim} is not equal "
            f"to len(dims) = {len(dims)}"
        )
    return np.transpose(x, _permutation(dims, x.ndim))


def _one_axis(dim: int, ndim: int) -> int:
    """``dim`` as a non-negative axis of a tensor with ``ndim`` > 0 dimensions."""
    (axis,) = normalize_dims(dim, ndim) or (0,)
    return axis


def _permutation(dims, ndim: int) -> tuple[int, ...]:
    """``dims`` as non-negative axes (``permute(-1, 0, -2)`` mixes both signs)."""
    axes = tuple(_one_axis(d, ndim) for d in dims) if ndim else ()
    if len(set(axes)) != len(axes):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return axes


def _permute_partial(g, x, out, dims):
    # the inverse permutation of the normalised axes: argsort of (-1, 0, -2) is not it
    return F.permute(g, dims=tuple(np.argsort(_permutation(dims, len(dims))).tolist()))


defop("permute", _permute, [_permute_partial], saves=())


def _squeeze(x, dim=None, inplace=False):
    # As in torch, squeezing a dimension whose size is not 1 leaves it (a no-op view).
    # ``inplace`` only names the node as torch's squeeze_ (dynamic matmul records one).
    x = np.asarray(x)
    if dim is None:
        return np.squeeze(x)
    axes = normalize_dims(dim, x.ndim) or ()
    out = np.squeeze(x, axis=tuple(a for a in axes if x.shape[a] == 1))
    return x.view() if out is x else out  # always a view, never the input array itself


def _squeeze_vjp(g, x, out, dim=None, inplace=False):
    # As torch: the squeezed axes come back by unsqueeze (whose own VJP is squeeze(dim),
    # so a double backward records SqueezeBackward1 as torch's does).
    shape = tuple(x.shape)
    if unknown_shape(shape):
        return _reshape_to(g, x)
    axes = range(len(shape)) if dim is None else normalize_dims(dim, len(shape)) or ()
    for axis in sorted(axes):
        if shape[axis] == 1:
            g = F.unsqueeze(g, dim=axis)
    return g


defop("squeeze", _squeeze, [_squeeze_vjp], saves=())
defop(
    "unsqueeze",
    lambda x, dim: np.expand_dims(x, dim),
    [lambda g, x, out, dim: F.squeeze(g, dim=dim)],
    saves=(),
)


def _scatter(g, shape, index):
    out = np.zeros(shape, dtype=np.asarray(g).dtype)
    np.add.at(out, index, g)  # add.at: repeated indices accumulate
    return out


def _getitem(x, index):
    x = np.asarray(x)
    parts = index if isinstance(index, tuple) else (index,)
    if any(
        isinstance(part, slice) and part.step is not None and part.step <= 0 for part in parts
    ):  # torch has no reversed views
        raise ValueError(
            "step must be greater than zero: a slice cannot reverse a tensor; "
            "index with reversed positions instead, x[ng.arange(n - 1, -1, -1)]"
        )
    try:
        out = x[index]
    except IndexError as error:  # torch's wording: dimensions, not axes
        raise IndexError(str(error).replace(" for axis ", " for dimension ")) from None
    if not isinstance(out, np.ndarray):  # all-integer index: numpy hands back a scalar copy;
        # a trailing ``...`` gives the 0-d view that torch returns, sharing memory
        out = x[(index if isinstance(index, tuple) else (index,)) + (Ellipsis,)]
    return out


defop(
    "getitem",
    _getitem,
    [lambda g, x, out, index: _scatter_to(g, x, index)],
    saves=(),
)
defop(
    "scatter",
    _scatter,
    [lambda g, x, out, shape, index: F.getitem(g, index=index)],
    saves=(),
)
defop(
    "scatter_like",
    lambda x, like, index: _scatter(x, np.shape(like), index),
    [lambda g, x, like, out, index: F.getitem(g, index=index), None],
    saves=(),
    doc="``x`` added into zeros of the shape of ``like`` at ``index``.",
)


def _scatter_to(g, x, index):
    if unknown_shape(x.shape):
        return F.scatter_like(g, x, index=index)
    return F.scatter(g, shape=tuple(x.shape), index=index)


def _index_put(x, value, index):
    result = np.array(x, copy=True)
    result[index] = value
    return result


def _keep_mask(shape, index):
    mask = np.ones(shape, dtype=bool)
    mask[index] = False
    return mask


def _index_put_value_partial(g, x, v, out, index):
    # The value is broadcast into the indexed region: sum its gradient back to its shape.
    return summed_to(F.getitem(g, index=index), v)


def _index_put_target_partial(g, x, v, out, index):
    # The overwritten region gets no gradient.  Unknown sizes: write zeros into a copy of g.
    if unknown_shape(x.shape):
        return F.index_put(g, 0.0, index=index)
    return F.where(_keep_mask(tuple(x.shape), index), g, 0.0)


defop(
    "index_put",
    _index_put,
    [
        _index_put_target_partial,
        _index_put_value_partial,
    ],
    saves=(),
    elementwise=False,
)


def _legacy_empty(x, others) -> bool:
    """torch's cat skips a 1-d empty tensor (``tensor([])``) beside tensors of another
    rank: older code starts a concatenation from one."""
    shape = x.shape
    return (
        shape is not None
        and tuple(shape) == (0,)
        and any(o.shape is None or len(o.shape) != 1 for o in others)
    )


def _cat(xs, dim=0):
    arrays = promote(*xs)
    kept = [a for a in arrays if not _legacy_empty(a, arrays)]
    if not kept:  # only legacy empties: one of them
        return np.concatenate(arrays, axis=0)
    return np.concatenate(kept, axis=dim)


def _split_partials(g, inputs, out, needs, dim):
    if any(x.shape is None or None in x.shape for x in inputs):
        return _split_at_run_time(g, inputs, needs, dim)
    grads, start = [], 0
    for x, need in zip(inputs, needs):
        if _legacy_empty(x, inputs):  # skipped by the forward: an empty gradient
            grads.append(F.getitem(F.reshape(g, shape=(-1,)), index=slice(0, 0)) if need else None)
            continue
        size = x.shape[dim]
        if need:
            index = (slice(None),) * (dim % len(x.shape)) + (slice(start, start + size),)
            grads.append(F.getitem(g, index=index))
        else:
            grads.append(None)
        start += size
    return grads


def _unstack_partials(g, inputs, out, needs, dim):
    axis = dim % (len(inputs[0].shape) + 1)
    return [
        F.getitem(g, index=(slice(None),) * axis + (i,)) if need else None
        for i, need in enumerate(needs)
    ]


def _split_at_run_time(g, inputs, needs, dim):
    """cat's gradient in a static graph that knows some sizes along ``dim`` only at run
    time: op ``cat_part`` slices ``g`` there, reading the unknown sizes from the inputs
    that have them (the others' sizes are attributes)."""
    known = [x.shape for x in inputs if x.shape is not None and not _legacy_empty(x, inputs)]
    if not known:
        raise ValueError(
            "the gradient of a cat needs the rank of its inputs, which the graph does not "
            "know; give the placeholders they depend on shapes"
        )
    axis = dim % len(known[0])
    sizes = tuple(
        0 if _legacy_empty(x, inputs) else None if x.shape is None else x.shape[axis]
        for x in inputs
    )
    likes = [x for x, size in zip(inputs, sizes) if size is None]
    grads = []
    for i, (x, need) in enumerate(zip(inputs, needs)):
        if not need:
            grads.append(None)
        elif _legacy_empty(x, inputs):
            grads.append(F.getitem(F.reshape(g, shape=(-1,)), index=slice(0, 0)))
        else:
            grads.append(F.cat_part([g, *likes], dim=axis, part=i, sizes=sizes))
    return grads


def _cat_part(arrays, dim, part, sizes):
    """Input ``part``'s share of a cat's gradient ``arrays[0]``: ``sizes`` along ``dim``
    per input, where None is read from the next of ``arrays[1:]`` when the graph runs."""
    g = np.asarray(arrays[0])
    unknown = iter(np.shape(x)[dim] for x in arrays[1:])
    run = [next(unknown) if size is None else size for size in sizes]
    start = sum(run[:part])
    return g[(slice(None),) * dim + (slice(start, start + run[part]),)]


def _cat_part_vjp(g, inputs, out, needs, dim, part, sizes):
    """The part back in its place between zeros (slices of zeros shaped as the cat's
    gradient, so every size is the run's)."""
    if not needs[0]:
        return [None] * len(inputs)
    # a rule sees a value it did not keep as its Meta: its size is known then
    likes, known = iter(inputs[1:]), []
    for size in sizes:
        like = next(likes) if size is None else None
        known.append(like.shape[dim] if isinstance(like, Meta) else size)
    rest = [x for x in inputs[1:] if not isinstance(x, Meta)]
    full = inputs[0]
    zeros = np.zeros(full.shape, full.dtype) if isinstance(full, Meta) else F.zeros_like(full)
    pieces = [
        g if j == part else F.cat_part([zeros, *rest], dim=dim, part=j, sizes=tuple(known))
        for j in range(len(sizes))
    ]
    return [F.cat(pieces, dim=dim)] + [None] * (len(inputs) - 1)


def _cat_part_shape(inputs, attrs) -> tuple:
    """The cat's gradient's shape with the part's size along ``dim`` (None if unknown):
    probing stand-in sizes would cut every part but the first to nothing."""
    shape = inputs[0].shape
    if shape is not None:
        shape = list(shape)
        shape[attrs["dim"]] = attrs["sizes"][attrs["part"]]
        shape = tuple(shape)
    return shape, inputs[0].dtype


defop(
    "cat_part",
    _cat_part,
    saves=(),
    vjp_all=_cat_part_vjp,
    shape_rule=_cat_part_shape,
    variadic=True,
    doc="Part ``part`` of a cat's gradient ``g`` (``[g, *likes]``), for sizes known at run "
    "time (static graphs).",
)
# cat and stack promote their tensors as torch does (int32 with float32 is float32).
defop(
    "cat",
    _cat,
    saves=(),
    vjp_all=_split_partials,
    variadic=True,
)
defop(
    "stack",
    lambda xs, dim=0: np.stack(promote(*xs), axis=dim),
    saves=(),
    vjp_all=_unstack_partials,
    variadic=True,
)

# ----------------------------------------------------------------------------------
# Linear algebra
# ----------------------------------------------------------------------------------


def _matmul_partial(which):
    # d/dx of x @ y reads y's values and x's shape only (and the other way round): the
    # entry's saves says so, and a node keeps just the factor the needed gradients read,
    # as torch's MmBackward0 does.
    def partial(g, x, y, out):
        if len(x.shape) == 1 and len(y.shape) == 1:
            return g * (y if which == 0 else x)
        # Promote vectors to matrices as matmul does, differentiate, then undo.
        g2 = g
        if len(x.shape) == 1:
            g2 = F.unsqueeze(g2, dim=-2)
        if len(y.shape) == 1:
            g2 = F.unsqueeze(g2, dim=-1)
        if which == 0:
            grad = F.matmul(g2, F.transpose(_as_matrix(y, dim=-1), dim0=-1, dim1=-2))
        else:
            grad = F.matmul(F.transpose(_as_matrix(x, dim=0), dim0=-1, dim1=-2), g2)
        like = x if which == 0 else y
        grad = summed_to(grad, _as_matrix(like, dim=0 if which == 0 else -1))
        return grad if same_shape(grad.shape, like.shape) else _reshape_to(grad, like)

    return partial


def _as_matrix(v, dim: int):
    """A vector operand of matmul as the matrix it acts as (1 inserted at ``dim``); a
    matrix as it is.  A Meta (a factor backward did not keep) stays a Meta."""
    if len(v.shape) != 1:
        return v
    if isinstance(v, Meta):
        return Meta((1, *v.shape) if dim == 0 else (*v.shape, 1), v.dtype)
    return F.unsqueeze(v, dim=dim)


def _matmul(x, y):
    # torch's matmul does not promote: float32 @ float64 is an error, not a float64 result.
    a, b = np.result_type(x), np.result_type(y)
    if a != b:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: "
            f"{torch_dtype_name(a).lower()} != {torch_dtype_name(b).lower()}; "
            f"convert one operand first, e.g. with .to({np.dtype(a).name})"
        )
    return np.matmul(x, y)


defop("matmul", _matmul, [_matmul_partial(0), _matmul_partial(1)], saves={0: (1,), 1: (0,)})
defop(
    "bmm",
    _matmul,
    [_matmul_partial(0), _matmul_partial(1)],
    saves={0: (1,), 1: (0,)},
    doc="Products of two batches of matrices (b, n, m) and (b, m, p): ``bmm``, and what "
    "dynamic matmul records, as torch, for batches that do not fold into one matrix.",
)


_CAST_METHODS = {
    "float32": "float()",
    "float64": "double()",
    "float16": "half()",
    "int64": "long()",
    "int32": "int()",
}


def _cast_method(dtype) -> str:
    """The tensor method that converts to ``dtype``: ``float()``, ``double()``..."""
    name = np.dtype(dtype).name
    return _CAST_METHODS.get(name, f"to(ng.{name})")


def _addmm(bias, mat1, mat2):
    if np.ndim(mat1) != 2 or np.ndim(mat2) != 2:
        raise ValueError(
            f"addmm multiplies matrices, got {np.ndim(mat1)}-D and "
            f"{np.ndim(mat2)}-D operands; use matmul and + for other shapes"
        )
    dtypes = [np.result_type(v) for v in (bias, mat1, mat2)]
    if len(set(dtypes)) > 1:  # torch's addmm (nn.Linear) does not promote either
        a, b = (dtypes[0], dtypes[2]) if dtypes[0] != dtypes[2] else (dtypes[1], dtypes[2])
        given, layer = dtypes[1], dtypes[2] if dtypes[2] != dtypes[1] else dtypes[0]
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got "
            f"{torch_dtype_name(a)} and {torch_dtype_name(b)}; convert the input "
            f"to the layer's dtype (x.{_cast_method(layer)}) or the layer to the "
            f"input's (layer.{_cast_method(given)})"
        )
    return np.matmul(mat1, mat2) + bias


defop(
    "addmm",
    _addmm,
    [
        lambda g, bias, mat1, mat2, out: summed_to(g, bias),
        lambda g, bias, mat1, mat2, out: F.matmul(g, F.t(mat2)),
        lambda g, bias, mat1, mat2, out: F.matmul(F.t(mat1), g),
    ],
    saves={0: (), 1: (2,), 2: (1,)},
    doc="``bias + mat1 @ mat2`` for matrices: the op behind ``nn.Linear``.",
)

# ----------------------------------------------------------------------------------
# Neural-network building blocks
# ----------------------------------------------------------------------------------


def _check_floating(kernel: str, x) -> None:
    dtype = np.result_type(x)
    if dtype.kind not in "fc":
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{torch_dtype_name(dtype)}': it needs floating "
            "point input; convert with .double() or .float() first"
        )


def _row_max(x, dim):
    """The shift of a stable softmax; an empty ``dim`` has nothing to shift (the
    ``initial`` only gives numpy an identity: it never wins over a value)."""
    return np.max(x, axis=dim, keepdims=True, initial=-np.inf)


def _softmax(x, dim):
    _check_floating("softmax_lastdim_kernel_impl", x)
    shifted = x - _row_max(x, dim)
    e = np.exp(shifted)
    return e / np.sum(e, axis=dim, keepdims=True)


def _log_softmax(x, dim):
    _check_floating("log_softmax_lastdim_kernel_impl", x)
    shifted = x - _row_max(x, dim)
    return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))


defop(
    "softmax",
    _softmax,
    [lambda g, x, out, dim: out * (g - F.sum(g * out, dim=dim, keepdim=True))],
    saves=("out",),
)


def _log_softmax_partial(g, x, out, dim):
    return log_softmax_grad(g, out, dim)


def log_softmax_grad(g, out, dim):
    """log_softmax's rule (a seam: :mod:`naivegraph.fast` computes it in fewer calls)."""
    return g - F.exp(out) * F.sum(g, dim=dim, keepdim=True)


defop(
    "log_softmax",
    _log_softmax,
    [_log_softmax_partial],
    saves=("out",),
)


def _one_hot(target, num_classes):
    return np.asarray(target)[..., None] == np.arange(num_classes)


defop(
    "one_hot",
    _one_hot,
    elementwise=False,
    doc="Boolean (..., num_classes) mask, True at each target class (no gradient).",
)


def _nll_loss(logp, target, reduction="mean"):
    if np.ndim(logp) == 1:  # one unbatched sample (C,): every reduction keeps its one loss
        return -np.asarray(logp)[np.asarray(target).reshape(())]
    picked = -logp[np.arange(logp.shape[0]), target]
    if reduction == "mean":  # an empty batch: NaN, as torch, without numpy's warning
        return picked.mean() if picked.size else picked.dtype.type(np.nan)
    return picked.sum() if reduction == "sum" else picked


def _nll_partial(g, logp, target, out, reduction="mean"):
    return nll_loss_grad(g, logp, target, reduction)


def nll_loss_grad(g, logp, target, reduction):
    """nll_loss's rule for ``logp`` (a seam: :mod:`naivegraph.fast` computes it in fewer
    calls)."""
    # d(-logp[i, target_i])/dlogp is -1 at each row's target class and 0 elsewhere.
    # a static input of shape (N, None), or of unknown shape: the one-hot rows need C
    classes = None if logp.shape is None else logp.shape[-1]
    if classes is None:
        raise ValueError(
            "nll_loss: its gradient needs the number of classes (dim 1 of the input) "
            "when the graph is built; give the input a known class dimension, e.g. a "
            "placeholder of shape (None, C)"
        )
    # torch writes -g at the targets into zeros: the other classes get +0.0, whatever g
    # is (a product with the mask would give -0.0 for a positive g, NaN for an infinite g)
    if len(logp.shape) == 1 and len(target.shape) == 1:
        raise RuntimeError(one_sample_target_error(logp.shape, target.shape))
    hot = F.one_hot(target, num_classes=classes)
    if len(logp.shape) == 1:  # one unbatched sample: its one loss, whatever the reduction
        return F.where(hot, -g, 0.0)
    if reduction == "none":
        return F.where(hot, -F.unsqueeze(g, dim=1), 0.0)
    scale = -g / _count(logp, 0) if reduction == "mean" else -g  # scalar work before (N, C)
    return F.where(hot, scale, 0.0)


def one_sample_target_error(shape: tuple, target_shape: tuple) -> str:
    """torch computes the loss of one sample (C,) with a target of shape (1,), but its
    backward refuses it: its words, and what the target should be."""
    return (
        f"size mismatch (got input: {list(shape)}, target: {list(target_shape)}) (an input "
        f"of shape {tuple(shape)} is one sample: its gradient needs a target of shape (), "
        "one class index)"
    )


defop("nll_loss", _nll_loss, [_nll_partial, None], saves=(1,))


def _mse(x, y, reduction="mean"):
    _check_floating("mse_cpu", np.result_type(*promote(x, y)))
    sq = (x - y) ** 2
    return sq.mean() if reduction == "mean" else sq.sum() if reduction == "sum" else sq


def _mse_partial(sign):
    def partial(g, x, y, out, reduction="mean"):
        diff = (x - y) if sign > 0 else (y - x)
        # the mean is over the broadcast shape (torch), not over x's own size
        scale = 2.0 / _count(diff, None) if reduction == "mean" else 2.0
        return g * diff * scale

    return partial


defop(
    "mse_loss",
    _mse,
    [_mse_partial(+1), _mse_partial(-1)],
    saves=(0, 1),
    elementwise=True,
)


# ----------------------------------------------------------------------------------
# State (static graphs): a Variable's update as a node, run when fetched
# ----------------------------------------------------------------------------------
def _assign(variable, value):
    # The new value only: the static executor stores it into the Variable once the
    # whole run has succeeded, so every read in that run sees the old value.
    value = np.asarray(value)
    if value.shape != np.shape(variable):
        raise ValueError(
            f"cannot assign a value of shape {value.shape} to a variable of shape "
            f"{np.shape(variable)}: a variable keeps its shape"
        )
    return value.astype(np.result_type(variable), copy=False)


defop(
    "assign",
    _assign,
    stateful=True,
    doc="The new value of a Variable (``ns.assign``); stored when the run ends.",
)
defop(
    "group",
    lambda xs: None,
    variadic=True,
    stateful=True,
    doc="Runs its inputs (updates) for their effect; its value is None (``tf.group``).",
)


# ----------------------------------------------------------------------------------
# More of PyTorch's reductions, sorting and index arithmetic
# ----------------------------------------------------------------------------------
def _dot(x, y):
    x, y = np.asarray(x), np.asarray(y)
    if x.ndim != 1 or y.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {x.ndim}D and {y.ndim}D tensors")
    if x.size != y.size:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{x.size}] and src [{y.size}] to have "
            f"the same number of elements, but got {x.size} and {y.size} elements respectively"
        )
    if x.dtype != y.dtype:  # torch's dot does not promote
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found "
            f"{torch_dtype_name(x.dtype)} and {torch_dtype_name(y.dtype)}"
        )
    if x.dtype == np.bool_:
        raise NotImplementedError("\"dot\" not implemented for 'Bool'")
    return np.asarray(np.dot(x, y))


defop(
    "dot",
    _dot,
    [lambda g, x, y, out: g * y, lambda g, x, y, out: g * x],
    saves={0: (1,), 1: (0,)},
    doc="Inner product of two 1-D tensors of one dtype (``torch.dot``).",
)


def _check_norm_input(x: np.ndarray, p: float, axes) -> None:
    if x.dtype.kind not in "fc":
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. "
            f"Got {torch_dtype_name(x.dtype)}"
        )
    reduced = x.size if axes is None else math.prod(x.shape[a] for a in axes)
    if math.isinf(p) and reduced == 0 and x.ndim:
        raise RuntimeError(
            f"linalg.vector_norm cannot compute the {'-' if p < 0 else ''}inf norm on an empty "
            "tensor because the operation does not have an identity"
        )


def _vector_norm(x, p=2.0, dim=None, keepdim=False):
    """``torch.linalg.vector_norm``: (sum |x|**p) ** (1/p) over ``dim`` (all when None);
    p = inf / -inf take the largest / smallest |x|, p = 0 counts the nonzero entries."""
    x = np.asarray(x)
    axes = normalize_dims(dim, x.ndim)
    _check_norm_input(x, p, axes)
    a = np.abs(x)
    if math.isinf(p):
        return (np.max if p > 0 else np.min)(a, axis=axes, keepdims=keepdim)
    if p == 0:
        return np.sum(a != 0, axis=axes, keepdims=keepdim).astype(a.dtype)
    if p == 1:
        return np.sum(a, axis=axes, keepdims=keepdim)
    if p == 2:
        return np.sqrt(np.sum(a * a, axis=axes, keepdims=keepdim))
    return np.sum(a**p, axis=axes, keepdims=keepdim) ** (1.0 / p)


def _safe(denominator):
    """``denominator`` with its zeros replaced by 1: a quotient masked to 0 there keeps
    a finite derivative of its own (a second backward through 0 / 0 would be NaN)."""
    return F.where(F.eq(denominator, 0.0), 1.0, denominator)


def _norm_partial(g, x, out, p=2.0, dim=None, keepdim=False):
    # torch's norm_backward, case by case; every quotient by the norm is 0 where the
    # norm is 0 (the gradient of ||x|| at x = 0 is taken to be 0, as torch does).
    if p == 0:
        return None  # a count: torch leaves the gradient undefined (x.grad stays None)
    g, norm = _restore(g, x, dim, keepdim), _restore(out, x, dim, keepdim)
    if p == 1:
        return F.sign(x) * g
    if p == 2:
        return g * F.where(F.eq(norm, 0.0), 0.0, x / _safe(norm))
    if math.isinf(p):  # the largest |x| takes the gradient, shared between ties (and NaNs)
        a = F.abs(x)
        hit = F.logical_or(F.eq(a, norm), F.ne(a, a))
        return F.sign(x) * ((g / F.sum(hit, dim=dim, keepdim=True)) * hit)
    if p < 1:
        scaled = F.sign(x) * F.where(F.eq(x, 0.0), 0.0, F.abs(x) ** (p - 1))
        return scaled * g * norm ** (1 - p)
    scaled = F.sign(x) * F.abs(x) ** (p - 1) if p < 2 else x * F.abs(x) ** (p - 2)
    return scaled * F.where(F.eq(norm, 0.0), 0.0, g / _safe(norm) ** (p - 1))


defop("norm", _vector_norm, [_norm_partial], saves=(0, "out"))


def _sort_order(x, dim=-1, descending=False):
    """The stable sorting permutation of ``x`` along ``dim``: equal values keep their
    order, NaN counts as the largest value (torch's order, in both directions)."""
    x = np.asarray(x)
    if x.ndim == 0:
        normalize_dims(dim, 0)  # torch accepts dim 0 / -1 of a 0-d tensor
        return np.zeros((), dtype=np.int64)
    (axis,) = normalize_dims(dim, x.ndim)
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    # Sorting the reversed array ascending and reversing the result is descending, with
    # ties still in their original order (negating would fail for bool and unsigned).
    order = np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)
    return x.shape[axis] - 1 - order


def _sort(x, dim=-1, descending=False):
    x = np.asarray(x)
    order = _sort_order(x, dim, descending)
    return x.copy() if x.ndim == 0 else np.take_along_axis(x, order, axis=dim)


def _sort_as(g, like, dim=-1, descending=False):
    g = np.asarray(g)
    order = _sort_order(like, dim, descending)
    return g.copy() if g.ndim == 0 else np.take_along_axis(g, order, axis=dim)


def _unsort_as(g, like, dim=-1, descending=False):
    g = np.asarray(g)
    order = _sort_order(like, dim, descending)
    if g.ndim == 0:
        return g.copy()
    out = np.empty_like(g)
    np.put_along_axis(out, order, g, axis=dim)
    return out


defop(
    "sort",
    _sort,
    [lambda g, x, out, dim=-1, descending=False: F.unsort_as(g, x, dim=dim, descending=descending)],
    saves=(0,),
    doc="The values of ``x`` sorted along ``dim`` (stably); ``Tensor.sort`` pairs them "
    "with ``argsort``'s indices.",
)
defop(
    "argsort",
    lambda x, dim=-1, descending=False: _sort_order(x, dim, descending),
    doc="Where each value of ``sort(x, dim)`` came from along ``dim`` (no gradient).",
)
# Sort's gradient goes back to where each value came from; the two permutations are
# each other's transpose, so they differentiate into each other (second derivatives).
defop(
    "sort_as",
    _sort_as,
    [
        lambda g, y, like, out, dim=-1, descending=False: F.unsort_as(
            g, like, dim=dim, descending=descending
        ),
        None,
    ],
    saves=(1,),
    doc="``y`` permuted along ``dim`` as sorting ``like`` permutes it.",
)
defop(
    "unsort_as",
    _unsort_as,
    [
        lambda g, y, like, out, dim=-1, descending=False: F.sort_as(
            g, like, dim=dim, descending=descending
        ),
        None,
    ],
    saves=(1,),
    doc="The inverse of ``sort_as``: ``y`` put back where sorting ``like`` took it from.",
)


def _check_spread_input(name: str, x: np.ndarray) -> None:
    if x.dtype.kind not in "fc":
        raise RuntimeError("std and var only support floating point and complex dtypes")


def _variance(name: str, x, dim, correction, keepdim):
    x = np.asarray(x)
    _check_spread_input(name, x)
    axes = normalize_dims(dim, x.ndim)
    n = x.size if axes is None else math.prod(x.shape[a] for a in axes)
    dof = max(0, n - correction)
    if dof <= 0:
        warn_at_caller(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than "
            "the reduction factor (input numel divided by output numel)."
        )
    deviation = x - np.mean(x, axis=axes, keepdims=True)
    return np.sum(deviation * deviation, axis=axes, keepdims=keepdim) / dof


def _var_rule(g, x, dim, correction, keepdim):
    """torch's var_backward, for ``g`` already broadcast over ``x``."""
    if x.shape is not None and None not in x.shape:
        whole = dim is None or len(x.shape) == 0
        n = _count_of_shape(x.shape, None if whole else dim) if x.shape else 1
        if whole and n - correction <= 0:
            # 2 / 0: infinite where x is off its mean, NaN (inf * 0) where it is on it
            return g * F.where(F.eq(x, F.mean(x)), math.nan, math.inf)
        scale = math.inf if n == correction else 2.0 / (n - correction)
        return scale * g * (x - F.mean(x, dim=None if whole else dim, keepdim=True))
    # Sizes known only when the graph runs: the count comes from the value itself.
    count = F.count(x, dim=dim)
    return 2.0 / (count - correction) * g * (x - F.mean(x, dim=dim, keepdim=True))


def _var_partial(g, x, out, dim=None, correction=1, keepdim=False):
    return _var_rule(_restore(g, x, dim, keepdim), x, dim, correction, keepdim)


def _std_partial(g, x, out, dim=None, correction=1, keepdim=False):
    # d sqrt(v) = dv / (2 sqrt(v)); 0 where the deviation is 0, as torch's std_backward
    g, std = _restore(g, x, dim, keepdim), _restore(out, x, dim, keepdim)
    g = F.where(F.eq(std, 0.0), 0.0, g / _safe(std * 2.0))
    return _var_rule(g, x, dim, correction, keepdim)


defop(
    "var",
    lambda x, dim=None, correction=1, keepdim=False: _variance("var", x, dim, correction, keepdim),
    [_var_partial],
    saves=(0,),
    doc="Variance over ``dim`` (all when None), dividing by ``n - correction``.",
)
defop(
    "std",
    lambda x, dim=None, correction=1, keepdim=False: np.sqrt(
        _variance("std", x, dim, correction, keepdim)
    ),
    [_std_partial],
    saves=(0, "out"),
    doc="Standard deviation over ``dim``: the square root of ``var``.",
)


def _prod(x, dim=None, keepdim=False):
    # Integers and booleans multiply in int64, as in torch (and as sum adds).
    dtype = np.int64 if np.result_type(x).kind in "biu" else None
    return np.multiply.reduce(
        x, axis=normalize_dims(dim, np.ndim(x)), keepdims=keepdim, dtype=dtype
    )


def _prod_partial(g, x, out, dim=None, keepdim=False):
    """torch's prod_backward without dividing by zero, and differentiable again.

    Each entry's gradient is the product of the others.  Where the slice holds no zero,
    ``g * out / x``; where it holds zeros, that quotient is still right (0) for the
    entries that are not zero, and its derivative reaches the zero through ``out``.  A
    zero's own gradient is the product of the slice's other entries: of the nonzero
    ones, times, with two zeros, the other zero, written ``sum of the zeros - x`` so that
    a second derivative finds it (the rows and columns of a Hessian at a zero).  With
    three zeros or more, every first and second derivative is 0."""
    if x.shape == ():
        return g
    g, out = _restore(g, x, dim, keepdim), _restore(out, x, dim, keepdim)
    zero = F.eq(x, 0.0)
    zeros = F.sum(zero, dim=dim, keepdim=True)  # per slice
    others = F.prod(F.where(zero, 1.0, x), dim=dim, keepdim=True)
    other_zero = F.sum(F.where(zero, x, 0.0), dim=dim, keepdim=True) - x
    factor = F.where(F.eq(zeros, 1), 1.0, F.where(F.eq(zeros, 2), other_zero, 0.0))
    return F.where(zero, g * (others * factor), g * (out / _safe(x)))


defop("prod", _prod, [_prod_partial], saves=(0, "out"))


def _check_index(name: str, index: np.ndarray) -> None:
    if index.dtype not in (np.int64, np.int32):
        raise RuntimeError(
            f"{name}(): Expected dtype int32/int64 for index but got: "
            f"{torch_dtype_name(index.dtype)}"
        )
    if index.ndim > 1:
        raise IndexError(
            f"{name}(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
            f"{torch_dtype_name(index.dtype)} and size: {list(index.shape)}"
        )


def _index_select(x, dim, index):
    x, index = np.asarray(x), np.asarray(index)
    _check_index("index_select", index)
    (axis,) = normalize_dims(dim, x.ndim) or (0,)
    size = x.shape[axis] if x.ndim else 1
    if index.size and (index.min() < -size or index.max() >= size):
        raise IndexError("index out of range in self")
    index = np.atleast_1d(index) if x.ndim else index.reshape(())
    return np.take(x, index % size, axis=axis if x.ndim else None)


def _zeros_for(x, g):
    """Zeros of the input ``x``'s shape and ``g``'s dtype, for a gradient to add into."""
    if unknown_shape(x.shape):
        return F.zeros_like(x)  # a static node: the run tells its size
    return np.zeros(tuple(x.shape), dtype=g.dtype)


defop(
    "index_select",
    _index_select,
    [lambda g, x, out, dim, index: F.index_add(_zeros_for(x, g), g, dim=dim, index=index)],
    saves=(),
    doc="The slices of ``x`` at positions ``index`` along ``dim`` (``torch.index_select``).",
)


def _index_add(x, source, dim, index, alpha=1):
    x, source, index = np.asarray(x), np.asarray(source), np.asarray(index)
    _check_index("index_add_", index)
    (axis,) = normalize_dims(dim, x.ndim) or (0,)
    if x.dtype != source.dtype:
        raise RuntimeError(
            f"index_add_(): self ({torch_dtype_name(x.dtype)}) and source "
            f"({torch_dtype_name(source.dtype)}) must have the same scalar type"
        )
    target = x.reshape(1) if x.ndim == 0 else x
    spread = source.reshape(1) if source.ndim == 0 else source
    if spread.ndim != target.ndim or spread.shape[axis] != index.size:
        raise RuntimeError(
            f"index_add_(): Number of indices ({index.size}) should be equal to "
            f"source.size(dim): ({spread.shape[axis] if spread.ndim > axis else 1}), "
            f"for dim: {axis}"
        )
    if any(s != t for i, (s, t) in enumerate(zip(spread.shape, target.shape)) if i != axis):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(x.shape)} source.shape = {list(source.shape)}"
        )
    size = target.shape[axis]
    bad = index[(index < 0) | (index >= size)]
    if bad.size:
        raise RuntimeError(
            f"index {int(bad[0])} is out of bounds for dimension {axis} with size {size}"
        )
    out = target.copy()
    np.add.at(
        out, (slice(None),) * axis + (index.reshape(-1),), spread if alpha == 1 else spread * alpha
    )
    return out.reshape(x.shape)


def _index_add_source_partial(g, x, source, out, dim, index, alpha=1):
    picked = F.index_select(g, dim=dim, index=index)
    if not same_shape(picked.shape, source.shape):  # a 0-d source of a 0-d or 1-slot x
        picked = _reshape_to(picked, source)
    return picked if alpha == 1 else picked * alpha


defop(
    "index_add",
    _index_add,
    [lambda g, x, source, out, dim, index, alpha=1: g, _index_add_source_partial],
    saves=(),
    doc="``x`` with ``alpha * source`` added at positions ``index`` along ``dim``; "
    "repeated positions add up (``torch.index_add``).",
)


def _scaled_by(alpha, x, y) -> None:
    """torch's check of ``alpha`` in ``x.add(y, alpha=...)``: integer tensors take only
    an integer alpha (a float one would be truncated silently)."""
    dtype = result_type(x, y)
    if dtype is not None and dtype.kind in "biu" and isinstance(alpha, float):
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number."
        )


def _add_alpha(x, y, alpha):
    _scaled_by(alpha, x, y)
    return OPS["add"].forward(x, np.multiply(y, alpha))


def _sub_alpha(x, y, alpha):
    _scaled_by(alpha, x, y)
    return _subtract(x, np.multiply(y, alpha))


# ``x.add(y, alpha=a)`` is one node in torch (AddBackward0 with edges to x and y), not a
# multiplication feeding an addition: the same here, with alpha an attribute.
defop(
    "add_alpha",
    _add_alpha,
    [lambda g, x, y, out, alpha: g, lambda g, x, y, out, alpha: g * alpha],
    saves=(),
    elementwise=True,
    doc="``x + alpha * y`` (``x.add(y, alpha=alpha)``).",
)
defop(
    "sub_alpha",
    _sub_alpha,
    [lambda g, x, y, out, alpha: g, lambda g, x, y, out, alpha: -g * alpha],
    saves=(),
    elementwise=True,
    doc="``x - alpha * y`` (``x.sub(y, alpha=alpha)``).",
)


# ----------------------------------------------------------------------------------
# Masks, triangles and gathers: each output entry is a copy of one input entry (or the
# fill value), so every gradient is exact: copied back, or added where entries repeat.
# ----------------------------------------------------------------------------------
#: the C++ names torch's masked_fill message gives a mask's dtype
_C_TYPE_NAMES = {
    "float32": "float",
    "float64": "double",
    "float16": "c10::Half",
    "int64": "long int",
    "int32": "int",
    "int16": "short int",
    "int8": "signed char",
    "uint8": "unsigned char",
}


def _masked_fill(x, mask, value):
    x, mask, value = np.asarray(x), np.asarray(mask), np.asarray(value)
    if mask.dtype != np.bool_:
        name = _C_TYPE_NAMES.get(mask.dtype.name, mask.dtype.name)
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype {name}: "
            "compare first, e.g. x.masked_fill(x < 0, 0.0), or convert with mask.bool()."
        )
    if value.ndim:
        raise RuntimeError(
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value.ndim} dimension(s)."
        )
    _fits(value, x.dtype)
    # the value takes self's dtype (1.7 into an integer tensor is 1), as torch casts it
    return np.where(mask, value.astype(x.dtype), x)


#: the C++ names torch's overflow message gives a value's target type
_OVERFLOW_NAMES = {"int64": "int64_t", "int32": "int", "float32": "float", "float64": "double"}


def _fits(value: np.ndarray, dtype: np.dtype) -> None:
    """torch's check that a fill value converts to ``dtype``: no NaN, inf or out-of-range
    number into an integer tensor, no complex number into a real one."""
    name = _OVERFLOW_NAMES.get(np.dtype(dtype).name)
    if name is None or value.dtype.kind not in "fc":
        return
    if dtype.kind == "f":
        overflows = value.dtype.kind == "c" and value.imag != 0
    else:
        number = value.real if value.dtype.kind == "c" else value
        limits = np.iinfo(dtype)
        overflows = not (np.isfinite(number) and limits.min <= number <= limits.max)
    if overflows:
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")


# A Python number value is an attribute (torch's MaskedFillBackward0, one edge), a 0-d
# tensor an input that gets the sum of the gradient at the filled entries
# (MaskedFillBackward1, edges to self and to the value), as in torch.
defop(
    "masked_fill",
    _masked_fill,
    # where(), not g * ~mask: a filled entry's gradient is an exact 0 even where g is inf
    [lambda g, x, mask, out, value: F.where(mask, 0.0, g), None],
    saves=(1,),
    elementwise=True,
    doc="``x`` with the number ``value`` where ``mask`` is True (``torch.masked_fill``).",
)
defop(
    "masked_fill_tensor",
    _masked_fill,
    [
        lambda g, x, mask, value, out: F.where(mask, 0.0, g),
        None,
        lambda g, x, mask, value, out: F.where(mask, g, 0.0),
    ],
    saves=(1,),
    elementwise=True,
    doc="``x`` with the 0-d tensor ``value`` where ``mask`` is True (``torch.masked_fill``).",
)


def _triangle(name: str, part: Callable):
    def forward(x, diagonal=0):
        x = np.asarray(x)
        if x.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return part(x, diagonal)

    forward.__name__ = name
    return forward


defop(
    "tril",
    _triangle("tril", np.tril),
    [lambda g, x, out, diagonal=0: F.tril(g, diagonal=diagonal)],
    saves=(),
    doc="The lower triangle of the last two dims, from ``diagonal`` down (``torch.tril``).",
)
defop(
    "triu",
    _triangle("triu", np.triu),
    [lambda g, x, out, diagonal=0: F.triu(g, diagonal=diagonal)],
    saves=(),
    doc="The upper triangle of the last two dims, from ``diagonal`` up (``torch.triu``).",
)


def _gather_checks(name: str, x: np.ndarray, dim: int, index: np.ndarray) -> int:
    """torch's checks of ``gather`` and ``scatter_add``: the index's dtype, rank, sizes
    and range; the axis they work along.  An empty index passes them all, as in torch."""
    (axis,) = normalize_dims(dim, x.ndim) or (0,)
    if index.size == 0:
        return axis
    if index.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if max(index.ndim, 1) != max(x.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    shape, index_shape = x.shape or (1,), index.shape or (1,)
    for d, (i, s) in enumerate(zip(index_shape, shape)):
        if d != axis and i > s:
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index {list(index.shape)} "
                f"to be no larger than self {list(x.shape)} apart from dimension {axis}"
            )
    size = shape[axis]
    bad = index[(index < 0) | (index >= size)]
    if bad.size:
        raise RuntimeError(
            f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension {axis} "
            f"with size {size}"
        )
    return axis


def _gather(x, dim, index):
    x, index = np.asarray(x), np.asarray(index)
    axis = _gather_checks("gather", x, dim, index)
    if index.size == 0:  # nothing picked: any index shape and dtype, as in torch
        return np.zeros(index.shape, dtype=x.dtype)
    source = x.reshape(-1) if x.ndim == 0 else x
    spots = index.reshape(-1) if index.ndim == 0 else index
    # the slice of x under the index (it may be smaller than x away from ``axis``)
    window = tuple(slice(None) if d == axis else slice(0, n) for d, n in enumerate(spots.shape))
    picked = np.take_along_axis(source[window], spots.astype(np.intp), axis=axis)
    return picked.reshape(index.shape)


def _scatter_add(x, source, dim, index):
    x, source, index = np.asarray(x), np.asarray(source), np.asarray(index)
    axis = _gather_checks("scatter_add", x, dim, index)
    if index.size == 0:
        return x.copy()
    if x.dtype != source.dtype:
        raise RuntimeError(
            "scatter(): Expected self.dtype to be equal to src.dtype (here "
            f"{torch_dtype_name(x.dtype)} and {torch_dtype_name(source.dtype)}): convert src "
            "with .to(self.dtype)"
        )
    out = x.reshape(-1).copy() if x.ndim == 0 else x.copy()
    spots = index.reshape(-1) if index.ndim == 0 else index
    values = source.reshape(-1) if source.ndim == 0 else source
    if values.shape != spots.shape:
        raise RuntimeError(
            f"scatter_add(): naivegraph expects src of the index's shape {list(index.shape)}, "
            f"got {list(source.shape)}; slice src to the index's shape first"
        )
    grid = list(np.indices(spots.shape, sparse=True))
    grid[axis] = spots.astype(np.intp)
    np.add.at(out, tuple(grid), values)
    return out.reshape(x.shape)


defop(
    "gather",
    _gather,
    [lambda g, x, out, dim, index: F.scatter_add(_zeros_for(x, g), g, dim=dim, index=index)],
    saves=(),
    doc="``out[i][j] = x[i][index[i][j]]`` along ``dim`` (``torch.gather``).",
)
defop(
    "scatter_add",
    _scatter_add,
    [
        lambda g, x, source, out, dim, index: g,
        lambda g, x, source, out, dim, index: F.gather(g, dim=dim, index=index),
    ],
    saves=(),
    doc="``x`` with ``source`` added at positions ``index`` along ``dim``; repeated "
    "positions add up (``torch.scatter_add``, the gradient of ``gather``).",
)
