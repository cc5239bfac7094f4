"""How each op of the op table becomes standard ONNX operators: one table, beside it.

:data:`ONNX_MAP` holds, for every name in :data:`naivegraph.ops.OPS`, either an
*emitter* ``(builder, node, input_names) -> output_name`` or a :class:`NotExportable`
entry saying why the op has no ONNX form.  An emitter reads the static node (its
``attrs``, the ``shape`` and ``dtype`` of its inputs and of itself) and adds operators
through the builder of :mod:`naivegraph.export.exporter`, which wraps ``onnx.helper``.
This module never imports onnx; the builder offers:

- ``builder.op(op_type, inputs, dtype=None, outputs=1, **attributes)``: add one
  operator, return its output name (a list when ``outputs`` > 1); ``dtype`` records
  the output's numpy dtype so later casts know it; an array attribute becomes a tensor;
- ``builder.const(value, dtype)``: a constant of that numpy dtype;
- ``builder.ints(values)``: a 1-D int64 constant (shapes, axes, indices);
- ``builder.cast(name, dtype)``: ``name`` as ``dtype`` (no operator if it already is);
- ``builder.dtype_of(name)``: the numpy dtype recorded for ``name`` (or None).

Each emitter reproduces naivegraph's numpy forward, special values included: where
numpy and ONNX disagree (relu at NaN, the sign of NaN, max/min with NaN, integer
division) the emitter spells numpy's rule with Where, Equal, Less, ... instead of the
one ONNX operator that would differ.  Results are cast to the node's inferred dtype.

:func:`markdown_table` renders the table for ``docs/onnx_ops.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..ops.core import OPS, result_type
from ..ops.shapes import normalize_dims

Emitter = Callable[[Any, Any, list], str]


@dataclass(frozen=True)
class NotExportable:
    """An op with no ONNX form, and why."""

    reason: str


NOT_EXPORTABLE = NotExportable  # ONNX_MAP["assign"] = NOT_EXPORTABLE("reason")

#: op name -> emitter or NotExportable
ONNX_MAP: dict[str, Emitter | NotExportable] = {}
#: op name -> the ONNX operators it becomes, in words (for the docs table)
ONNX_DESCRIPTION: dict[str, str] = {}

INT64_MAX = np.iinfo(np.int64).max


def emits(*names: str, onnx: str):
    """Register the decorated emitter for op(s) ``names``; ``onnx`` says what it adds."""

    def register(emitter: Emitter) -> Emitter:
        for name in names:
            ONNX_MAP[name] = emitter
            ONNX_DESCRIPTION[name] = onnx
        return emitter

    return register


# ----------------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------------
def _rank(node, i: int = 0) -> int:
    shape = node.inputs[i].shape if i >= 0 else node.shape
    if shape is None:
        raise NotImplementedError(
            f"exporting {node.op.name} node {node.name!r} needs the rank of its input, which "
            f"the graph does not know; give the placeholders shapes"
        )
    return len(shape)


def _as_cast(b, names: list, dtype) -> list:
    return [b.cast(n, dtype) for n in names]


def _operand(node, i: int):
    """Input ``i`` as naivegraph's promotion sees it: a weak Python number stays one."""
    inp = node.inputs[i]
    value = getattr(inp, "value", None) if inp.kind == "constant" else None
    return value if type(value) in (int, float, bool) else inp


def _promoted_dtype(node) -> np.dtype:
    """The dtype naivegraph computes in before an op whose result is a mask."""
    dtype = result_type(*(_operand(node, i) for i in range(len(node.inputs))))
    if dtype is None:
        raise NotImplementedError(f"cannot tell the dtype of the operands of {node.name!r}")
    return np.dtype(dtype)


def _out_dtype(node) -> np.dtype:
    if node.dtype is None:
        raise NotImplementedError(f"the graph does not know the dtype of {node.name!r}")
    return np.dtype(node.dtype)


def _refuse_bool(node, dtype, what: str = "") -> None:
    if np.dtype(dtype) == np.bool_:
        raise NotImplementedError(
            f"{node.op.name} on booleans ({node.name!r}) has no ONNX operator{what}"
        )


def _axes(node, dim, rank: int | None) -> list[int] | None:
    """``dim`` as a list of axes (None: all of them), normalised where the rank is known."""
    if dim is None:
        return None
    if rank is None:
        listed = [int(d) for d in ((dim,) if isinstance(dim, (int, np.integer)) else dim)]
        return listed or None  # an empty list of dims reduces every axis, as in torch
    axes = normalize_dims(dim, rank)
    return None if axes is None else list(axes)


def _reduce(b, op_type: str, x: str, axes: list[int] | None, keepdim: bool, dtype) -> str:
    if axes is None:
        return b.op(op_type, [x], dtype=dtype, keepdims=int(keepdim))
    return b.op(
        op_type, [x, b.ints(axes)], dtype=dtype, keepdims=int(keepdim), noop_with_empty_axes=1
    )


def _sizes(b, x: str, axes: list[int] | None) -> str:
    """Run-time product of the sizes of ``x`` along ``axes`` (all: None), int64 scalar."""
    shape = b.op("Shape", [x], dtype=np.int64)
    if axes is not None:
        shape = b.op("Gather", [shape, b.ints(axes)], dtype=np.int64, axis=0)
    return b.op("ReduceProd", [shape], dtype=np.int64, keepdims=0)


def _count(b, x: str, shape, axes: list[int] | None, dtype) -> str:
    """How many elements a reduction over ``axes`` takes, as a ``dtype`` scalar."""
    if shape is not None and None not in shape:
        n = math.prod(shape) if axes is None else math.prod(shape[a] for a in axes)
        return b.const(n, dtype)
    return b.cast(_sizes(b, x, axes), dtype)


def _nan_to_zero(b, x: str, dtype) -> str:
    return b.op("Where", [b.op("IsNaN", [x], dtype=np.bool_), b.const(0, dtype), x], dtype=dtype)


# ----------------------------------------------------------------------------------
# Elementwise arithmetic: operands cast to the node's dtype (naivegraph's promotion)
# ----------------------------------------------------------------------------------
def _binary(onnx_op: str, bool_op: str | None = None) -> Emitter:
    def emit(b, node, names):
        dtype = _out_dtype(node)
        x, y = _as_cast(b, names, dtype)
        if dtype == np.bool_:
            if bool_op is None:
                _refuse_bool(node, dtype)
            return b.op(bool_op, [x, y], dtype=dtype)
        return b.op(onnx_op, [x, y], dtype=dtype)

    return emit


emits("add", onnx="Add (Or for booleans)")(_binary("Add", "Or"))
emits("sub", onnx="Sub")(_binary("Sub"))
emits("mul", onnx="Mul (And for booleans)")(_binary("Mul", "And"))
emits("div", onnx="Div on operands cast to the result dtype (integers divide as floats)")(
    _binary("Div")
)


@emits("pow", onnx="Pow")
def _pow(b, node, names):
    dtype = _out_dtype(node)
    _refuse_bool(node, dtype)
    x, y = _as_cast(b, names, dtype)
    return b.op("Pow", [x, y], dtype=dtype)


@emits("rsub", onnx="Sub (the number first)")
def _rsub(b, node, names):
    dtype = _out_dtype(node)
    _refuse_bool(node, dtype)
    return b.op("Sub", [b.const(node.attrs["other"], dtype), b.cast(names[0], dtype)], dtype=dtype)


@emits("rpow", onnx="Pow (the number as base)")
def _rpow(b, node, names):
    dtype = _out_dtype(node)
    _refuse_bool(node, dtype)
    return b.op("Pow", [b.const(node.attrs["base"], dtype), b.cast(names[0], dtype)], dtype=dtype)


@emits(
    "pow_scalar",
    onnx="Mul (x**2), Sqrt (x**0.5), Reciprocal (x**-1), Reciprocal(Sqrt) (x**-0.5), else Pow",
)
def _pow_scalar(b, node, names):
    dtype = _out_dtype(node)
    exponent = node.attrs["exponent"]
    _refuse_bool(node, dtype)
    if isinstance(exponent, bool):
        raise NotImplementedError(f"{node.name!r}: a boolean exponent has no ONNX operator")
    x = b.cast(names[0], dtype)
    # numpy's fast paths for these exponents are exact; Pow could differ in the last bit
    if exponent == 2:
        return b.op("Mul", [x, x], dtype=dtype)
    if exponent == 1:
        return b.op("Identity", [x], dtype=dtype)
    if dtype.kind == "f" and exponent == 0.5:
        return b.op("Sqrt", [x], dtype=dtype)
    if dtype.kind == "f" and exponent == -1:
        return b.op("Reciprocal", [x], dtype=dtype)
    if dtype.kind == "f" and exponent == -0.5:  # rsqrt, as the op: -inf at -0.0, nan at -inf
        return b.op("Reciprocal", [b.op("Sqrt", [x], dtype=dtype)], dtype=dtype)
    return b.op("Pow", [x, b.const(exponent, dtype)], dtype=dtype)


@emits("reciprocal", onnx="Reciprocal (integers and booleans as the default float)")
def _reciprocal(b, node, names):
    dtype = _out_dtype(node)
    return b.op("Reciprocal", [b.cast(names[0], dtype)], dtype=dtype)


def _select(b, condition: str, x: str, y: str, dtype) -> str:
    """``Where(condition, x, y)`` that keeps a -0.0 taken from ``x``.

    ONNX Runtime's CPU Where turns a -0.0 of its second input into +0.0 (its third
    input's zeros keep their sign), where numpy and torch keep it:
    ``maximum(x, x * 0.0)`` at x = -2 is -0.0.  So a floating Where is followed by a
    second one that sends -0.0 through its third input wherever the result should be
    -0.0 (the first Where's result, in its second input, is then never -0.0)."""
    out = b.op("Where", [condition, x, y], dtype=dtype)
    if np.dtype(dtype).kind != "f":
        return out
    from_x = b.op("And", [condition, _is_negative_zero(b, x, dtype)], dtype=np.bool_)
    not_condition = b.op("Not", [condition], dtype=np.bool_)
    from_y = b.op("And", [not_condition, _is_negative_zero(b, y, dtype)], dtype=np.bool_)
    should_be = b.op("Or", [from_x, from_y], dtype=np.bool_)
    # Xor with True, not Not: ONNX Runtime's optimiser folds Not into Where by swapping
    # its inputs, which would put the -0.0 back into the second input
    keep = b.op("Xor", [should_be, b.const(np.array(True), np.bool_)], dtype=np.bool_)
    return b.op("Where", [keep, out, b.const(np.array(-0.0, dtype), dtype)], dtype=dtype)


def _is_negative_zero(b, x: str, dtype) -> str:
    """-0.0 where ``x`` is: equal to 0 with a reciprocal of -inf."""
    zero = b.const(np.zeros((), dtype), dtype)
    equal = b.op("Equal", [x, zero], dtype=np.bool_)
    below = b.op("Less", [b.op("Reciprocal", [x], dtype=dtype), zero], dtype=np.bool_)
    return b.op("And", [equal, below], dtype=np.bool_)


def _extremum(wins: str) -> Emitter:
    # torch's rule: y where it wins or is NaN, else x (ties give x); ONNX Max/Min do not
    # say what NaN gives
    def emit(b, node, names):
        dtype = _out_dtype(node)
        _refuse_bool(node, dtype)
        x, y = _as_cast(b, names, dtype)
        take_y = b.op(wins, [y, x], dtype=np.bool_)
        if dtype.kind == "f":
            take_y = b.op("Or", [take_y, b.op("IsNaN", [y], dtype=np.bool_)], dtype=np.bool_)
        return _select(b, take_y, y, x, dtype)

    return emit


emits("maximum", onnx="Where(Greater(y, x) or IsNaN(y), y, x)")(_extremum("Greater"))
emits("minimum", onnx="Where(Less(y, x) or IsNaN(y), y, x)")(_extremum("Less"))


@emits("where", onnx="Where (values cast to the result dtype)")
def _where(b, node, names):
    dtype = _out_dtype(node)
    c = b.cast(names[0], np.bool_)
    x, y = _as_cast(b, names[1:], dtype)
    return _select(b, c, x, y, dtype)


@emits("clamp", onnx="Where(Less(x, min), min, x), then Where(Greater(., max), max, .)")
def _clamp(b, node, names):
    dtype = _out_dtype(node)
    _refuse_bool(node, dtype)
    x = b.cast(names[0], dtype)
    low, high = node.attrs.get("min"), node.attrs.get("max")
    if low is not None:
        low = b.const(np.asarray(low).astype(dtype), dtype)
        x = _select(b, b.op("Less", [x, low], dtype=np.bool_), low, x, dtype)
    if high is not None:
        high = b.const(np.asarray(high).astype(dtype), dtype)
        x = _select(b, b.op("Greater", [x, high], dtype=np.bool_), high, x, dtype)
    return x


# ----------------------------------------------------------------------------------
# Elementwise unary
# ----------------------------------------------------------------------------------
def _unary(onnx_op: str) -> Emitter:
    def emit(b, node, names):
        dtype = _out_dtype(
            node
        )  # integers and booleans compute as the default float (exp, log, ...)
        _refuse_bool(node, dtype)
        return b.op(onnx_op, [b.cast(names[0], dtype)], dtype=dtype)

    return emit


emits("neg", onnx="Neg")(_unary("Neg"))
emits("abs", onnx="Abs")(_unary("Abs"))
for _name, _onnx in [("exp", "Exp"), ("log", "Log"), ("sqrt", "Sqrt")]:
    emits(_name, onnx=f"{_onnx} (integers and booleans as the default float)")(_unary(_onnx))
for _name, _onnx in [("sin", "Sin"), ("cos", "Cos"), ("tanh", "Tanh")]:
    emits(_name, onnx=f"{_onnx} (integers and booleans as the default float)")(_unary(_onnx))


@emits("sigmoid", onnx="naivegraph's stable form: e = Exp(-|x|), Where(x >= 0, 1/(1+e), e/(1+e))")
def _sigmoid(b, node, names):
    dtype = _out_dtype(node)
    x = b.cast(names[0], dtype)
    e = b.op("Exp", [b.op("Neg", [b.op("Abs", [x], dtype=dtype)], dtype=dtype)], dtype=dtype)
    one = b.const(1, dtype)
    denominator = b.op("Add", [one, e], dtype=dtype)
    positive = b.op("Div", [one, denominator], dtype=dtype)
    negative = b.op("Div", [e, denominator], dtype=dtype)
    nonnegative = b.op("GreaterOrEqual", [x, b.const(0, dtype)], dtype=np.bool_)
    return b.op("Where", [nonnegative, positive, negative], dtype=dtype)


@emits("relu", onnx="Where(Less(x, 0), 0, x) (keeps -0.0 and NaN, as torch)")
def _relu(b, node, names):
    dtype = _out_dtype(node)
    _refuse_bool(node, dtype)
    x = b.cast(names[0], dtype)
    zero = b.const(0, dtype)
    return b.op("Where", [b.op("Less", [x, zero], dtype=np.bool_), zero, x], dtype=dtype)


@emits("sign", onnx="Sign, with 0 at NaN (Identity for booleans)")
def _sign(b, node, names):
    dtype = _out_dtype(node)
    x = b.cast(names[0], dtype)
    if dtype == np.bool_:
        return b.op("Identity", [x], dtype=dtype)
    out = b.op("Sign", [x], dtype=dtype)
    return _nan_to_zero(b, out, dtype) if dtype.kind == "f" else out


# Comparisons compute in the promoted dtype of their operands; booleans (which ONNX
# cannot order) as int64.
def _comparison(onnx_op: str, negate: bool = False) -> Emitter:
    def emit(b, node, names):
        dtype = _promoted_dtype(node)
        if dtype == np.bool_ and onnx_op != "Equal":
            dtype = np.dtype(np.int64)
        x, y = _as_cast(b, names, dtype)
        out = b.op(onnx_op, [x, y], dtype=np.bool_)
        return b.op("Not", [out], dtype=np.bool_) if negate else out

    return emit


emits("eq", onnx="Equal")(_comparison("Equal"))
emits("ne", onnx="Not(Equal)")(_comparison("Equal", negate=True))
emits("gt", onnx="Greater")(_comparison("Greater"))
emits("ge", onnx="GreaterOrEqual")(_comparison("GreaterOrEqual"))
emits("lt", onnx="Less")(_comparison("Less"))
emits("le", onnx="LessOrEqual")(_comparison("LessOrEqual"))


def _logical(onnx_op: str) -> Emitter:
    def emit(b, node, names):
        return b.op(onnx_op, _as_cast(b, names, np.bool_), dtype=np.bool_)

    return emit


emits("logical_and", onnx="And (operands cast to bool)")(_logical("And"))
emits("logical_or", onnx="Or (operands cast to bool)")(_logical("Or"))
emits("logical_not", onnx="Not (operand cast to bool)")(_logical("Not"))


def _bitwise(onnx_op: str, on_bools: str) -> Emitter:
    """torch's bitwise operators: ONNX's Bitwise* on integers, the logical op on bools."""

    def emit(b, node, names):
        dtype = _out_dtype(node)
        if dtype == np.bool_:
            return b.op(on_bools, _as_cast(b, names, np.bool_), dtype=np.bool_)
        return b.op(onnx_op, _as_cast(b, names, dtype), dtype=dtype)

    return emit


emits("bitwise_and", onnx="BitwiseAnd (And for booleans)")(_bitwise("BitwiseAnd", "And"))
emits("bitwise_or", onnx="BitwiseOr (Or for booleans)")(_bitwise("BitwiseOr", "Or"))
emits("bitwise_xor", onnx="BitwiseXor (Xor for booleans)")(_bitwise("BitwiseXor", "Xor"))
emits("bitwise_not", onnx="BitwiseNot (Not for booleans)")(_bitwise("BitwiseNot", "Not"))


# ----------------------------------------------------------------------------------
# Reductions
# ----------------------------------------------------------------------------------
def _summed(b, node, names) -> str:
    """ReduceSum over the node's ``dim`` (integers and booleans add up in int64)."""
    x_dtype = np.dtype(node.inputs[0].dtype)
    dtype = np.dtype(np.int64) if x_dtype.kind in "biu" else x_dtype
    x = b.cast(names[0], dtype)
    rank = None if node.inputs[0].shape is None else len(node.inputs[0].shape)
    axes = _axes(node, node.attrs.get("dim"), rank)
    return _reduce(b, "ReduceSum", x, axes, node.attrs.get("keepdim", False), dtype)


@emits("sum", onnx="ReduceSum (integers and booleans in int64)")
def _sum(b, node, names):
    return b.cast(_summed(b, node, names), _out_dtype(node))


@emits("mean", onnx="ReduceSum, then Div by the element count (static, or from Shape)")
def _mean(b, node, names):
    dtype = _out_dtype(node)
    total = b.cast(_summed(b, node, names), dtype)
    shape = node.inputs[0].shape
    axes = _axes(node, node.attrs.get("dim"), None if shape is None else len(shape))
    return b.op("Div", [total, _count(b, names[0], shape, axes, dtype)], dtype=dtype)


def _extreme(onnx_op: str) -> Emitter:
    def emit(b, node, names):
        dtype = _out_dtype(node)
        _refuse_bool(node, dtype)
        shape = node.inputs[0].shape
        axes = _axes(node, node.attrs.get("dim"), None if shape is None else len(shape))
        x = b.cast(names[0], dtype)
        keepdim = node.attrs.get("keepdim", False)
        out = _reduce(b, onnx_op, x, axes, keepdim, dtype)
        if dtype.kind != "f":
            return out
        # numpy: a NaN wins; ONNX Runtime's ReduceMax/ReduceMin may skip it
        nans = b.cast(b.op("IsNaN", [x], dtype=np.bool_), np.int32)
        any_nan = b.op(
            "Greater",
            [_reduce(b, "ReduceMax", nans, axes, keepdim, np.int32), b.const(0, np.int32)],
            dtype=np.bool_,
        )
        return b.op("Where", [any_nan, b.const(np.nan, dtype), out], dtype=dtype)

    return emit


emits("max", onnx="ReduceMax, NaN where the slice holds one")(_extreme("ReduceMax"))
emits("min", onnx="ReduceMin, NaN where the slice holds one")(_extreme("ReduceMin"))


def _position(onnx_op: str) -> Emitter:
    def emit(b, node, names):
        x = names[0]
        dim, keepdim = node.attrs.get("dim"), node.attrs.get("keepdim", False)
        if dim is None:  # numpy: the index into the flattened array
            x = b.op("Reshape", [x, b.ints([-1])], dtype=node.inputs[0].dtype)
        axis, keep = (0, 0) if dim is None else (int(dim), int(keepdim))
        out = b.op(onnx_op, [x], dtype=np.int64, axis=axis, keepdims=keep)
        if np.dtype(node.inputs[0].dtype).kind == "f":
            # numpy: the first NaN wins; ONNX Runtime's ArgMax/ArgMin may pass over it
            nans = b.cast(b.op("IsNaN", [x], dtype=np.bool_), np.int32)
            first_nan = b.op("ArgMax", [nans], dtype=np.int64, axis=axis, keepdims=keep)
            any_nan = b.op(
                "Greater",
                [_reduce(b, "ReduceMax", nans, [axis], bool(keep), np.int32), b.const(0, np.int32)],
                dtype=np.bool_,
            )
            out = b.op("Where", [any_nan, first_nan, out], dtype=np.int64)
        if dim is None and keepdim:
            out = b.op("Reshape", [out, b.ints([1] * _rank(node))], dtype=np.int64)
        return b.cast(out, _out_dtype(node))

    return emit


emits("argmax", onnx="ArgMax (flattened input without dim; the first NaN wins, as in numpy)")(
    _position("ArgMax")
)
emits("argmin", onnx="ArgMin (flattened input without dim; the first NaN wins, as in numpy)")(
    _position("ArgMin")
)


@emits("first_true", onnx="ArgMax of the mask as int32, Equal with a Range, And the mask")
def _first_true(b, node, names):
    rank = _rank(node)
    mask = b.cast(names[0], np.bool_)
    if rank == 0:
        return b.op("Identity", [mask], dtype=np.bool_)
    axis = int(node.attrs["dim"]) % rank
    first = b.op(
        "ArgMax", [b.cast(mask, np.int32)], dtype=np.int64, axis=axis, keepdims=1
    )  # the first True, or 0 when there is none
    size = b.op(
        "Gather", [b.op("Shape", [mask], dtype=np.int64), b.ints([axis])], dtype=np.int64, axis=0
    )
    positions = b.op(
        "Range",
        [b.const(0, np.int64), b.op("Squeeze", [size], dtype=np.int64), b.const(1, np.int64)],
        dtype=np.int64,
    )
    # positions along `axis`, with size-1 axes elsewhere, so they broadcast against `first`
    if rank > 1:
        others = [a for a in range(rank) if a != axis]
        positions = b.op("Unsqueeze", [positions, b.ints(others)], dtype=np.int64)
    hit = b.op("Equal", [positions, first], dtype=np.bool_)
    return b.op("And", [hit, mask], dtype=np.bool_)


# ----------------------------------------------------------------------------------
# Shapes
# ----------------------------------------------------------------------------------
@emits("reshape", onnx="Reshape (allowzero=1: a 0 is a size, as in numpy)")
def _reshape(b, node, names):
    shape = [int(s) for s in node.attrs["shape"]]
    allowzero = int(-1 not in shape)  # numpy's 0 is a size; ONNX refuses 0 with -1
    return b.op("Reshape", [names[0], b.ints(shape)], dtype=node.dtype, allowzero=allowzero)


@emits("expand", onnx="Expand (-1 written as 1, which keeps the size)")
def _expand(b, node, names):
    shape = [1 if s == -1 else int(s) for s in node.attrs["shape"]]
    return b.op("Expand", [names[0], b.ints(shape)], dtype=node.dtype)


def _sum_back(b, node, x: str, source, target, target_shape: str | None) -> str:
    """``x`` (static shape ``source``) summed back to ``target`` (static, may hold None)
    then reshaped: to ``target`` itself, or to the run-time shape ``target_shape``."""
    lead = len(source) - len(target)
    axes, unsure = list(range(lead)), []
    for i, t in enumerate(target):
        s = source[lead + i]
        if t == 1:  # summing a size-1 axis changes nothing, so sum whatever s is
            axes.append(lead + i)
        elif t is None and s != 1 and s is not None:
            pass  # t is s at run time (a target of size 1 needs a source of size 1)
        elif t is None and s is None:
            unsure.append(lead + i)  # the run decides: sum where the target size is 1
    dtype = b.dtype_of(x) or node.dtype
    if unsure:
        # 1 where the target's run-time size is 1: those axes are summed (the others
        # kept); an axis of size 1 summed is itself, so the mask covers every case
        shape_t = target_shape
        sizes = b.op(
            "Gather", [shape_t, b.ints([i - lead for i in unsure])], dtype=np.int64, axis=0
        )
        is_one = b.op("Equal", [sizes, b.const(1, np.int64)], dtype=np.bool_)
        picked = b.op("Compress", [b.ints(unsure), is_one], dtype=np.int64, axis=0)
        all_axes = b.op("Concat", [b.ints(axes), picked], dtype=np.int64, axis=0)
        x = b.op("ReduceSum", [x, all_axes], dtype=dtype, keepdims=1, noop_with_empty_axes=1)
    elif axes:
        x = b.op("ReduceSum", [x, b.ints(axes)], dtype=dtype, keepdims=1)
    if target_shape is None:
        return b.op("Reshape", [x, b.ints([int(t) for t in target])], dtype=dtype, allowzero=1)
    return b.op("Reshape", [x, target_shape], dtype=dtype, allowzero=1)


def _sum_back_at_run_time(b, node, x: str, target_shape: str) -> str:
    """``x`` summed back to the run-time shape ``target_shape`` with every decision taken
    from the shapes when the model runs (for ranks naivegraph does not know)."""
    dtype = b.dtype_of(x) or node.dtype
    source = b.op("Shape", [x], dtype=np.int64)
    n_target = b.op("Size", [target_shape], dtype=np.int64)
    lead = b.op("Sub", [b.op("Size", [source], dtype=np.int64), n_target], dtype=np.int64)
    zero, one = b.const(0, np.int64), b.const(1, np.int64)
    tail = b.op(
        "Slice",
        [source, b.op("Reshape", [lead, b.ints([1])], dtype=np.int64), b.ints([INT64_MAX])],
        dtype=np.int64,
    )
    summed = b.op(
        "And",
        [
            b.op("Equal", [target_shape, one], dtype=np.bool_),
            b.op("Not", [b.op("Equal", [tail, one], dtype=np.bool_)], dtype=np.bool_),
        ],
        dtype=np.bool_,
    )
    positions = b.op("Range", [zero, n_target, one], dtype=np.int64)
    tail_axes = b.op("Add", [b.op("Compress", [positions, summed], dtype=np.int64, axis=0), lead])
    axes = b.op("Concat", [b.op("Range", [zero, lead, one], dtype=np.int64), tail_axes], axis=0)
    x = b.op("ReduceSum", [x, axes], dtype=dtype, keepdims=1, noop_with_empty_axes=1)
    return b.op("Reshape", [x, target_shape], dtype=dtype, allowzero=1)


@emits(
    "sum_to",
    onnx="ReduceSum over the broadcast axes (from the static shapes, else from Shape), Reshape",
)
def _sum_to(b, node, names):
    source, target = node.inputs[0].shape, tuple(node.attrs["shape"])
    if source is None:
        return _sum_back_at_run_time(b, node, names[0], b.ints(target))
    return _sum_back(b, node, names[0], source, target, None)


@emits(
    "sum_to_like",
    onnx="ReduceSum over the broadcast axes (from the static shapes where they tell, else "
    "from Shape), Reshape to Shape(like)",
)
def _sum_to_like(b, node, names):
    source, target = node.inputs[0].shape, node.inputs[1].shape
    shape = b.op("Shape", [names[1]], dtype=np.int64)
    if source is None or target is None:
        return _sum_back_at_run_time(b, node, names[0], shape)
    return _sum_back(b, node, names[0], source, target, shape)


@emits("reshape_like", onnx="Reshape to Shape(like)")
def _reshape_like(b, node, names):
    shape = b.op("Shape", [names[1]], dtype=np.int64)
    return b.op("Reshape", [names[0], shape], dtype=node.dtype, allowzero=1)


@emits("expand_like", onnx="Expand to Shape(like)")
def _expand_like(b, node, names):
    shape = b.op("Shape", [names[1]], dtype=np.int64)
    return b.op("Expand", [names[0], shape], dtype=node.dtype)


@emits("count", onnx="a constant, or ReduceProd of Shape (at least 1), Cast")
def _count_op(b, node, names):
    dtype = _out_dtype(node)
    shape = node.inputs[0].shape
    axes = _axes(node, node.attrs.get("dim"), None if shape is None else len(shape))
    if shape is not None and None not in shape:
        n = math.prod(shape) if axes is None else math.prod(shape[a] for a in axes)
        return b.const(max(n, 1), dtype)
    n = b.op("Max", [_sizes(b, names[0], axes), b.const(1, np.int64)], dtype=np.int64)
    return b.cast(n, dtype)


@emits("transpose", onnx="Transpose (two axes swapped)")
def _transpose(b, node, names):
    rank = _rank(node)
    if rank == 0:
        return b.op("Identity", [names[0]], dtype=node.dtype)
    perm = list(range(rank))
    d0, d1 = node.attrs["dim0"] % rank, node.attrs["dim1"] % rank
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return b.op("Transpose", [names[0]], dtype=node.dtype, perm=perm)


@emits("t", onnx="Transpose (Identity below 2-D)")
def _t(b, node, names):
    if _rank(node) < 2:
        return b.op("Identity", [names[0]], dtype=node.dtype)
    return b.op("Transpose", [names[0]], dtype=node.dtype, perm=[1, 0])


@emits("permute", onnx="Transpose")
def _permute(b, node, names):
    rank = _rank(node)
    if rank == 0:
        return b.op("Identity", [names[0]], dtype=node.dtype)
    return b.op(
        "Transpose", [names[0]], dtype=node.dtype, perm=[d % rank for d in node.attrs["dims"]]
    )


@emits("squeeze", onnx="Squeeze (static sizes), else Reshape to the Shape without its 1s")
def _squeeze(b, node, names):
    shape = node.inputs[0].shape
    rank = _rank(node)
    dim = node.attrs.get("dim")
    axes = list(range(rank)) if dim is None else list(normalize_dims(dim, rank) or ())
    if None not in shape:  # torch: an axis whose size is not 1 stays
        gone = [a for a in axes if shape[a] == 1]
        if not gone:
            return b.op("Identity", [names[0]], dtype=node.dtype)
        return b.op("Squeeze", [names[0], b.ints(gone)], dtype=node.dtype)
    # unknown sizes: keep every size that is not 1 or lies outside the squeezed axes
    sizes = b.op("Shape", [names[0]], dtype=np.int64)
    keep = b.op("Not", [b.op("Equal", [sizes, b.const(1, np.int64)], dtype=np.bool_)])
    outside = np.array([a not in axes for a in range(rank)])
    keep = b.op("Or", [keep, b.const(outside, np.bool_)], dtype=np.bool_)
    new_shape = b.op("Compress", [sizes, keep], dtype=np.int64, axis=0)
    return b.op("Reshape", [names[0], new_shape], dtype=node.dtype, allowzero=1)


@emits("unsqueeze", onnx="Unsqueeze")
def _unsqueeze(b, node, names):
    dim = node.attrs["dim"]
    axes = [int(dim)] if isinstance(dim, (int, np.integer)) else [int(d) for d in dim]
    return b.op("Unsqueeze", [names[0], b.ints(axes)], dtype=node.dtype)


def _basic(part) -> bool:
    return (
        part is None
        or part is Ellipsis
        or isinstance(part, slice)
        or (isinstance(part, (int, np.integer)) and not isinstance(part, (bool, np.bool_)))
    )


def _positions(node, shape, index) -> np.ndarray:
    """Where ``x[index]`` reads in the flattened ``x`` of static ``shape``: numpy's own
    indexing of ``arange`` (advanced indices, masks and broadcasting included)."""
    if shape is None or None in shape:
        raise NotImplementedError(
            f"{node.op.name} node {node.name!r} indexes with an index array into a shape "
            f"known only at run time ({shape}); its positions cannot be worked out when "
            f"exporting (give the placeholders full shapes)"
        )
    return np.arange(math.prod(shape), dtype=np.int64).reshape(shape)[index]


def _flat(b, x: str, dtype) -> str:
    return b.op("Reshape", [x, b.ints([-1])], dtype=dtype)


@emits(
    "getitem",
    onnx="Slice per slice, Gather per integer, Unsqueeze per None; an index array (static "
    "shapes only): Gather of the flattened input at the positions numpy reads",
)
def _getitem(b, node, names):
    index = node.attrs["index"]
    parts = list(index) if isinstance(index, tuple) else [index]
    if not all(_basic(part) for part in parts):
        positions = _positions(node, node.inputs[0].shape, index)
        picked = b.op("Gather", [_flat(b, names[0], node.dtype), b.ints(positions.ravel())], axis=0)
        return b.op("Reshape", [picked, b.ints(positions.shape)], dtype=node.dtype, allowzero=1)
    x = _basic_getitem(b, names[0], parts, _rank(node), node.dtype)
    if x == names[0]:
        x = b.op("Identity", [x], dtype=node.dtype)
    return x


def _basic_getitem(b, x: str, parts: list, rank: int, dtype) -> str:
    """``x[parts]`` for integers, slices, None and ...: Slice, Gather, Unsqueeze."""
    parts = list(parts)
    if Ellipsis in parts:
        at = parts.index(Ellipsis)
        used = sum(1 for p in parts if p is not None and p is not Ellipsis)
        parts[at : at + 1] = [slice(None)] * (rank - used)
    axis = 0
    for part in parts:
        if part is None:
            x = b.op("Unsqueeze", [x, b.ints([axis])], dtype=dtype)
            axis += 1
        elif isinstance(part, slice):
            step = 1 if part.step is None else int(part.step)
            if part != slice(None) and part != slice(None, None, 1):
                start = 0 if part.start is None else int(part.start)
                stop = INT64_MAX if part.stop is None else int(part.stop)
                x = b.op(
                    "Slice",
                    [x, b.ints([start]), b.ints([stop]), b.ints([axis]), b.ints([step])],
                    dtype=dtype,
                )
            axis += 1
        else:
            x = b.op("Gather", [x, b.const(int(part), np.int64)], dtype=dtype, axis=axis)
    return x


def _run_time_positions(b, node, like: str, index) -> tuple[str, str]:
    """(positions ``like[index]`` reads in the flattened ``like``, in the indexed shape;
    the flat size of ``like``), computed when the model runs: the same indexing applied
    to a Range of ``like``'s size."""
    parts = list(index) if isinstance(index, tuple) else [index]
    if not all(_basic(part) for part in parts):
        raise NotImplementedError(
            f"{node.op.name} node {node.name!r} indexes a shape known only at run time with an "
            f"index array; only integers, slices, None and ... export there"
        )
    shape = b.op("Shape", [like], dtype=np.int64)
    size = b.op("ReduceProd", [shape], dtype=np.int64, keepdims=1)
    start, step = b.const(0, np.int64), b.const(1, np.int64)
    count = b.op("Squeeze", [size], dtype=np.int64)
    grid = b.op("Range", [start, count, step], dtype=np.int64)
    grid = b.op("Reshape", [grid, shape], dtype=np.int64, allowzero=1)
    rank = _rank(node, 1) if node.op.name == "scatter_like" else _rank(node)
    return _basic_getitem(b, grid, parts, rank, np.int64), size


def _spread(b, value: str, positions: str, dtype) -> tuple[str, str]:
    """(flat positions, ``value`` broadcast to their shape and flattened)."""
    value = b.op("Expand", [b.cast(value, dtype), b.op("Shape", [positions])], dtype=dtype)
    return _flat(b, positions, np.int64), _flat(b, value, dtype)


def _written(b, node, value: str, positions: np.ndarray, dtype) -> str:
    """``value`` broadcast over the indexed region and flattened, as numpy writes it."""
    value = b.cast(value, dtype)
    spread = b.op("Expand", [value, b.ints(positions.shape)], dtype=dtype)
    return _flat(b, spread, dtype)


@emits(
    "scatter",
    onnx="ScatterElements(reduction=add) into flat zeros at the positions numpy's add.at "
    "writes (found from the static shape), Reshape",
)
def _scatter(b, node, names):
    dtype = _out_dtype(node)
    shape = tuple(node.attrs["shape"])
    positions = _positions(node, shape, node.attrs["index"])
    zeros = b.const(np.zeros(math.prod(shape), dtype=dtype), dtype)
    updates = _written(b, node, names[0], positions, dtype)
    flat = b.op(
        "ScatterElements",
        [zeros, b.ints(positions.ravel()), updates],
        dtype=dtype,
        axis=0,
        reduction="add",
    )
    return b.op("Reshape", [flat, b.ints(shape)], dtype=dtype, allowzero=1)


@emits(
    "scatter_like",
    onnx="ScatterElements(reduction=add) into flat zeros of Shape(like), at positions found "
    "by indexing a Range of its size (integers, slices, None and ... only), Reshape",
)
def _scatter_like(b, node, names):
    dtype = _out_dtype(node)
    positions, size = _run_time_positions(b, node, names[1], node.attrs["index"])
    zeros = b.op("ConstantOfShape", [size], dtype=dtype, value=np.zeros(1, dtype=dtype))
    positions, updates = _spread(b, names[0], positions, dtype)
    # basic indices never repeat a position, so no reduction is needed
    flat = b.op("ScatterElements", [zeros, positions, updates], dtype=dtype, axis=0)
    shape = b.op("Shape", [names[1]], dtype=np.int64)
    return b.op("Reshape", [flat, shape], dtype=dtype, allowzero=1)


@emits(
    "index_put",
    onnx="ScatterElements into the flattened input at the positions numpy writes (of "
    "repeated positions the last write wins, as in numpy; unknown sizes: integers, slices, "
    "None and ... only), Reshape",
)
def _index_put(b, node, names):
    dtype = _out_dtype(node)
    shape = node.inputs[0].shape
    if shape is None or None in shape:  # positions from the run-time shape
        x = b.cast(names[0], dtype)
        positions, _ = _run_time_positions(b, node, x, node.attrs["index"])
        positions, updates = _spread(b, names[1], positions, dtype)
        flat = b.op(
            "ScatterElements", [_flat(b, x, dtype), positions, updates], dtype=dtype, axis=0
        )
        return b.op("Reshape", [flat, b.op("Shape", [x])], dtype=dtype, allowzero=1)
    positions = _positions(node, shape, node.attrs["index"]).ravel()
    # numpy assigns in order, so a repeated position keeps the last value written there
    last = {int(p): k for k, p in enumerate(positions)}
    order = sorted(last.values())
    updates = _written(b, node, names[1], _positions(node, shape, node.attrs["index"]), dtype)
    if len(order) != len(positions):
        updates = b.op("Gather", [updates, b.ints(order)], dtype=dtype, axis=0)
    flat = b.op(
        "ScatterElements",
        [_flat(b, b.cast(names[0], dtype), dtype), b.ints(positions[order]), updates],
        dtype=dtype,
        axis=0,
    )
    return b.op("Reshape", [flat, b.ints(shape)], dtype=dtype, allowzero=1)


def _legacy_empties(node) -> list[bool]:
    """Which inputs of a cat torch skips: 1-d empty ones beside inputs of another rank."""
    shapes = [i.shape for i in node.inputs]
    other_rank = any(s is None or len(s) != 1 for s in shapes)
    return [other_rank and s is not None and tuple(s) == (0,) for s in shapes]


@emits("cat", onnx="Concat (inputs cast to the result dtype; legacy 1-d empties left out)")
def _cat(b, node, names):
    dtype = _out_dtype(node)
    kept = [n for n, skip in zip(names, _legacy_empties(node)) if not skip] or names[:1]
    return b.op("Concat", _as_cast(b, kept, dtype), dtype=dtype, axis=int(node.attrs.get("dim", 0)))


@emits("cat_part", onnx="Slice at offsets summed from the known sizes and Shape of the others")
def _cat_part(b, node, names):
    axis, part, sizes = node.attrs["dim"], node.attrs["part"], node.attrs["sizes"]
    likes = iter(names[1:])
    run = [
        b.op(
            "Gather", [b.op("Shape", [next(likes)], dtype=np.int64), b.ints([axis])], dtype=np.int64
        )
        if size is None
        else b.ints([size])
        for size in sizes
    ]
    start = b.ints([0])
    for size in run[:part]:
        start = b.op("Add", [start, size], dtype=np.int64)
    end = b.op("Add", [start, run[part]], dtype=np.int64)
    return b.op("Slice", [names[0], start, end, b.ints([axis])], dtype=node.dtype)


@emits("stack", onnx="Unsqueeze each input, Concat")
def _stack(b, node, names):
    dtype = _out_dtype(node)
    dim = int(node.attrs.get("dim", 0)) % (_rank(node) + 1)
    parts = [b.op("Unsqueeze", [n, b.ints([dim])], dtype=dtype) for n in _as_cast(b, names, dtype)]
    return b.op("Concat", parts, dtype=dtype, axis=dim)


# ----------------------------------------------------------------------------------
# Linear algebra and neural-network blocks
# ----------------------------------------------------------------------------------
@emits("matmul", onnx="MatMul")
def _matmul(b, node, names):
    return b.op("MatMul", names, dtype=node.dtype)


@emits("bmm", onnx="MatMul")
def _bmm(b, node, names):
    return b.op("MatMul", names, dtype=node.dtype)


@emits("addmm", onnx="MatMul, Add")
def _addmm(b, node, names):
    product = b.op("MatMul", names[1:], dtype=node.dtype)
    return b.op("Add", [product, names[0]], dtype=node.dtype)


def _shifted(b, node, x: str, dtype) -> tuple[str, list[int]]:
    axes = [int(node.attrs["dim"])]
    peak = b.op("ReduceMax", [x, b.ints(axes)], dtype=dtype, keepdims=1)
    return b.op("Sub", [x, peak], dtype=dtype), axes


@emits("softmax", onnx="naivegraph's form: e = Exp(x - ReduceMax), e / ReduceSum(e)")
def _softmax(b, node, names):
    dtype = _out_dtype(node)
    shifted, axes = _shifted(b, node, names[0], dtype)
    e = b.op("Exp", [shifted], dtype=dtype)
    total = b.op("ReduceSum", [e, b.ints(axes)], dtype=dtype, keepdims=1)
    return b.op("Div", [e, total], dtype=dtype)


@emits("log_softmax", onnx="naivegraph's form: s = x - ReduceMax, s - Log(ReduceSum(Exp(s)))")
def _log_softmax(b, node, names):
    dtype = _out_dtype(node)
    shifted, axes = _shifted(b, node, names[0], dtype)
    e = b.op("Exp", [shifted], dtype=dtype)
    total = b.op("ReduceSum", [e, b.ints(axes)], dtype=dtype, keepdims=1)
    return b.op("Sub", [shifted, b.op("Log", [total], dtype=dtype)], dtype=dtype)


def _reduced(b, node, x: str, shape, dtype) -> str:
    """A loss's ``reduction``: ``mean`` (ReduceSum / count), ``sum`` or ``none``."""
    reduction = node.attrs.get("reduction", "mean")
    if reduction == "none":
        return x
    total = b.op("ReduceSum", [x], dtype=dtype, keepdims=0)
    if reduction == "sum":
        return total
    return b.op("Div", [total, _count(b, x, shape, None, dtype)], dtype=dtype)


@emits("nll_loss", onnx="GatherElements of the targets, Neg, then the reduction")
def _nll_loss(b, node, names):
    dtype = _out_dtype(node)
    if _rank(node) != 2:
        raise NotImplementedError(f"nll_loss node {node.name!r}: only (N, C) inputs export")
    target = b.op("Unsqueeze", [b.cast(names[1], np.int64), b.ints([1])], dtype=np.int64)
    picked = b.op("GatherElements", [b.cast(names[0], dtype), target], dtype=dtype, axis=1)
    picked = b.op("Neg", [b.op("Squeeze", [picked, b.ints([1])], dtype=dtype)], dtype=dtype)
    shape = node.inputs[0].shape
    return _reduced(b, node, picked, shape[:1], dtype)


@emits("mse_loss", onnx="Sub, Mul (the square), then the reduction")
def _mse_loss(b, node, names):
    dtype = _out_dtype(node)
    x, y = _as_cast(b, names, dtype)
    diff = b.op("Sub", [x, y], dtype=dtype)
    squared = b.op("Mul", [diff, diff], dtype=dtype)
    shapes = [i.shape for i in node.inputs]
    shape = None
    if all(s is not None and None not in s for s in shapes):
        shape = tuple(np.broadcast_shapes(*shapes))
    return _reduced(b, node, squared, shape, dtype)


@emits("one_hot", onnx="Equal(Unsqueeze(target, -1), Range(num_classes))")
def _one_hot(b, node, names):
    target = b.op("Unsqueeze", [b.cast(names[0], np.int64), b.ints([-1])], dtype=np.int64)
    classes = b.const(np.arange(int(node.attrs["num_classes"]), dtype=np.int64), np.int64)
    return b.op("Equal", [target, classes], dtype=np.bool_)


# ----------------------------------------------------------------------------------
# Copies, casts, constants of a shape
# ----------------------------------------------------------------------------------
@emits("to_copy", onnx="Cast")
def _to_copy(b, node, names):
    dtype = np.dtype(node.attrs["dtype"])
    out = b.cast(names[0], dtype)
    return b.op("Identity", [out], dtype=dtype) if out == names[0] else out


@emits("clone", onnx="Identity")
def _clone(b, node, names):
    return b.op("Identity", [names[0]], dtype=node.dtype)


def _filled(b, node, x: str, value) -> str:
    dtype = _out_dtype(node)
    shape = b.op("Shape", [x], dtype=np.int64)
    return b.op("ConstantOfShape", [shape], dtype=dtype, value=np.array([value]).astype(dtype))


@emits("zeros_like", onnx="ConstantOfShape(Shape(x), 0)")
def _zeros_like(b, node, names):
    return _filled(b, node, names[0], 0)


@emits("zero", onnx="ConstantOfShape(Shape(x), 0)")
def _zero(b, node, names):
    return _filled(b, node, names[0], 0)


@emits("fill", onnx="ConstantOfShape(Shape(x), value)")
def _fill(b, node, names):
    return _filled(b, node, names[0], node.attrs["value"])


@emits("copy", onnx="Expand(Cast(src), Shape(x))")
def _copy(b, node, names):
    dtype = _out_dtype(node)
    shape = b.op("Shape", [names[0]], dtype=np.int64)
    return b.op("Expand", [b.cast(names[1], dtype), shape], dtype=dtype)


# ----------------------------------------------------------------------------------
# More reductions, sorting and index arithmetic
# ----------------------------------------------------------------------------------
def _reduced_axes(node) -> list[int] | None:
    shape = node.inputs[0].shape
    return _axes(node, node.attrs.get("dim"), None if shape is None else len(shape))


@emits("dot", onnx="MatMul of the two vectors")
def _dot(b, node, names):
    return b.op("MatMul", names, dtype=_out_dtype(node))


@emits(
    "norm",
    onnx="Sqrt(ReduceSum(x * x)) for p=2, ReduceSum(Abs) for 1, ReduceMax/ReduceMin(Abs) for "
    "inf/-inf, the count of nonzeros for 0, else Pow(ReduceSum(Pow(Abs(x), p)), 1/p)",
)
def _norm(b, node, names):
    dtype = _out_dtype(node)
    p, keepdim = float(node.attrs.get("p", 2.0)), node.attrs.get("keepdim", False)
    axes = _reduced_axes(node)
    x = b.cast(names[0], dtype)
    a = b.op("Abs", [x], dtype=dtype)
    if math.isinf(p):
        return _reduce(b, "ReduceMax" if p > 0 else "ReduceMin", a, axes, keepdim, dtype)
    if p == 0:
        nonzero = b.op(
            "Not", [b.op("Equal", [a, b.const(0, dtype)], dtype=np.bool_)], dtype=np.bool_
        )
        return _reduce(b, "ReduceSum", b.cast(nonzero, dtype), axes, keepdim, dtype)
    if p == 1:
        return _reduce(b, "ReduceSum", a, axes, keepdim, dtype)
    if p == 2:
        total = _reduce(b, "ReduceSum", b.op("Mul", [a, a], dtype=dtype), axes, keepdim, dtype)
        return b.op("Sqrt", [total], dtype=dtype)
    powered = b.op("Pow", [a, b.const(p, dtype)], dtype=dtype)
    total = _reduce(b, "ReduceSum", powered, axes, keepdim, dtype)
    return b.op("Pow", [total, b.const(1.0 / p, dtype)], dtype=dtype)


def _variance(b, node, names) -> str:
    dtype = _out_dtype(node)
    shape, keepdim = node.inputs[0].shape, node.attrs.get("keepdim", False)
    axes = _reduced_axes(node)
    x = b.cast(names[0], dtype)
    count = _count(b, x, shape, axes, dtype)
    mean = b.op("Div", [_reduce(b, "ReduceSum", x, axes, True, dtype), count], dtype=dtype)
    deviation = b.op("Sub", [x, mean], dtype=dtype)
    squares = b.op("Mul", [deviation, deviation], dtype=dtype)
    total = _reduce(b, "ReduceSum", squares, axes, keepdim, dtype)
    correction = b.const(node.attrs.get("correction", 1), dtype)
    dof = b.op("Max", [b.op("Sub", [count, correction], dtype=dtype), b.const(0, dtype)])
    return b.op("Div", [total, dof], dtype=dtype)


@emits("var", onnx="mean by ReduceSum / count, Sub, Mul, ReduceSum, Div by max(n - correction, 0)")
def _var(b, node, names):
    return _variance(b, node, names)


@emits("std", onnx="Sqrt of var's operators")
def _std(b, node, names):
    return b.op("Sqrt", [_variance(b, node, names)], dtype=_out_dtype(node))


@emits("prod", onnx="ReduceProd (integers and booleans in int64)")
def _prod(b, node, names):
    dtype = _out_dtype(node)
    axes = _reduced_axes(node)
    return _reduce(
        b, "ReduceProd", b.cast(names[0], dtype), axes, node.attrs.get("keepdim", False), dtype
    )


def _sorted(b, node, x: str, like: str) -> list[str]:
    """TopK of ``like`` over all of its ``dim``: [values, indices]; ONNX puts the lower
    index first among equal values in both directions, which is the stable order."""
    rank = _rank(node, 1 if node.op.name in ("sort_as", "unsort_as") else 0)
    if rank == 0:
        raise NotImplementedError(f"{node.op.name} node {node.name!r}: a 0-d value has no TopK")
    axis = int(node.attrs.get("dim", -1)) % rank
    size = b.op(
        "Gather", [b.op("Shape", [like], dtype=np.int64), b.ints([axis])], dtype=np.int64, axis=0
    )
    return b.op(
        "TopK",
        [like, size],
        outputs=2,
        axis=axis,
        largest=int(bool(node.attrs.get("descending", False))),
        sorted=1,
    )


def _sort_axis(node, i: int) -> int:
    return int(node.attrs.get("dim", -1)) % _rank(node, i)


@emits("sort", onnx="TopK over the whole dim (values)")
def _sort(b, node, names):
    values, _ = _sorted(b, node, names[0], names[0])
    return b.op("Identity", [values], dtype=node.dtype)


@emits("argsort", onnx="TopK over the whole dim (indices)")
def _argsort(b, node, names):
    _, indices = _sorted(b, node, names[0], names[0])
    return b.op("Identity", [indices], dtype=np.int64)


@emits("sort_as", onnx="GatherElements at the indices of TopK of like")
def _sort_as(b, node, names):
    _, indices = _sorted(b, node, names[1], names[1])
    return b.op("GatherElements", [names[0], indices], dtype=node.dtype, axis=_sort_axis(node, 1))


@emits("unsort_as", onnx="ScatterElements into zeros at the indices of TopK of like")
def _unsort_as(b, node, names):
    _, indices = _sorted(b, node, names[1], names[1])
    zeros = _filled(b, node, names[0], 0)
    return b.op(
        "ScatterElements", [zeros, indices, names[0]], dtype=node.dtype, axis=_sort_axis(node, 1)
    )


def _index_array(node) -> np.ndarray:
    return np.asarray(node.attrs["index"], dtype=np.int64).reshape(-1)


@emits("index_select", onnx="Gather at the (constant) index")
def _index_select(b, node, names):
    rank = _rank(node)
    if rank == 0:
        raise NotImplementedError(f"index_select node {node.name!r}: a 0-d input does not export")
    axis = int(node.attrs["dim"]) % rank
    return b.op("Gather", [names[0], b.ints(_index_array(node))], dtype=node.dtype, axis=axis)


@emits("masked_fill", onnx="Where(mask, value, x), the value a constant of x's dtype")
def _masked_fill(b, node, names):
    dtype = _out_dtype(node)
    value = b.const(np.asarray(node.attrs["value"]).astype(dtype), dtype)
    return _select(b, b.cast(names[1], np.bool_), value, b.cast(names[0], dtype), dtype)


@emits("masked_fill_tensor", onnx="Where(mask, Cast(value), x)")
def _masked_fill_tensor(b, node, names):
    dtype = _out_dtype(node)
    x, value = _as_cast(b, [names[0], names[2]], dtype)
    return _select(b, b.cast(names[1], np.bool_), value, x, dtype)


def _trilu(upper: int):
    def emit(b, node, names):
        diagonal = b.const(np.asarray(int(node.attrs.get("diagonal", 0))), np.int64)
        return b.op("Trilu", [names[0], diagonal], dtype=node.dtype, upper=upper)

    return emit


emits("tril", onnx="Trilu(upper=0) with k = diagonal")(_trilu(0))
emits("triu", onnx="Trilu(upper=1) with k = diagonal")(_trilu(1))


def _element_index(b, node, what: str):
    """The (constant) index of ``gather`` / ``scatter_add`` and the axis, for the
    ONNX *Elements ops (which take no 0-d input)."""
    rank = _rank(node)
    index = np.asarray(node.attrs["index"], dtype=np.int64)
    if rank == 0 or index.ndim == 0:
        raise NotImplementedError(f"{what} node {node.name!r}: a 0-d input does not export")
    return b.const(index, np.int64), int(node.attrs["dim"]) % rank


@emits("gather", onnx="GatherElements at the (constant) index")
def _gather(b, node, names):
    index, axis = _element_index(b, node, "gather")
    return b.op("GatherElements", [names[0], index], dtype=node.dtype, axis=axis)


@emits("scatter_add", onnx="ScatterElements(reduction=add) of src at the (constant) index")
def _scatter_add(b, node, names):
    index, axis = _element_index(b, node, "scatter_add")
    return b.op(
        "ScatterElements", [names[0], index, names[1]], dtype=node.dtype, axis=axis, reduction="add"
    )


@emits(
    "index_add",
    onnx="ScatterElements(reduction=add) of alpha * source at the index, expanded over the "
    "source's shape",
)
def _index_add(b, node, names):
    dtype = _out_dtype(node)
    rank = _rank(node)
    if rank == 0 or _rank(node, 1) != rank:
        raise NotImplementedError(f"index_add node {node.name!r}: a 0-d input does not export")
    axis = int(node.attrs["dim"]) % rank
    index = _index_array(node)
    source = b.cast(names[1], dtype)
    alpha = node.attrs.get("alpha", 1)
    if alpha != 1:
        source = b.op("Mul", [source, b.const(alpha, dtype)], dtype=dtype)
    shaped = [1] * rank
    shaped[axis] = index.size
    positions = b.op(
        "Expand",
        [b.const(index.reshape(shaped), np.int64), b.op("Shape", [source], dtype=np.int64)],
        dtype=np.int64,
    )
    return b.op(
        "ScatterElements",
        [b.cast(names[0], dtype), positions, source],
        dtype=dtype,
        axis=axis,
        reduction="add",
    )


def _scaled(onnx_op: str) -> Emitter:
    def emit(b, node, names):
        dtype = _out_dtype(node)
        _refuse_bool(node, dtype)
        x, y = _as_cast(b, names, dtype)
        scaled = b.op("Mul", [y, b.const(node.attrs["alpha"], dtype)], dtype=dtype)
        return b.op(onnx_op, [x, scaled], dtype=dtype)

    return emit


emits("add_alpha", onnx="Add(x, Mul(y, alpha))")(_scaled("Add"))
emits("sub_alpha", onnx="Sub(x, Mul(y, alpha))")(_scaled("Sub"))


# ----------------------------------------------------------------------------------
# Convolutional layers (naivegraph/ops/conv.py)
# ----------------------------------------------------------------------------------
def _images(node, what: str) -> None:
    if _rank(node) != 4:
        raise NotImplementedError(
            f"exporting {node.op.name} node {node.name!r}: ONNX's {what} takes (N, C, H, W) "
            "inputs; give the images a batch axis before the op"
        )


@emits("conv2d", onnx="Conv (pads [top, left, bottom, right], strides, dilations, group)")
def _conv2d(b, node, names):
    _images(node, "Conv")
    (top, bottom), (left, right) = node.attrs["padding"]
    return b.op(
        "Conv",
        names,
        dtype=node.dtype,
        pads=[top, left, bottom, right],
        strides=list(node.attrs["stride"]),
        dilations=list(node.attrs["dilation"]),
        group=node.attrs["groups"],
        kernel_shape=list(node.inputs[1].shape[2:]),
    )


@emits("conv2d_input_grad", onnx="ConvTranspose with the output_padding that gives the input size")
def _conv2d_input_grad(b, node, names):
    _images(node, "ConvTranspose")
    (top, bottom), (left, right) = node.attrs["padding"]
    stride, dilation = node.attrs["stride"], node.attrs["dilation"]
    kernel, out_hw = node.inputs[1].shape[2:], node.inputs[0].shape[2:]
    extra = [
        size - (s * (o - 1) + d * (k - 1) + 1 - before - after)
        for size, s, o, d, k, before, after in zip(
            node.attrs["input_hw"], stride, out_hw, dilation, kernel, (top, left), (bottom, right)
        )
    ]
    return b.op(
        "ConvTranspose",
        names,
        dtype=node.dtype,
        pads=[top, left, bottom, right],
        strides=list(stride),
        dilations=list(dilation),
        group=node.attrs["groups"],
        kernel_shape=list(kernel),
        output_padding=extra,
    )


def _pool_pads(node) -> list:
    rows, columns = node.attrs["padding"]
    return [rows, columns, rows, columns]


@emits("max_pool2d", onnx="MaxPool (pads, strides, dilations, ceil_mode)")
def _max_pool2d(b, node, names):
    _images(node, "MaxPool")
    return b.op(
        "MaxPool",
        names,
        dtype=node.dtype,
        kernel_shape=list(node.attrs["kernel_size"]),
        strides=list(node.attrs["stride"]),
        pads=_pool_pads(node),
        dilations=list(node.attrs["dilation"]),
        ceil_mode=int(node.attrs["ceil_mode"]),
    )


@emits("avg_pool2d", onnx="AveragePool (pads, strides, ceil_mode, count_include_pad)")
def _avg_pool2d(b, node, names):
    _images(node, "AveragePool")
    if node.attrs.get("divisor_override"):
        raise NotImplementedError(
            f"avg_pool2d node {node.name!r}: ONNX's AveragePool has no divisor_override"
        )
    return b.op(
        "AveragePool",
        names,
        dtype=node.dtype,
        kernel_shape=list(node.attrs["kernel_size"]),
        strides=list(node.attrs["stride"]),
        pads=_pool_pads(node),
        ceil_mode=int(node.attrs["ceil_mode"]),
        count_include_pad=int(node.attrs["count_include_pad"]),
    )


@emits(
    "batch_norm",
    onnx="(x - mean) / Sqrt(var + eps) * weight + bias, with the batch's ReduceMean "
    "statistics in training or the given ones",
)
def _batch_norm(b, node, names):
    dtype = _out_dtype(node)
    rank = _rank(node)
    x, weight, bias = _as_cast(b, names[:3], dtype)
    shape = b.ints([1, -1] + [1] * (rank - 2))
    per_channel = lambda name: b.op("Reshape", [b.cast(name, dtype), shape], dtype=dtype)  # noqa: E731
    if node.attrs["training"]:
        axes = [0, *range(2, rank)]
        centred = b.op("Sub", [x, _reduce(b, "ReduceMean", x, axes, True, dtype)], dtype=dtype)
        squares = b.op("Mul", [centred, centred], dtype=dtype)
        var = _reduce(b, "ReduceMean", squares, axes, True, dtype)
    else:
        centred = b.op("Sub", [x, per_channel(names[3])], dtype=dtype)
        var = per_channel(names[4])
    eps = b.const(node.attrs["eps"], dtype)
    std = b.op("Sqrt", [b.op("Add", [var, eps], dtype=dtype)], dtype=dtype)
    scaled = b.op("Mul", [b.op("Div", [centred, std], dtype=dtype), per_channel(weight)])
    return b.op("Add", [scaled, per_channel(bias)], dtype=dtype)


_INSIDE_BACKWARD = (
    "a gradient that only symbolic backward builds; ONNX has no operator for it (export the "
    "forward graph, or compute this gradient outside the exported model)"
)
ONNX_MAP.update(
    {
        name: NOT_EXPORTABLE(_INSIDE_BACKWARD)
        for name in (
            "conv2d_weight_grad",
            "max_pool2d_scatter",
            "max_pool2d_gather",
            "avg_pool2d_backward",
        )
    }
)
ONNX_MAP["max_pool2d_indices"] = NOT_EXPORTABLE(
    "ONNX's MaxPool indices count over the whole tensor, not one H x W plane"
)


# ----------------------------------------------------------------------------------
# Rounding division, scaled variants and the losses of the third round
# ----------------------------------------------------------------------------------
def _bools(b, op_type: str, inputs: list) -> str:
    return b.op(op_type, inputs, dtype=np.bool_)


def _floor_quotient(b, x: str, y: str, dtype) -> str:
    """numpy's (and torch's) floor division, step by step: integers from the truncated
    quotient, floats from fmod as CPython's divmod computes them."""
    zero = b.const(0, dtype)
    if np.dtype(dtype).kind in "iu":
        q = b.op("Div", [x, y], dtype=dtype)
        r = b.op("Sub", [x, b.op("Mul", [q, y], dtype=dtype)], dtype=dtype)
        signs = _bools(b, "Xor", [_bools(b, "Less", [x, zero]), _bools(b, "Less", [y, zero])])
        inexact = _bools(b, "Not", [_bools(b, "Equal", [r, zero])])
        step = b.cast(_bools(b, "And", [inexact, signs]), dtype)
        return b.op("Sub", [q, step], dtype=dtype)
    mod = b.op("Mod", [x, y], dtype=dtype, fmod=1)
    div = b.op("Div", [b.op("Sub", [x, mod], dtype=dtype), y], dtype=dtype)
    moved = _bools(
        b,
        "And",
        [
            _bools(b, "Not", [_bools(b, "Equal", [mod, zero])]),
            _bools(b, "Xor", [_bools(b, "Less", [y, zero]), _bools(b, "Less", [mod, zero])]),
        ],
    )
    div = b.op("Sub", [div, b.cast(moved, dtype)], dtype=dtype)
    floor = b.op("Floor", [div], dtype=dtype)
    up = _bools(b, "Greater", [b.op("Sub", [div, floor], dtype=dtype), b.const(0.5, dtype)])
    floor = b.op("Add", [floor, b.cast(up, dtype)], dtype=dtype)
    quotient = b.op("Div", [x, y], dtype=dtype)  # copysign(0, x / y), -0.0 told by 1 / -0.0
    one_over = b.op("Div", [b.const(1, dtype), quotient], dtype=dtype)
    negative = _bools(
        b, "Or", [_bools(b, "Less", [quotient, zero]), _bools(b, "Less", [one_over, zero])]
    )
    sign = b.op("Where", [negative, b.const(-1, dtype), b.const(1, dtype)], dtype=dtype)
    # a nonzero floor has the quotient's sign already; a zero takes it (ONNX Runtime's
    # Where drops the sign of -0.0, so the sign is multiplied in)
    floor = b.op("Mul", [b.op("Abs", [floor], dtype=dtype), sign], dtype=dtype)
    return b.op("Where", [_bools(b, "Equal", [y, zero]), b.op("Div", [x, y], dtype=dtype), floor])


@emits(
    "floor_divide",
    onnx="CPython's divmod: Mod(fmod=1), Sub, Div, Floor, Where (integers: Div, Sub)",
)
def _floor_divide(b, node, names):
    dtype = _out_dtype(node)
    _refuse_bool(node, dtype)
    x, y = _as_cast(b, names, dtype)
    return _floor_quotient(b, x, y, dtype)


def _remainder_of(b, x: str, y: str, dtype) -> str:
    if np.dtype(dtype).kind in "iu":
        return b.op("Mod", [x, y], dtype=dtype, fmod=0)
    zero = b.const(0, dtype)
    mod = b.op("Mod", [x, y], dtype=dtype, fmod=1)
    moved = _bools(
        b,
        "And",
        [
            _bools(b, "Not", [_bools(b, "Equal", [mod, zero])]),
            _bools(b, "Xor", [_bools(b, "Less", [y, zero]), _bools(b, "Less", [mod, zero])]),
        ],
    )
    return b.op("Where", [moved, b.op("Add", [mod, y], dtype=dtype), mod], dtype=dtype)


@emits("remainder", onnx="Mod(fmod=1) moved by the divisor where the signs differ (integers: Mod)")
def _remainder(b, node, names):
    dtype = _out_dtype(node)
    _refuse_bool(node, dtype)
    x, y = _as_cast(b, names, dtype)
    return _remainder_of(b, x, y, dtype)


@emits("remainder_scalar", onnx="as remainder, with the divisor a constant")
def _remainder_scalar(b, node, names):
    dtype = _out_dtype(node)
    _refuse_bool(node, dtype)
    x = b.cast(names[0], dtype)
    return _remainder_of(b, x, b.const(node.attrs["divisor"], dtype), dtype)


@emits("div_rounding", onnx="div's Div; 'floor' as floor_divide; 'trunc': Div then Floor or Ceil")
def _div_rounding(b, node, names):
    mode = node.attrs.get("rounding_mode")
    if mode is None:
        return ONNX_MAP["div"](b, node, names)  # type: ignore[operator]
    dtype = _out_dtype(node)
    x, y = _as_cast(b, names, dtype)
    if mode == "floor":
        return _floor_quotient(b, x, y, dtype)
    q = b.op("Div", [x, y], dtype=dtype)
    if np.dtype(dtype).kind in "iu":
        return q  # ONNX's integer Div truncates towards zero, as C does
    negative = _bools(b, "Less", [q, b.const(0, dtype)])
    return b.op("Where", [negative, b.op("Ceil", [q]), b.op("Floor", [q])], dtype=dtype)


@emits("addmm_scaled", onnx="Add(Mul(bias, beta), Mul(MatMul, alpha)); beta = 0: the product only")
def _addmm_scaled(b, node, names):
    dtype = _out_dtype(node)
    bias, mat1, mat2 = _as_cast(b, names, dtype)
    product = b.op("MatMul", [mat1, mat2], dtype=dtype)
    alpha, beta = node.attrs.get("alpha", 1), node.attrs.get("beta", 1)
    if alpha != 1:
        product = b.op("Mul", [product, b.const(alpha, dtype)], dtype=dtype)
    if beta == 0:
        return product
    scaled = b.op("Mul", [bias, b.const(beta, dtype)], dtype=dtype)
    return b.op("Add", [scaled, product], dtype=dtype)


@emits("sum_typed", onnx="Cast to the dtype, ReduceSum")
def _sum_typed(b, node, names):
    dtype = _out_dtype(node)
    rank = None if node.inputs[0].shape is None else len(node.inputs[0].shape)
    axes = _axes(node, node.attrs.get("dim"), rank)
    x = b.cast(names[0], dtype)
    return _reduce(b, "ReduceSum", x, axes, node.attrs.get("keepdim", False), dtype)


def _reduced_loss(b, loss: str, reduction: str, dtype) -> str:
    if reduction == "none":
        return loss
    return _reduce(
        b, "ReduceMean" if reduction == "mean" else "ReduceSum", loss, None, False, dtype
    )


@emits("smooth_l1_loss", onnx="|x - y|: Where(< beta, 0.5 d**2 / beta, d - 0.5 beta), reduced")
def _smooth_l1_loss(b, node, names):
    dtype = _out_dtype(node)
    x, y = _as_cast(b, names, dtype)
    beta = node.attrs.get("beta", 1.0)
    z = b.op("Abs", [b.op("Sub", [x, y], dtype=dtype)], dtype=dtype)
    square = b.op("Mul", [b.op("Mul", [z, z], dtype=dtype), b.const(0.5, dtype)], dtype=dtype)
    quadratic = b.op("Div", [square, b.const(beta, dtype)], dtype=dtype)
    linear = b.op("Sub", [z, b.const(0.5 * beta, dtype)], dtype=dtype)
    loss = b.op("Where", [_bools(b, "Less", [z, b.const(beta, dtype)]), quadratic, linear])
    return _reduced_loss(b, loss, node.attrs.get("reduction", "mean"), dtype)


@emits("huber_loss", onnx="|x - y|: Where(< delta, 0.5 d**2, delta (d - 0.5 delta)), reduced")
def _huber_loss(b, node, names):
    dtype = _out_dtype(node)
    x, y = _as_cast(b, names, dtype)
    delta = node.attrs.get("delta", 1.0)
    z = b.op("Abs", [b.op("Sub", [x, y], dtype=dtype)], dtype=dtype)
    quadratic = b.op("Mul", [b.op("Mul", [z, z], dtype=dtype), b.const(0.5, dtype)], dtype=dtype)
    shifted = b.op("Sub", [z, b.const(0.5 * delta, dtype)], dtype=dtype)
    linear = b.op("Mul", [shifted, b.const(delta, dtype)], dtype=dtype)
    loss = b.op("Where", [_bools(b, "Less", [z, b.const(delta, dtype)]), quadratic, linear])
    return _reduced_loss(b, loss, node.attrs.get("reduction", "mean"), dtype)


def _class_mask_of(b, target: str, classes: int, ignore_index: int, rank: int) -> str:
    target = b.cast(target, np.int64)
    shaped = b.const(
        np.arange(classes, dtype=np.int64).reshape((1, -1) + (1,) * (rank - 1)), np.int64
    )
    hit = _bools(b, "Equal", [b.op("Unsqueeze", [target, b.ints([1])], dtype=np.int64), shaped])
    counted = _bools(b, "Not", [_bools(b, "Equal", [target, b.const(ignore_index, np.int64)])])
    return _bools(b, "And", [hit, b.op("Unsqueeze", [counted, b.ints([1])], dtype=np.bool_)])


@emits("class_mask", onnx="Equal(Unsqueeze(target), class indices) And not ignore_index")
def _class_mask(b, node, names):
    return _class_mask_of(
        b,
        names[0],
        node.attrs["num_classes"],
        node.attrs.get("ignore_index", -100),
        _rank(node),
    )


@emits(
    "nll_loss_nd",
    onnx="the class mask: -ReduceSum over classes of Where(mask, logp * weight, 0); 'mean' "
    "over the summed weights of the counted targets",
)
def _nll_loss_nd(b, node, names):
    dtype = _out_dtype(node)
    rank = _rank(node)
    classes = node.inputs[0].shape[1]
    if classes is None:
        raise NotImplementedError(f"nll_loss node {node.name!r}: the number of classes is unknown")
    mask = _class_mask_of(b, names[1], classes, node.attrs.get("ignore_index", -100), rank - 1)
    logp = b.cast(names[0], dtype)
    if len(names) > 2:
        shape = b.ints([1, -1] + [1] * (rank - 2))
        weight = b.op("Reshape", [b.cast(names[2], dtype), shape], dtype=dtype)
    else:
        weight = b.const(1, dtype)
    zero = b.const(0, dtype)
    weights = b.op("Where", [mask, b.op("Expand", [weight, b.op("Shape", [logp])]), zero])
    # negated before the sum, so that an ignored target's loss is +0.0, as naivegraph's
    picked = b.op("Neg", [b.op("Mul", [logp, weights], dtype=dtype)], dtype=dtype)
    losses = _reduce(b, "ReduceSum", b.op("Where", [mask, picked, zero]), [1], False, dtype)
    reduction = node.attrs.get("reduction", "mean")
    if reduction == "none":
        return losses
    total = _reduce(b, "ReduceSum", losses, None, False, dtype)
    if reduction == "sum":
        return total
    return b.op("Div", [total, _reduce(b, "ReduceSum", weights, None, False, dtype)], dtype=dtype)


# ----------------------------------------------------------------------------------
# What has no ONNX form
# ----------------------------------------------------------------------------------
_STATE = (
    "changes a Variable's stored value when the run ends; an ONNX graph is a pure function "
    "with no state (export the new value as an output and store it yourself)"
)
ONNX_MAP.update(
    {
        "assign": NOT_EXPORTABLE(_STATE),
        "group": NOT_EXPORTABLE("runs updates for their effect and has no value of its own"),
    }
)
del _name, _onnx


def markdown_table() -> str:
    """``docs/onnx_ops.md``: every op with its ONNX form or why it has none."""
    lines = [
        "# ONNX export: one line per op",
        "",
        "Generated from `naivegraph/export/onnx_map.py` by `python -m naivegraph.export`;",
        "`tests/export/test_onnx_export.py` checks that this file is up to date.",
        "`naivegraph.export.to_onnx` (`ns.to_onnx`) exports a static graph with these mappings",
        "(opset 18); every mapping reproduces naivegraph's numpy forward, dtypes included.",
        "",
        "| op | ONNX |",
        "| --- | --- |",
    ]
    for name in sorted(OPS):
        entry = ONNX_MAP.get(name)
        if entry is None:
            text = "**missing**"
        elif isinstance(entry, NotExportable):
            text = f"not exportable: {entry.reason}"
        else:
            text = ONNX_DESCRIPTION[name]
        cell = text.replace("|", "\\|")
        lines.append(f"| `{name}` | {cell} |")
    return "\n".join(lines) + "\n"
