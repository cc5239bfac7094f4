"""Dynamic mode's fast layer for the commonest ops of all: ``x + y``, ``x - y``, ``x * y``,
``x / y`` with a tensor ``x`` and a same-dtype tensor or a Python number ``y`` (and
``2 + x``, ``2 * x``, which torch records as ``x + 2``, ``x * 2``: :func:`reflected`),
the negation ``-x`` (:func:`negation`), and ``x.sum()`` / ``x.mean()`` of a whole
floating tensor (:func:`reductions`).

The readable way (``Tensor.__mul__`` -> ``tensor.apply`` -> the op's forward -> torch's
promotion rule -> the ufunc, then ``tensor._record``) is general: any op, any operands,
any mode.  For these ops most of that generality is known in advance, so each operator
here builds exactly the tensor and the ``grad_fn`` node the readable path builds (same
class, same fields, saved values, version stamps, edges, weak references) in one
function, with what depends only on the op and on which operands require grad
(``needs``, what is saved, the node class) worked out once per op and pattern.  It steps
aside (returns None: the readable path runs) for anything else: another op, operands of
other dtypes or types, a complex or bool operand, anomaly mode, saved-tensor hooks,
forward-mode dual levels, and any error (the readable path then raises it, with its own
message).

Arithmetic: on 0-d float64 tensors the operator is Python's own float arithmetic (IEEE
double: the same bits as numpy's float64 loop; a division by zero raises in Python, and
the readable path then gives inf or NaN); on 0-d float32 tensors (the default dtype) it
is Python's float arithmetic rounded once to float32, which for + - * / is float32's
own arithmetic to the bit (``_F32_ROUNDING`` below says why; finite values only);
other 0-d floating tensors use numpy's scalar arithmetic (the ufunc's conversion and
rounding, at a fraction of its cost), everything else the ufunc itself, under one cheap
switch of numpy's error state.  A node's fields
are stored one by one, as ``OpNode.__init__`` stores them, while OpNode has exactly the
fields this module knows (``_BY_HAND``); a class with another field is called instead.

A negation saves nothing, so it shares its ``saved`` list and needs tuple, and its node
keeps its one edge as its input's node (:mod:`naivegraph.fast.fastnodes`).  Two more
tricks keep the million-op chain of ``benchmarks/bench_scale.py`` light:
``pause_collector`` pauses the cyclic collector while a negation allocates its output
and node (nothing is collected less, as the allocations still count, but a growing
chain is not rescanned by full collections), and ``fastnodes.shared_dead_ref`` swaps
the dead weak reference of the node two back for one shared dead reference, so a
chain's nodes keep nothing but themselves.

Switches: ``fastpath.enabled``, ``pause_collector`` (and the whole layer's).  What each
saved: ``benchmarks/README.md``, "The fast layer, module by module".
"""

from __future__ import annotations

import gc
import operator
import struct
import types
import weakref
from typing import Callable

import numpy as np

from ..dynamic import node as nodes
from ..dynamic import saved as saved_values
from ..dynamic.anomaly_mode import mode as anomaly
from ..dynamic.forward import dual
from ..dynamic.grad_mode import _state, inference_users, mark_inference
from ..ops import OPS
from ..ops.core import PYTHON_INT_RANGE, OpDef
from ..ops.methods import _NO_ATTRS
from . import fastnodes
from . import tricks as fast

#: this trick's own switch (the whole fast layer's switch turns it off too)
enabled: bool = True
#: a negation pauses the cyclic garbage collector while it records its node (below)
pause_collector: bool = True

_gc_isenabled, _gc_disable, _gc_enable = gc.isenabled, gc.disable, gc.enable

_new = object.__new__
_metas = nodes._metas  # ``node.meta_of``'s cache: (shape, dtype) -> Meta
_fp_state, _ignoring = fast._fp_state, fast._ignoring  # ``fast.call_quietly``'s state
_next_seq = nodes.next_seq
_F64 = np.dtype(np.float64)
#: the Meta of every 0-d float64 array: the one ``node.meta_of`` shares, or its equal
_META_0D_F64 = nodes.meta_of(np.zeros((), _F64))
_INT_MIN, _INT_END = PYTHON_INT_RANGE  # the Python ints torch converts
_EXACT_INT = 2**53  # Python ints up to this size are exact as float64 (numpy's conversion)
_F32 = np.dtype(np.float32)
#: the Meta of every 0-d float32 array (the lab's default dtype, as torch's)
_META_0D_F32 = nodes.meta_of(np.zeros((), _F32))
_EXACT_INT32 = 2**24  # Python ints up to this size are exact as float32
_F32_MAX = float(np.finfo(np.float32).max)
_ZERO_F32 = np.zeros((), _F32)  # copied for each 0-d float32 result
#: float64 values below this in size round to a finite float32 (MAX + half its ulp ties
#: to even, which is 2**128: inf)
_F32_ROUNDS_FINITE = 2.0**128 - 2.0**103
_f32_struct = struct.Struct("f")  # packing rounds a Python float to float32 as C casts
_f32_pack, _to_f32 = _f32_struct.pack, _f32_struct.unpack

# _F32_ROUNDING: why Python's float arithmetic gives float32's bits.  For + - * / the
# float64 result of two float32 operands, rounded once more to float32, is the correctly
# rounded float32 result: a double rounding is innocuous when the wider format has at
# least 2p + 2 bits for a p-bit narrower one (Figueroa, "When is double rounding
# innocuous?", 1995), and 53 >= 2 * 24 + 2.  That holds for + - * / and sqrt only, not
# for pow, exp and the like, and not for several operations done in float64 and rounded
# once at the end: each operator rounds its own result.  float64's wider exponent range
# keeps the intermediate finite and normal, so float32's overflow and subnormals come
# from that one rounding.  A Python float operand is first rounded to float32, as numpy
# converts it (a Python float's arithmetic on the float64 value would differ: 0.1 is not
# float32's 0.1).  Non-finite operands and results step aside: numpy's cast and error
# state have a say where they arise.

# What a subclass of Tensor may not redefine for the fast path to build what the
# readable path builds (both read these attributes straight from the instance).
_READ = (
    "_data",
    "_requires_grad",
    "grad_fn",
    "_output_nr",
    "_version_counter",
    "_version",
    "_accumulator",
    "_accumulator_ref",
)


class _Plan:
    """The per-pattern part of a node: ``needs``, which inputs are saved, the class."""

    __slots__ = ("needs", "save_x", "save_y", "cls")

    def __init__(self, op: OpDef, needs: tuple) -> None:
        saves = op.saves_for(needs)
        self.needs = needs
        self.save_x = 0 in saves
        self.save_y = 1 in saves
        # the class as the readable path finds it: x is a tensor, so its shape is no
        # Python number's (``SubBackward0``, not ``RsubBackward1``)
        self.cls = nodes.node_class(op.grad_fn_name(_NO_ATTRS, [(), ()]))


class _Spec:
    """What :func:`binary` needs to know about one op, computed once."""

    __slots__ = ("op", "ufunc", "python", "int_kinds", "plans")

    def __init__(self, op: OpDef, ufunc: Callable, python: Callable, int_kinds: str) -> None:
        self.op = op
        self.ufunc = ufunc  # what the op's forward calls when promotion changes nothing
        self.python = python  # the same arithmetic on Python floats
        self.int_kinds = int_kinds  # array kinds it takes with a Python int or a same tensor
        # plans[2 * x_requires_grad + y_kind], y_kind: 0 a number or a tensor that does
        # not require grad (told apart in _record), 1 a tensor that requires grad
        self.plans = tuple(
            _Plan(op, (x_grad, y_grad)) for x_grad in (False, True) for y_grad in (False, True)
        )


def _specs() -> dict:
    """The ops this path runs: those whose forward is the ufunc when no operand needs
    promoting (``ops.table``: ``promoted(np.add)``, ``_subtract``, ``_divide``).
    Division takes floating arrays only (integers divide as floats, a cast)."""
    table = {
        "add": (np.add, operator.add, "fiu"),
        "sub": (np.subtract, operator.sub, "fiu"),
        "mul": (np.multiply, operator.mul, "fiu"),
        "div": (np.true_divide, operator.truediv, "f"),
    }
    specs = {}
    for name, (ufunc, python, int_kinds) in table.items():
        op = OPS[name]
        # what binary() builds by hand: one edge per input, the output never saved
        assert op.edge_inputs is None and "out" not in op.saves and not op.variadic
        specs[op] = _Spec(op, ufunc, python, int_kinds)
    return specs


_SPECS: dict[OpDef, _Spec] = _specs()

#: Tensor class -> whether it reads its autograd state as Tensor does (see ``_READ``)
_plain_types: dict[type, bool] = {}


def _is_plain(cls: type) -> bool:
    found = _plain_types.get(cls)
    if found is None:
        tensor = nodes.tensor_class
        found = issubclass(cls, tensor) and not any(
            name in vars(klass)
            for klass in cls.__mro__[: cls.__mro__.index(tensor)]
            for name in _READ
        )
        _plain_types[cls] = found
    return found


def operators(readable: type) -> tuple:
    """``__add__``, ``__sub__``, ``__mul__`` and ``__truediv__`` for the Tensor class: this
    path, or ``readable``'s operator of the same name where it steps aside.

    >>> import naivegraph as ng
    >>> w = ng.tensor(0.5, requires_grad=True)
    >>> w * 0.25      # this path: the same tensor and node as the readable one
    tensor(0.1250, grad_fn=<MulBackward0>)
    >>> w * ng.tensor(2)    # an int64 tensor: promotion, so the readable path
    tensor(1., grad_fn=<MulBackward0>)
    """
    return tuple(
        _operator(_SPECS[OPS[name]], getattr(readable, dunder))
        for name, dunder in (
            ("add", "__add__"),
            ("sub", "__sub__"),
            ("mul", "__mul__"),
            ("div", "__truediv__"),
        )
    )


def reflected(radd: Callable, rmul: Callable) -> tuple:
    """``__radd__`` and ``__rmul__`` for the Tensor class: ``2 + x`` and ``2 * x`` with a
    Python number are recorded as ``x + 2`` and ``x * 2`` (the tensor first, as torch
    does), so this path builds them; anything else goes to ``radd`` / ``rmul``.

    >>> import naivegraph as ng
    >>> w = ng.tensor(0.5, requires_grad=True)
    >>> 2.0 * w
    tensor(1., grad_fn=<MulBackward0>)
    >>> (2.0 * w).grad_fn.next_functions[1]
    (None, 0)
    """
    return (
        _operator(_SPECS[OPS["add"]], radd, numbers_only=True),
        _operator(_SPECS[OPS["mul"]], rmul, numbers_only=True),
    )


def _operator(spec: _Spec, readable: Callable, numbers_only: bool = False) -> Callable:
    """``x <op> y``: one function, from the operator to the recorded node, because every
    Python call it saves is a noticeable part of an op on a 0-d tensor."""
    op, ufunc, python, int_kinds, plans = (
        spec.op,
        spec.ufunc,
        spec.python,
        spec.int_kinds,
        spec.plans,
    )
    by_hand = _BY_HAND
    quiet_numpy = _fp_state is not None
    # the last Python float operand and its float32 value (held, so ``is`` is safe)
    last_float: list = [(None, 0.0)]

    def forward(x, y):
        if not (enabled and fast.enabled) or dual.active:
            return readable(x, y)
        tensor = nodes.tensor_class
        if type(x) is not tensor and not _is_plain(type(x)):
            return readable(x, y)
        xd = x._data
        dtype = xd.dtype
        ty = type(y)
        if ty is float:
            if dtype.kind != "f":
                return readable(x, y)
            y_kind = 0  # a number
            yd = y
        elif ty is int:
            if dtype.kind not in int_kinds or not _INT_MIN <= y < _INT_END:
                return readable(x, y)  # which raises torch's error for an int too big
            y_kind = 0
            yd = y
        elif numbers_only:  # a reflected operator: the number is the second operand
            return readable(x, y)
        elif ty is tensor or _is_plain(ty):
            yd = y._data
            if yd.dtype != dtype or dtype.kind not in int_kinds or type(yd) is not np.ndarray:
                return readable(x, y)
            y_kind = 2 if y._requires_grad else 1  # a tensor (that requires grad)
        else:
            return readable(x, y)
        if type(xd) is not np.ndarray:
            return readable(x, y)

        # -- the value: what the op's forward gives, the cheapest way ----------------------
        meta = None  # the output's Meta, where it is known without asking
        if xd.ndim == 0 and (y_kind == 0 or yd.ndim == 0):
            if dtype is _F64 and (ty is not int or -_EXACT_INT <= y <= _EXACT_INT):
                try:
                    out = np.asarray(python(xd.item(), y if y_kind == 0 else yd.item()))
                except ArithmeticError:  # a division by zero: numpy's inf/NaN instead
                    return readable(x, y)
                meta = _META_0D_F64
            elif dtype is _F32 and (ty is not int or -_EXACT_INT32 <= y <= _EXACT_INT32):
                # float64 arithmetic rounded once to float32: float32's bits (_F32_ROUNDING)
                try:  # (an OverflowError, where struct checks, or a division by zero)
                    if ty is float:  # as numpy converts it: rounded to float32 first
                        seen = last_float[0]  # (number, its float32): a loop's constant
                        if seen[0] is y:
                            b = seen[1]
                        else:
                            b = _to_f32(_f32_pack(y))[0]
                            if not -_F32_MAX <= b <= _F32_MAX:
                                return readable(x, y)  # inf, NaN, or too large for float32
                            last_float[0] = (y, b)  # one store: a thread reads a whole pair
                    elif y_kind == 0:
                        b = y  # an int exact in float32
                    else:
                        b = yd.item()  # float32, exact in float64
                    value = python(xd.item(), b)  # in float64
                except ArithmeticError:  # the readable path: numpy's inf/NaN instead
                    return readable(x, y)
                if not -_F32_ROUNDS_FINITE < value < _F32_ROUNDS_FINITE:
                    return readable(x, y)  # overflow, inf, NaN: numpy's cast has a say
                out = _ZERO_F32.copy()  # np.asarray(value, float32), in fewer steps:
                out[()] = value  # the one rounding (C's cast; no underflow check)
                meta = _META_0D_F32
            elif dtype.kind == "f" and ty is not int:  # numpy's scalar arithmetic
                out = _quietly(python, xd[()], y if y_kind == 0 else yd[()])
            else:
                out = _quietly(ufunc, xd, yd)
        elif quiet_numpy and fast.quiet_numpy:  # _quietly, inline: arrays, the commonest
            state = _fp_state.get()
            quiet = _ignoring.get(state)
            token = None
            if quiet is not state:
                token = _fp_state.set(
                    quiet if quiet is not None else fast._ignoring_version_of(state)
                )
            try:
                out = ufunc(xd, yd)
            except Exception:
                out = None  # the readable path raises it, explained
            finally:
                if token is not None:
                    _fp_state.reset(token)
        else:
            out = _quietly(ufunc, xd, yd)
        if meta is None:
            if out is None:
                return readable(x, y)  # which raises the error, explained
            if type(out) is not np.ndarray:
                out = np.asarray(out)
                if out.dtype != dtype:  # numpy's scalar rules are not its arrays'
                    return readable(x, y)

        # -- the tensor --------------------------------------------------------------------
        result = _new(tensor)
        result._data = out
        result._output_nr = 0
        x_grad = x._requires_grad
        if not ((x_grad or y_kind == 2) and _state.enabled):
            result._requires_grad = False
            result.grad_fn = None
            return mark_inference(result) if inference_users[0] and _state.inference else result
        if anomaly.enabled or saved_values.hook_stack:
            return readable(x, y)  # their bookkeeping is the readable path's
        result._requires_grad = True

        # -- its node: what ``tensor._record`` builds, field for field ---------------------
        plan = plans[2 * x_grad + (y_kind == 2)]
        constants = None
        if plan.save_x:
            saved = [xd]
            counter = x._version_counter
            sources: tuple = ((0, x, counter.value if counter is not None else 0),)
        else:
            if meta is None:
                meta_x = _metas.get((xd.shape, dtype))  # node.meta_of, its cache read inline
                if meta_x is None:
                    meta_x = nodes.meta_of(xd)
                if out.shape == xd.shape and out.dtype == dtype:
                    meta = meta_x  # one Meta per (shape, dtype): the output's is x's
                saved = [meta_x]
            else:
                saved = [meta]  # both 0-d float64, or both 0-d float32
            sources = ()
        if x_grad:
            fn = x.grad_fn
            edge_x = (fn, x._output_nr) if fn is not None else (accumulator(x), 0)
        else:
            edge_x = _NO_EDGE
            constants = {0: weakref.ref(x)}
        if y_kind == 0:
            saved.append(y)
            edge_y = _NO_EDGE
        else:
            if plan.save_y:
                saved.append(yd)
                counter = y._version_counter
                sources += ((1, y, counter.value if counter is not None else 0),)
            else:
                meta_y = _metas.get((yd.shape, dtype))
                saved.append(meta_y if meta_y is not None else nodes.meta_of(yd))
            if y_kind == 2:
                fn = y.grad_fn
                edge_y = (fn, y._output_nr) if fn is not None else (accumulator(y), 0)
            else:
                edge_y = _NO_EDGE
                if constants is None:
                    constants = {}
                constants[1] = weakref.ref(y)
        if meta is None:
            meta = _metas.get((out.shape, out.dtype))
            if meta is None:
                meta = nodes.meta_of(out)
        if by_hand:  # fastnode, inline
            node = _new(plan.cls)
            node.next_functions = (edge_x, edge_y)
            node._hooks = None
            node._released = False
            node._seq = _next_seq()
            node.op = op
            node.attrs = _NO_ATTRS
            node.saved = saved
            node.saved_out = meta
            node.sources = sources
            node.needs = plan.needs
            node._constants = constants
            node.output_ref = weakref.ref(result)
        else:
            node = plan.cls(
                op, _NO_ATTRS, (edge_x, edge_y), saved, meta, sources, plan.needs, constants,
                weakref.ref(result),
            )  # fmt: skip
        result.grad_fn = node
        return result

    forward = own_code(forward)
    forward.__name__ = getattr(readable, "__name__", "forward")
    forward.__qualname__ = getattr(readable, "__qualname__", forward.__name__)
    forward.__doc__ = readable.__doc__
    return forward


_NO_EDGE = (None, 0)


def own_code(fn: Callable) -> Callable:
    """``fn`` with a code object of its own.  CPython 3.11 specialises each attribute
    read and write of a function's code for one class: the four operators share one
    body, and a node of another class at each call (``MulBackward0``, then
    ``AddBackward0``) would undo the other's specialisation at every store, leaving
    them all on the generic path (a type lookup and a subclass test each)."""
    return types.FunctionType(
        fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__
    )


def _quietly(fn: Callable, a, b):
    """``fn(a, b)`` under numpy's error state "ignore everything" (``fast.call_quietly``),
    or None on any error: the readable path then raises it, explained."""
    try:
        if not fast.quiet_numpy:
            return fast.call_quietly(fn, (a, b), _NO_ATTRS)
        state = _fp_state.get()  # fast.call_quietly, inline
        quiet = _ignoring.get(state)
        if quiet is state:
            return fn(a, b)
        token = _fp_state.set(quiet if quiet is not None else fast._ignoring_version_of(state))
        try:
            return fn(a, b)
        finally:
            _fp_state.reset(token)
    except Exception:
        return None


def _slots(cls: type) -> set:
    return {name for klass in cls.__mro__ for name in vars(klass).get("__slots__", ())}


#: An operator sets a node's fields itself, as ``OpNode.__init__`` does, while OpNode has
#: exactly the fields it knows (``_metadata`` is made on first use); with any other
#: field it calls the class instead.
_BY_HAND = _slots(nodes.OpNode) == {
    *("next_functions", "_hooks", "_released", "_seq", "op", "attrs", "saved", "saved_out"),
    *("sources", "needs", "_constants", "output_ref", "_metadata", "__weakref__"),
}

#: A leaf's AccumulateGrad is made field by field likewise, while it has exactly the
#: fields ``AccumulateGrad.__init__`` sets and the leaf's ``_accumulator`` is the core's.
_ACCUMULATOR_BY_HAND = _slots(nodes.AccumulateGrad) == {
    *("next_functions", "_hooks", "_released", "_seq", "_metadata", "__weakref__"),
    "variable",
}
_AccumulateGrad = nodes.AccumulateGrad
_core_accumulator = nodes.tensor_class._accumulator


def accumulator(leaf):
    """``leaf._accumulator()``, in one call where a new AccumulateGrad is made by hand
    (its ``__init__`` and ``Node.__init__`` are two more calls, on every leaf's first
    use in a graph)."""
    ref = leaf._accumulator_ref
    found = ref() if ref is not None else None
    if found is not None:
        return found
    if not _ACCUMULATOR_BY_HAND or type(leaf)._accumulator is not _core_accumulator:
        return leaf._accumulator()
    found = _new(_AccumulateGrad)
    found.next_functions = ()
    found._hooks = None
    found._released = False
    found._seq = _next_seq()
    found.variable = leaf
    leaf._accumulator_ref = weakref.ref(found)
    return found


def fastnode(cls, op, attrs, edges, saved, saved_out, sources, needs, constants, output_ref):
    """``cls(op, attrs, edges, ...)``: the node ``OpNode.__init__`` makes, its fields
    stored here without that call where the class has exactly these fields."""
    if not _BY_HAND:
        return cls(op, attrs, edges, saved, saved_out, sources, needs, constants, output_ref)
    node = _new(cls)
    node.next_functions = edges
    node._hooks = None
    node._released = False
    node._seq = _next_seq()
    node.op = op
    node.attrs = attrs
    node.saved = saved
    node.saved_out = saved_out
    node.sources = sources
    node.needs = needs
    node._constants = constants
    node.output_ref = output_ref
    return node


# -- negation: ``-x`` and ``x.neg()`` -------------------------------------------------------
#: meta -> the one ``saved`` list ``[meta]`` every negation node with that input shares.
#: A node changes its ``saved`` only at the positions in its ``sources`` (``release``,
#: ``saved.pack_node``; ``_current_inputs`` copies first), and a negation saves no
#: tensor: its list is never written, so one per (shape, dtype) serves them all.
_saved_meta: dict = {}


def _saved_list(meta) -> list:
    found = _saved_meta.get(meta)
    if found is None:
        if len(_saved_meta) > 4096:  # the bound of ``node.meta_of``'s own cache
            _saved_meta.clear()
        found = _saved_meta[meta] = [meta]
    return found


def negation(readable: type) -> tuple:
    """``__neg__`` and ``neg`` for the Tensor class: this path, or ``readable``'s where it
    steps aside (a bool or complex tensor, anomaly mode, hooks, dual levels).

    >>> import naivegraph as ng
    >>> w = ng.tensor(0.5, requires_grad=True)
    >>> -w
    tensor(-0.5000, grad_fn=<NegBackward0>)
    >>> (-w).grad_fn.saved is (-w).grad_fn.saved    # nothing saved: one shared list
    True
    """
    return _negation(readable.__neg__, "__neg__"), _negation(readable.neg, "neg")


def without_history(data: np.ndarray):
    """A tensor of ``data`` with no history: what an op returns when nothing requires grad."""
    result = _new(nodes.tensor_class)
    result._data = data
    result._output_nr = 0
    result._requires_grad = False
    result.grad_fn = None
    return mark_inference(result) if inference_users[0] and _state.inference else result


def _negation(readable: Callable, name: str) -> Callable:
    """``-x``: what ``tensor.apply`` builds for op ``neg`` (which saves nothing), here."""
    op = OPS["neg"]
    needs = (True,)
    # what neg() builds by hand: one edge, nothing saved whatever needs a gradient
    assert op.edge_inputs is None and not op.saves_for(needs) and op.differentiable
    cls = nodes.node_class(op.grad_fn_name(_NO_ATTRS, [()]))
    compact = _BY_HAND and cls is fastnodes.NEGATION  # its edge stored as its node alone
    dead = fastnodes.DEAD_REF
    saved_0d_f64 = _saved_list(_META_0D_F64)
    saved_0d_f32 = _saved_list(_META_0D_F32)

    def neg(x):
        if not (enabled and fast.enabled) or dual.active:
            return readable(x)
        tensor = nodes.tensor_class
        if type(x) is not tensor and not _is_plain(type(x)):
            return readable(x)
        xd = x._data
        if type(xd) is not np.ndarray:
            return readable(x)
        dtype = xd.dtype
        if dtype is _F64 and xd.ndim == 0:
            out = np.asarray(-xd.item())  # a sign flip: numpy's bits, NaN's sign too
            meta = _META_0D_F64
        elif dtype is _F32 and xd.ndim == 0:
            value = xd.item()  # exact in float64, and back
            if -_F32_MAX <= value <= _F32_MAX:
                out = np.asarray(-value, _F32)
            else:  # inf or NaN (whose float64 copy would lose a signalling NaN's bits)
                out = np.asarray(np.negative(xd))
            meta = _META_0D_F32
        elif dtype.kind in "fiu":  # bool raises and complex refuses grad: readable
            out = np.negative(xd)  # a sign flip or a wrap-around: no error state
            if type(out) is not np.ndarray:
                out = np.asarray(out)
            meta = None
        else:
            return readable(x)

        if not (x._requires_grad and _state.enabled):
            return without_history(out)
        if anomaly.enabled or saved_values.hook_stack:
            return readable(x)
        if meta is None:
            meta = nodes.meta_of(xd)  # the output's too: the same shape and dtype
            saved = _saved_list(meta)
        elif meta is _META_0D_F64:
            saved = saved_0d_f64
        else:
            saved = saved_0d_f32
        paused = pause_collector and _gc_isenabled()  # fast.paused_gc, for this call only
        if paused:
            _gc_disable()
        try:
            result = _new(tensor)
            result._data = out
            result._output_nr = 0
            result._requires_grad = True
            fn = x.grad_fn
            if fn is None:
                fn, output_nr = accumulator(x), 0
            else:
                output_nr = x._output_nr
            if compact and fastnodes.on and output_nr == 0:
                node = _new(cls)  # fastnode's stores, the edge as its node alone (fastnodes)
                node._edges = fn
                node._hooks = None
                node._released = False
                node._seq = _next_seq()
                node.op = op
                node.attrs = _NO_ATTRS
                node.saved = saved
                node.saved_out = meta
                node.sources = ()
                node.needs = needs
                node._constants = None
                node.output_ref = weakref.ref(result)
                if type(fn) is cls and fastnodes.shared_dead_ref:
                    before = fn._edges  # the node before x's: its output is often gone
                    if type(before) is cls:
                        ref = before.output_ref
                        if ref is not dead and ref() is None:
                            before.output_ref = dead  # one dead reference for all (fastnodes)
            else:
                node = fastnode(
                    cls, op, _NO_ATTRS, ((fn, output_nr),), saved, meta, (), needs, None,
                    weakref.ref(result),
                )  # fmt: skip
            result.grad_fn = node
        finally:
            if paused:
                _gc_enable()
        return result

    neg.__name__ = name
    neg.__qualname__ = getattr(readable, "__qualname__", name)
    neg.__doc__ = readable.__doc__
    return neg


# -- whole-tensor sum and mean: ``x.sum()`` and ``x.mean()`` --------------------------------
def reductions(readable: type) -> tuple:
    """``sum`` and ``mean`` for the Tensor class: with no arguments, on a non-empty
    floating tensor, this path; anything else (a ``dim``, ``keepdim``, an integer or
    empty tensor, anomaly mode, hooks, dual levels) ``readable``'s method of that name.

    >>> import naivegraph as ng
    >>> w = ng.tensor([0.5, 1.5], requires_grad=True)
    >>> w.mean()
    tensor(1., grad_fn=<MeanBackward0>)
    >>> w.sum().grad_fn.attrs
    {'dim': None, 'keepdim': False}
    """
    return _whole(OPS["sum"], readable.sum, False), _whole(OPS["mean"], readable.mean, True)


def _whole_sum(x):
    # ``ops.table._sum`` with dim=None on a floating array: the ufunc's reduce, no dtype
    return np.add.reduce(x, axis=None, keepdims=False)


def _whole_mean(x):
    # ``ops.table._mean`` on a non-empty floating array: that sum over the count
    return np.add.reduce(x, axis=None, keepdims=False) / x.size


def _whole(op: OpDef, readable: Callable, mean: bool) -> Callable:
    """``x.sum()`` / ``x.mean()``: what ``tensor.apply`` builds, here (nothing saved)."""
    needs = (True,)
    # what _whole() builds by hand: one edge, nothing saved, the class of a whole reduction
    assert op.edge_inputs is None and not op.saves_for(needs) and op.differentiable
    cls = nodes.node_class(op.grad_fn_name({"dim": None, "keepdim": False}, [()]))
    value = _whole_mean if mean else _whole_sum

    def whole(x, dim=None, keepdim=False, **options):
        if dim is not None or keepdim is not False or options or not (enabled and fast.enabled):
            return readable(x, dim, keepdim, **options)  # e.g. sum(dtype=...)
        tensor = nodes.tensor_class
        if dual.active or type(x) is not tensor and not _is_plain(type(x)):
            return readable(x)
        xd = x._data
        if type(xd) is not np.ndarray or xd.dtype.kind != "f" or not xd.size:
            return readable(x)
        if fast.quiet_numpy:  # fast.call_quietly, inline
            state = _fp_state.get()
            quiet = _ignoring.get(state)
            if quiet is state:
                out = value(xd)
            else:
                token = _fp_state.set(
                    quiet if quiet is not None else fast._ignoring_version_of(state)
                )
                try:
                    out = value(xd)
                finally:
                    _fp_state.reset(token)
            out = np.asarray(out)
        else:
            out = np.asarray(fast.call_quietly(value, (xd,), _NO_ATTRS))
        result = _new(tensor)
        result._data = out
        result._output_nr = 0
        if not (x._requires_grad and _state.enabled):
            result._requires_grad = False
            result.grad_fn = None
            return mark_inference(result) if inference_users[0] and _state.inference else result
        if anomaly.enabled or saved_values.hook_stack:
            return readable(x)
        result._requires_grad = True
        fn = x.grad_fn
        edge = (fn, x._output_nr) if fn is not None else (accumulator(x), 0)
        meta_x = _metas.get((xd.shape, xd.dtype))  # node.meta_of, its cache read inline
        if meta_x is None:
            meta_x = nodes.meta_of(xd)
        saved = _saved_meta.get(meta_x)  # nothing saved: one list per (shape, dtype)
        if saved is None:
            saved = _saved_list(meta_x)
        dtype = out.dtype
        meta = (
            _META_0D_F64 if dtype is _F64 else _META_0D_F32 if dtype is _F32 else nodes.meta_of(out)
        )
        attrs = {"dim": None, "keepdim": False}  # the node's own, as the method's call makes
        node = fastnode(cls, op, attrs, (edge,), saved, meta, (), needs, None, weakref.ref(result))
        result.grad_fn = node
        return result

    whole = own_code(whole)
    whole.__name__ = readable.__name__
    whole.__qualname__ = readable.__qualname__
    whole.__doc__ = readable.__doc__
    return whole
