"""The fast layer's small tricks, each behind a seam of the core or used by the layer's
own modules; none is needed for correctness (what each saved: ``benchmarks/README.md``,
"The fast layer, module by module").

- ``paused_gc``: graphs are acyclic and freed by reference counting, so the cyclic
  collector is paused for a pass over a whole graph.
- ``is_unshared``: a gradient array nothing else refers to becomes ``.grad`` uncopied.
- ``call_quietly``, ``ignoring_fp_errors``: numpy's error state set directly, not
  through ``np.errstate``.
- ``promote``: an array meeting a Python number skips torch's promotion rule where it
  would change nothing.
- ``float_constant``: ``tensor(2.0)`` in float32 rounds with one C cast.
- ``finish``, ``filled``: a new leaf that requires grad, and ``ones`` / ``zeros``, in
  fewer calls.
- ``where``, ``nll_loss_grad``, ``log_softmax_grad``: kernels of the op table's rules,
  the same bits by fewer or cheaper numpy calls.
"""

from __future__ import annotations

import gc
import math
import os
import struct
import sys
from typing import Callable

import numpy as np

from ..dynamic import factories
from ..ops import core, table
from ..ops.core import PYTHON_INT_RANGE, _Default, default_float

#: the layer's switch, as :func:`naivegraph.fast.set_enabled` leaves it (its functions
#: read it at each call, so one kept from before a switch takes the readable way)
enabled: bool = os.environ.get("NAIVEGRAPH_FAST", "1") != "0"


# -- paused_gc ---------------------------------------------------------------------------
class paused_gc:  # lower case: used like a function, ``with fast.paused_gc():``
    """Pause Python's cyclic garbage collector for one pass over a whole graph.

    A class, not a generator-based context manager: it is entered once per backward
    pass, and a generator costs more than the pause saves on a small graph.
    """

    __slots__ = ("paused",)

    def __enter__(self) -> None:
        self.paused = enabled and gc.isenabled()
        if self.paused:
            gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self.paused:
            gc.enable()


# -- is_unshared -------------------------------------------------------------------------
def _probe(value) -> int:
    return sys.getrefcount(value)


def _count_when_unshared() -> int:
    """What ``is_unshared`` sees for a caller's local that nothing else holds, measured
    through the same number of calls: interpreters differ in the references a call adds."""
    grad = object()
    return _probe(grad)


_UNSHARED_COUNT = _count_when_unshared()


def is_unshared(value) -> bool:
    """Whether only the caller's own variable refers to ``value`` (so it may be kept
    without a copy).  Always False with the fast layer off."""
    return enabled and sys.getrefcount(value) <= _UNSHARED_COUNT


# =======================================================================================
# Dynamic-mode tricks (per-op costs of eager tensors).
# =======================================================================================

# -- quiet_numpy -------------------------------------------------------------------------
# ``np.errstate(all="ignore")`` costs ~1 us to enter and leave (Python code that builds a
# new error-state object each time): every op's forward and every VJP runs inside one, on
# 0-d arrays that is more than the arithmetic.  numpy keeps its error state in a context
# variable; setting that variable to the very object errstate would build is the same
# state, at the cost of two C calls, and a call already inside it (a VJP during backward,
# a forward inside another) sets nothing.  Without that variable (another numpy), the
# plain errstate is used.
try:
    from numpy._core._ufunc_config import _extobj_contextvar as _fp_state
    from numpy._core.umath import _make_extobj
except ImportError:  # pragma: no cover - numpy 1.x keeps its state elsewhere
    _fp_state = None

#: this trick's own switch (off: the plain errstate, as with the whole layer off)
quiet_numpy: bool = _fp_state is not None

#: the state before -> that state with every floating-point error ignored (errstate keeps
#: the buffer size and error callback of the state it replaces, so this does too)
_ignoring: dict = {}


def _ignoring_version_of(state):
    found = _ignoring.get(state)
    if found is None:
        if len(_ignoring) > 64:  # a bound, for programs that keep making new states
            _ignoring.clear()
        found = _make_extobj(all="ignore")  # built from the current (= ``state``)
        _ignoring[state] = found
        _ignoring[found] = found  # already ignoring: stays as it is
    return found


def call_quietly(fn: Callable, args: tuple, attrs: dict):
    """``fn(*args, **attrs)`` as under ``np.errstate(all="ignore")``."""
    if not (enabled and quiet_numpy):
        with np.errstate(all="ignore"):
            return fn(*args, **attrs)
    state = _fp_state.get()
    quiet = _ignoring.get(state)
    if quiet is state:
        return fn(*args, **attrs)
    token = _fp_state.set(quiet if quiet is not None else _ignoring_version_of(state))
    try:
        return fn(*args, **attrs)
    finally:
        _fp_state.reset(token)


class ignoring_fp_errors:  # lower case: used like a function, as ``np.errstate``
    """``np.errstate(all="ignore")`` for a block, the cheap way while the layer is on."""

    __slots__ = ("token", "plain")

    def __enter__(self) -> None:
        if enabled and quiet_numpy:
            self.plain = None
            self.token = _fp_state.set(_ignoring_version_of(_fp_state.get()))
        else:
            self.plain = np.errstate(all="ignore")
            self.plain.__enter__()

    def __exit__(self, *exc: object) -> None:
        if self.plain is None:
            _fp_state.reset(self.token)
        else:
            self.plain.__exit__(*exc)


# -- number_operand ----------------------------------------------------------------------
# ``y * 0.999``: torch's promotion rule (``ops.core.result_type``) ranks the operands and
# combines their categories, ~1.5 us of Python per op, to find what it always finds for
# a floating array and a Python float (or an integer array and a Python int): the
# array's own dtype, and both operands unchanged.  This says so in one test.
_KINDS_KEPT_WITH = {float: "fc", int: "fciu"}
_INT_MIN, _INT_END = PYTHON_INT_RANGE  # the Python ints torch converts


def promotes_to_itself(x, y) -> bool:
    """Whether torch's promotion leaves ``x`` and ``y`` as they are: an array and a
    Python number of a category no higher than the array's.  False when off or unsure."""
    if not enabled:
        return False
    if type(x) is np.ndarray:
        kinds = _KINDS_KEPT_WITH.get(type(y))
        return kinds is not None and x.dtype.kind in kinds and _convertible(y)
    if type(y) is np.ndarray:
        kinds = _KINDS_KEPT_WITH.get(type(x))
        return kinds is not None and y.dtype.kind in kinds and _convertible(x)
    return False


def _convertible(number) -> bool:
    """False for a Python int torch refuses (the promotion rule then raises)."""
    return type(number) is not int or _INT_MIN <= number < _INT_END


# -- float_scalar ------------------------------------------------------------------------
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_F32_MAX = float(np.finfo(np.float32).max)
_f32_struct = struct.Struct("f")  # native packing: C's cast of a double to float
_f32_pack, _f32_unpack = _f32_struct.pack, _f32_struct.unpack


def float_scalar(number: float, dtype: np.dtype):
    """``np.array(number).astype(dtype)`` for a Python float and a float32 or float64
    default dtype: a 0-d array of the bits numpy's cast gives (C's round to nearest), or
    None where the layer is off, the dtype is another, the struct module refuses or the
    float32 value is not finite (an overflow or a NaN: numpy's cast decides those)."""
    if not enabled:
        return None
    if dtype is _F64:
        return np.array(number)
    if dtype is not _F32:
        return None
    try:
        value = _f32_unpack(_f32_pack(number))[0]
    except (OverflowError, struct.error):
        return None
    if -_F32_MAX <= value <= _F32_MAX:
        return np.asarray(value, _F32)  # exact: the value is a float32
    return None


# -- masked_zero -------------------------------------------------------------------------
# ``np.where(c, 0, x)`` is how relu, its gradient and most masked VJPs zero part of an
# array (``g * mask`` would turn an infinite g into NaN).  With a scalar operand numpy's
# where takes a generic loop, several times slower than ``np.maximum`` on a large float
# array (relu in ``benchmarks/bench_dynamic.py``'s MLP step).  +0.0 is the float whose bits are
# all zero, so selecting between x and +0.0 is a bitwise AND of x's bits with a mask of
# all ones (keep) or all zeros: three passes of integer arithmetic, and the same bits as
# where's for every value, NaN, inf and -0.0 included.
_UNSIGNED_OF_SIZE = {2: np.uint16, 4: np.uint32, 8: np.uint64}

#: below this many elements np.where's single call is cheaper than three
MASKED_ZERO_MIN_SIZE = 4096


def _is_plus_zero(value) -> bool:
    """A Python 0 or +0.0 (not -0.0, whose sign bit is set; not False, a mask)."""
    if type(value) is int:
        return value == 0
    return type(value) is float and value == 0.0 and math.copysign(1.0, value) > 0


def masked_zero(condition, x, y):
    """``np.where(condition, x, y)`` when one of ``x``, ``y`` is a Python 0 and the other
    a float array of ``condition``'s shape (both C-contiguous, native byte order, at
    least ``MASKED_ZERO_MIN_SIZE`` elements); None where that does not hold or the layer
    is off.  The result is the array's dtype, as numpy's where gives with a Python 0."""
    if not enabled:
        return None
    if _is_plus_zero(x):
        values, keep_where_true = y, False
    elif _is_plus_zero(y):
        values, keep_where_true = x, True
    else:
        return None
    if not (
        type(values) is np.ndarray
        and type(condition) is np.ndarray
        and condition.dtype == np.bool_
        and values.dtype.kind == "f"
        and values.dtype.isnative
        and values.size >= MASKED_ZERO_MIN_SIZE
        and condition.shape == values.shape
        and values.flags.c_contiguous
        and condition.flags.c_contiguous
    ):
        return None
    unsigned = _UNSIGNED_OF_SIZE.get(values.dtype.itemsize)
    if unsigned is None:  # long double: no integer of its size
        return None
    mask = condition.astype(unsigned)  # 1 where the condition holds, else 0
    if keep_where_true:
        np.negative(mask, out=mask)  # 1 -> all ones, 0 -> 0 (unsigned wraps)
    else:
        np.subtract(mask, 1, out=mask)  # 1 -> 0, 0 -> all ones
    np.bitwise_and(mask, values.view(unsigned), out=mask)
    return mask.view(values.dtype)


def where(condition, x, y):
    """``np.where(condition, x, y)``, by :func:`masked_zero` where that applies."""
    found = masked_zero(condition, x, y)
    return np.where(condition, x, y) if found is None else found


# -- loss_gradients ----------------------------------------------------------------------
# The backward of ``cross_entropy`` (NllLossBackward0, then LogSoftmaxBackward0) works on
# small (N, C) arrays, where each numpy call costs more than its arithmetic, and more still
# right after an MLP's large matrix products have pushed everything out of the caches.
# nll's rule builds a one-hot mask (three calls) and scales it; log_softmax's dispatches
# two ops through the op table.  The two functions below give the same arrays with the
# same numpy arithmetic and fewer calls; each steps aside (None) where it is not sure.

#: this trick's own switch (the whole layer's switch turns it off too)
loss_gradients: bool = True

_UNSIGNED_INDEX = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def indices_below(target, classes: int) -> bool:
    """Whether every value of the integer array ``target`` lies in ``0..classes-1``, in
    one reduction: a negative index, read as an unsigned integer of its size, is at least
    2**(bits-1), so the unsigned maximum is below ``classes`` exactly when all are in range.
    False for an empty or non-integer array (the caller then takes the readable way).

    >>> import numpy as np
    >>> indices_below(np.array([0, 3]), 4), indices_below(np.array([0, -1]), 4)
    (True, False)
    """
    if type(target) is not np.ndarray or not target.size or not target.dtype.isnative:
        return False
    kind = target.dtype.kind
    if kind == "i":
        target = target.view(_UNSIGNED_INDEX[target.dtype.itemsize])
    elif kind != "u":
        return False
    return int(np.maximum.reduce(target, axis=None)) < classes


def nll_loss_grad(g, logp, target, reduction):
    """The gradient ``ops.table._nll_partial`` returns for log-probabilities of shape
    (N, C) (``logp``: their shape and dtype) and class indices ``target`` (N,): ``scale``
    at the targets and +0.0 elsewhere, the same ``where`` called directly rather than
    dispatched through the op table.  None where the layer is off, the values are not plain arrays
    (``create_graph``, static nodes) or ``reduction`` is ``'none'``."""
    if not (enabled and loss_gradients) or type(g) is not np.ndarray or g.ndim:
        return None
    shape = logp.shape
    if reduction not in ("mean", "sum") or shape is None or len(shape) != 2 or None in shape:
        return None
    if type(target) is not np.ndarray or target.shape != shape[:1]:
        return None
    return call_quietly(_nll_loss_grad, (g, shape, target, reduction), {})


def _nll_loss_grad(g, shape: tuple, target, reduction: str):
    # the scale as _nll_partial computes it (``_count`` of a known shape is max(N, 1)),
    # at the one-hot mask of ``ops.table._one_hot`` (an index out of range, written behind
    # the tensor's back, is an empty row), +0.0 elsewhere, as its ``where(hot, scale, 0.0)``
    scale = -g / max(shape[0], 1) if reduction == "mean" else -g
    return np.where(target[..., None] == np.arange(shape[1]), scale, scale.dtype.type(0))


def log_softmax_grad(g, out, dim):
    """``g - exp(out) * sum(g, dim, keepdim=True)``, log_softmax's rule, with numpy's
    ufuncs called directly (the op table's ``exp`` and ``sum`` forwards are these same
    ufuncs on a floating array) and the product and difference written into the buffer
    of ``exp``.  None where the layer is off or the values are not same-dtype floating
    arrays of one shape."""
    if not (enabled and loss_gradients) or type(g) is not np.ndarray or type(out) is not np.ndarray:
        return None
    if g.dtype != out.dtype or out.dtype.kind != "f" or g.shape != out.shape:
        return None
    if type(dim) is not int or not -out.ndim <= dim < out.ndim:
        return None
    return call_quietly(_log_softmax_grad, (g, out, dim % out.ndim), {})


def _log_softmax_grad(g, out, axis: int):
    grad = np.exp(out)
    np.multiply(grad, np.add.reduce(g, axis=(axis,), keepdims=True), out=grad)
    return np.subtract(g, grad, out=grad)


# =======================================================================================
# The versions of the core's seams that use the tricks above (``naivegraph.fast.SEAMS``).
# Each falls back to the readable function it replaces, kept here as it was at import.
# =======================================================================================
_make_tensor = factories.Tensor._make
readable_promote = core.promote
readable_float_constant = factories.float_constant
readable_float_leaf = factories.float_leaf
readable_nll_loss_grad = table.nll_loss_grad
readable_finish = factories._finish
readable_filled = factories._filled
readable_log_softmax_grad = table.log_softmax_grad


def promote(*operands) -> tuple:
    """``ops.core.promote``: the operands unchanged where :func:`promotes_to_itself`."""
    if len(operands) == 2 and promotes_to_itself(*operands):
        return operands
    return readable_promote(*operands)


def float_constant(number: float) -> np.ndarray:
    """``factories.float_constant``: :func:`float_scalar`, or the readable way."""
    array = float_scalar(number, default_float())
    return readable_float_constant(number) if array is None else array


def float_leaf(number: float, requires_grad):
    """``factories.float_leaf``: the leaf of a Python float made by one ``Tensor._make``
    (:func:`float_constant` and :func:`finish` inline) for a float32 or float64 default
    and a ``requires_grad`` of True or False; anything else (an overflow, a NaN in
    float32, another dtype or flag) the readable way."""
    if enabled and (requires_grad is True or requires_grad is False):
        dtype = _Default.float
        if dtype is _F32:
            try:
                value = _f32_unpack(_f32_pack(number))[0]
            except (OverflowError, struct.error):
                return readable_float_leaf(number, requires_grad)
            if -_F32_MAX <= value <= _F32_MAX:  # exact: the value is a float32
                return _make_tensor(np.asarray(value, _F32), requires_grad, None, 0)
        elif dtype is _F64:
            return _make_tensor(np.array(number), requires_grad, None, 0)
    return readable_float_leaf(number, requires_grad)


def table_nll_loss_grad(g, logp, target, reduction):
    """``ops.table.nll_loss_grad``: :func:`nll_loss_grad`, or the table's own rule."""
    found = nll_loss_grad(g, logp, target, reduction)
    return readable_nll_loss_grad(g, logp, target, reduction) if found is None else found


def table_log_softmax_grad(g, out, dim):
    """``ops.table.log_softmax_grad``: :func:`log_softmax_grad`, or the table's own rule."""
    found = log_softmax_grad(g, out, dim)
    return readable_log_softmax_grad(g, out, dim) if found is None else found


def finish(array, requires_grad: bool):
    """``factories._finish``: a floating leaf that requires grad made in one call
    (``Tensor._make`` with the flag, which is what the ``requires_grad`` setter leaves
    on a new leaf of a floating dtype); anything else the readable way (the setter's
    errors)."""
    if requires_grad is True and enabled and array.dtype.kind == "f":
        return factories.Tensor._make(array, True, None, 0)
    return readable_finish(array, requires_grad)


def filled(fill, shape, dtype, requires_grad, device=None):
    """``factories._filled`` for ``ones`` / ``zeros`` / ``empty``: ``np.full``'s two
    steps (an empty array, the fill) as two C calls; a fill other than a Python 0 or 1
    (whose conversion numpy may refuse, each call with its own message), or a device,
    the readable way."""
    if type(fill) is not int or fill not in (0, 1) or device is not None or not enabled:
        return readable_filled(fill, shape, dtype, requires_grad, device)
    dims = shape[0] if len(shape) == 1 and type(shape[0]) in (list, tuple) else shape
    for size in dims:  # plain ints go to numpy as they are: shape_arg's int() for the rest
        if type(size) is not int:
            dims = factories._shape_arg(shape)
            break
    try:
        array = np.empty(dims, dtype or _Default.float)
    except ValueError as error:
        raise factories.storage_overflowed(tuple(dims), error) from None
    array.fill(fill)  # an int 0 or 1: exact in every dtype, as np.full's copy casts it
    if requires_grad is False:
        return _make_tensor(array, False, None, 0)
    return finish(array, requires_grad)
