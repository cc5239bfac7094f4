"""The op table: one entry per primitive, shared by dynamic and static mode.

An entry holds a numpy ``forward`` and, for each input, a *partial VJP*: a function
``(g, *inputs, out, **attrs) -> gradient for that input``.  Partials are written with
the library's own operators and the dispatching functions of :mod:`naivegraph.ops`
(``ops.exp``, ``ops.expand``, ...), never with ``np.*`` directly, so the same rule runs

* on numpy arrays: the fast path of a plain ``backward()``;
* on dynamic tensors: ``create_graph=True`` builds a graph of the backward pass;
* on static nodes: ``ns.gradients`` adds the backward pass to the graph symbolically.

Every entry declares in ``saves`` which values its rules read (see :func:`defop`).
Inputs (and the output) it does not list reach a rule as a :class:`Meta` that only
knows ``shape`` and ``dtype``, and reading a Meta's value raises: what is not saved
cannot be read, which is what makes in-place checks and memory release exact.
"""

from __future__ import annotations

import functools
import os
import sys
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .names import backward_name_of
from .shapes import same_shape, unknown_shape

Partial = Callable[..., Any]

#: name -> OpDef.  Filled by the ``defop`` calls in the sibling modules.
OPS: dict[str, "OpDef"] = {}
#: The names the library defines itself (filled once the table is imported): an op
#: defined from outside may be redefined, a built-in one never.
BUILT_IN: set[str] = set()


class UnsavedValueError(RuntimeError):
    """A gradient rule read the value of an input (or the output) that its op's
    ``saves`` does not list: backward kept only that value's shape and dtype."""

    def __init__(self, message: str, meta: "Meta | None" = None, op: str | None = None) -> None:
        super().__init__(message)
        self.meta = meta  # the stand-in that was read, to tell which value it was
        self.op = op  # the op whose rule read it, once the message names it


class Meta:
    """Shape and dtype of a value that a VJP rule did not ask to keep.

    Its value cannot be read: arithmetic on it, or handing it to numpy, raises
    :class:`UnsavedValueError`, so a rule that reads a value its op does not declare
    in ``saves`` fails at once instead of reading a value that may have changed.
    """

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple, dtype=np.float64) -> None:
        self.shape = shape
        self.dtype = dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"Meta(shape={self.shape}, dtype={np.dtype(self.dtype).name})"

    def _value_read(self, *args: Any, **kwargs: Any):
        raise UnsavedValueError(
            f"a gradient rule read the value of {self!r}, an input or output its op does not "
            "save: backward kept only its shape and dtype. List every value a rule reads in "
            "the op's defop(..., saves=...)",
            self,
        )

    __array__ = __float__ = __int__ = __bool__ = __len__ = __iter__ = __getitem__ = _value_read
    __neg__ = __pos__ = __abs__ = __invert__ = _value_read
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _value_read
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = _value_read
    __mod__ = __rmod__ = __pow__ = __rpow__ = __matmul__ = __rmatmul__ = _value_read
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = _value_read
    __lt__ = __le__ = __gt__ = __ge__ = _value_read


@dataclass(frozen=True, eq=False)
class OpDef:
    """One primitive: numpy forward, partial VJPs, and what backward must keep."""

    name: str
    forward: Callable[..., np.ndarray]
    partials: tuple[Partial | None, ...] | None  # one per input; None = no gradient
    backward_name: str | Callable[[dict, Sequence[tuple]], str]  # PyTorch's grad_fn name
    saves: frozenset = frozenset()  # input positions and/or "out": every value any rule reads
    # per input, the values the partial for its gradient reads (None: no partial); None
    # for an op without partials (a vjp_all rule reads all of ``saves``)
    saves_by_input: tuple[frozenset | None, ...] | None = None
    elementwise: bool = False  # broadcasting op: gradients are summed back to shape
    differentiable: bool = True
    variadic: bool = False  # takes a list of tensors (cat, stack)
    commutative: bool = False  # operand order does not matter (drawings label it otherwise)
    stateful: bool = False  # writes state (assign): never folded, merged or run for display
    vjp_all: Callable[..., Sequence[Any]] | None = None  # variadic rule: all grads at once
    # static shape inference where probing stand-in sizes cannot tell: (inputs, attrs) ->
    # (shape, dtype), as control flow's ops have their infer_output method
    shape_rule: Callable[..., tuple] | None = None
    doc: str = ""
    attrs_doc: dict = field(default_factory=dict)
    _saves_by_needs: dict = field(default_factory=dict, repr=False)

    @functools.cached_property
    def edge_inputs(self) -> tuple[int, ...] | None:
        """The input positions a gradient can ever reach, or None when it is all of them.

        An input with no partial (``where``'s condition, ``nll_loss``'s targets) gets no
        edge in a recorded node's ``next_functions``, as in PyTorch.
        """
        if self.partials is None or all(p is not None for p in self.partials):
            return None
        return tuple(i for i, p in enumerate(self.partials) if p is not None)

    def grad_fn_name(self, attrs: dict, shapes: Sequence[tuple]) -> str:
        """PyTorch's name for this op's backward node (some depend on attrs/shapes)."""
        name = self.backward_name
        return name(attrs, shapes) if callable(name) else name

    def saves_input(self, i: int) -> bool:
        return i in self.saves

    def saves_for(self, needs: tuple) -> frozenset:
        """What backward keeps when only the inputs in ``needs`` want a gradient: what
        their partials read, as declared in ``saves``, and the output whenever a rule
        reads it (keeping its own result copies nothing).

        As torch: ``x * 3`` keeps no copy of ``x`` (only d/d3 would read it), so a
        later in-place write to ``x`` does not break backward.
        """
        try:
            return self._saves_by_needs[needs]
        except KeyError:
            pass
        kept = self.saves
        if self.saves_by_input is not None:
            read = {"out"} & self.saves
            for reads, need in zip(self.saves_by_input, needs):
                if need and reads is not None:
                    read |= reads
            kept = frozenset(read)
        self._saves_by_needs[needs] = kept
        return kept

    @property
    def saves_out(self) -> bool:
        return "out" in self.saves

    def pullback(
        self,
        g,
        inputs: Sequence,
        out,
        attrs: dict,
        needs: Sequence[bool],
        shapes: Sequence[tuple] | None = None,
    ) -> list:
        """Gradients for every input (None where not needed), summed back to shape.

        ``inputs``/``out`` are values or :class:`Meta`; ``g`` is the output gradient.
        The types decide where the arithmetic happens (numpy, dynamic, static).
        ``shapes`` defaults to the inputs' own shapes.
        """
        grads = _quiet_partials(self, g, inputs, out, attrs, needs)
        if self.elementwise:
            for i, gi in enumerate(grads):
                if gi is not None:
                    shape = inputs[i].shape if shapes is None else shapes[i]
                    if gi.shape != shape or (
                        shape is not None
                        and None in shape  # a static graph's unknown size
                        and may_broadcast(
                            [getattr(x, "shape", ()) for x in inputs] if shapes is None else shapes,
                            i,
                        )
                    ):
                        grads[i] = (
                            OPS["sum_to_like"].dispatch(gi, inputs[i])
                            if shape is None or None in shape  # static: sizes known at run time
                            else OPS["sum_to"].dispatch(gi, shape=tuple(shape))
                        )
        for i, gi in enumerate(grads):
            if gi is not None:
                grads[i] = _in_dtype_of(gi, inputs[i])
        return grads

    def dispatch(self, *args, **attrs):
        """Run this op on whatever ``args`` are: arrays, tensors or static nodes."""
        return call(self, args, attrs)


def may_broadcast(shapes: Sequence, i: int) -> bool:
    """Whether input ``i``, whose shape the static graph knows only in part, may be
    stretched by another input at run time although the shapes look alike: ``(None, 3)``
    times ``(None, 1)`` is ``(None, 3)``, yet fed batches 1 and 4 it is ``(4, 3)``.  Then
    the gradient is summed to ``i``'s run-time shape (known shapes never need this)."""
    shape = shapes[i]
    for j, other in enumerate(shapes):
        if j != i:
            if other is None:
                return True
            for a, b in zip(reversed(shape), reversed(tuple(other))):
                if a is None and b != 1:  # None against None or a size: may stretch i
                    return True
    return False


def summed_to(g, like, shape=None):
    """``g`` summed back to the shape of ``like`` (or ``shape``) after broadcasting; ``g``
    itself when it already fits.  A plain number ``like`` has shape ().

    A static graph may know only part of a shape (``None`` for a size fed at run time):
    then the sum reads the target shape from ``like``'s value when the graph runs.
    """
    if shape is None:
        shape = getattr(like, "shape", ())
    if same_shape(g.shape, shape):
        return g
    if unknown_shape(shape):
        return OPS["sum_to_like"].dispatch(g, like)
    return OPS["sum_to"].dispatch(g, shape=tuple(shape))


def _in_dtype_of(grad, value):
    """``grad`` in the floating dtype of the input ``value`` it belongs to, as torch's
    engine casts: a float32 input gets a float32 gradient even where its op promoted
    it against a float64 operand."""
    want = getattr(value, "dtype", None)
    have = getattr(grad, "dtype", None)
    if want is None or have is None or want == have or np.dtype(want).kind not in "fc":
        return grad
    if isinstance(grad, (np.ndarray, np.generic)):
        return np.asarray(grad).astype(want)
    return OPS["to_copy"].dispatch(grad, dtype=np.dtype(want))


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def warn_at_caller(message: str) -> None:
    """A UserWarning reported at the first frame outside naivegraph, where torch's
    (raised in C++) points: the learner's own line, not the op table's."""
    frame: Any = sys._getframe(1)
    level = 2  # stacklevel 1 is this function, 2 its caller
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR + os.sep):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, UserWarning, stacklevel=level)


def call_quietly(fn: Callable, args: tuple, attrs: dict) -> Any:
    """``fn(*args, **attrs)`` with numpy's floating-point warnings off (a seam: the fast
    layer sets the same error state more cheaply)."""
    with np.errstate(all="ignore"):
        return fn(*args, **attrs)


def quiet(forward: Callable) -> Callable:
    """``forward`` without numpy's RuntimeWarnings (divide by zero, invalid value,
    overflow): torch is silent there and returns inf/NaN, and a warning would point the
    learner at naivegraph's internals rather than at their own line."""

    # A plain function, not numpy's errstate decorator: a frame inside numpy would hide
    # the user's line from the static nodes built inside (they record where they were made).
    @functools.wraps(forward)
    def silent(*args: Any, **attrs: Any) -> Any:
        return call_quietly(forward, args, attrs)

    if isinstance(forward, np.ufunc):
        silent.ufunc = forward  # type: ignore[attr-defined]  # takes out= itself (wraps copied the marks of functions)
    return silent


@quiet  # inf * 0 inside a rule is NaN in torch too, silently
def _quiet_partials(
    op: OpDef, g, inputs: Sequence, out, attrs: dict, needs: Sequence[bool]
) -> list:
    """Every needed partial of ``op`` (None elsewhere), before summing back to shape."""
    if op.vjp_all is not None:
        return list(op.vjp_all(g, list(inputs), out, needs, **attrs))
    grads = [None] * len(needs)
    for i, (partial, need) in enumerate(zip(op.partials or (), needs)):
        if need and partial is not None:
            try:
                grads[i] = partial(g, *inputs, out, **attrs)
            except UnsavedValueError as error:
                raise undeclared_read(op, i, error, partial, g, (*inputs, out), attrs) from None
    return grads


_backend_by_type: dict[type, Callable | None] = {}


def _backend_of(args) -> Callable | None:
    found = None
    for a in args:
        kind = type(a)
        try:
            apply = _backend_by_type[kind]
        except KeyError:  # first time this type is seen: ask the class once
            apply = _backend_by_type[kind] = getattr(kind, "_ng_apply", None)
        if apply is None and (kind is list or kind is tuple):
            apply = _backend_of(a)
        if apply is not None:
            if found is not None and apply is not found:
                raise mixed_modes_error(args)
            found = apply
    return found


def mixed_modes_error(args) -> TypeError:
    """Operands of two backends (a dynamic tensor and a static node): they cannot mix."""
    kinds = " and ".join(dict.fromkeys(type(a).__name__ for a in args if hasattr(a, "_ng_apply")))
    return TypeError(
        f"dynamic tensors and static graph nodes do not mix (got {kinds}): a static node has "
        f"no value until its graph runs, a tensor has one now. Bring a tensor's values into "
        f"the graph explicitly with ns.constant(t.numpy()), or use dynamic ops throughout"
    )


def call(op: OpDef, args: tuple, attrs: dict):
    """Dispatch ``op`` to the backend that owns one of ``args``, else numpy.

    A backend is any class with a ``_ng_apply(op, args, attrs)`` static method: the
    dynamic ``Tensor`` and the static ``Node`` register themselves that way, so this
    module never imports them.
    """
    apply = _backend_of(args)
    if apply is not None:
        return apply(op, args, attrs)
    return op.forward(*args, **attrs)


def defop(
    name: str,
    forward: Callable,
    partials: Sequence[Partial | None] | None = None,
    *,
    backward: str | Callable[[dict, Sequence[tuple]], str] | None = None,
    saves: Sequence | Mapping[int, Sequence] | None = None,
    elementwise: bool = False,
    differentiable: bool = True,
    variadic: bool = False,
    commutative: bool = False,
    stateful: bool = False,
    vjp_all: Callable | None = None,
    shape_rule: Callable | None = None,
    doc: str = "",
    replace: bool = False,
) -> OpDef:
    """Add one primitive to the table and return it.

    The library's own ops are the ``defop`` calls of :mod:`naivegraph.ops.table`; code
    outside the library adds one the same way, and :func:`op_function` then gives the
    function that runs it on arrays, dynamic tensors and static nodes alike.  Write the
    partials with operators and ``F.<op>``, not ``np.*``, so that they differentiate
    nodes and tensors too.  ``replace=True`` redefines an op added from outside (a
    notebook cell run twice); a built-in op is never replaced.

    ``saves`` declares the values the rules read; an op with a gradient must say it.
    A value is an input position (``0``, ``1``, ...) or ``"out"``, the op's result:

    * a tuple, ``saves=(0, "out")``: every partial may read these;
    * a dict from input position to a tuple, ``saves={0: (1,), 1: (0,)}`` for ``x * y``:
      the gradient of ``x`` reads ``y``, that of ``y`` reads ``x``.  A node then keeps
      only what the gradients it must compute read (``x * w`` with only ``w`` requiring
      grad keeps ``x`` alone, as torch), so the other operand may change in place;
    * ``saves=()``: no rule reads a value.

    The output, once read by any rule, is kept whenever the node is.  A value not
    declared reaches a rule as a :class:`Meta` that knows only ``shape`` and
    ``dtype``; reading its value raises an error that says what to declare.

    >>> import numpy as np, naivegraph as ng
    >>> from naivegraph.ops import OPS, F, defop, op_function
    >>> _ = defop("softplus_demo", lambda x: np.logaddexp(0.0, x),
    ...           [lambda g, x, out: g * F.sigmoid(x)], saves=(0,), elementwise=True)
    >>> softplus = op_function("softplus_demo")
    >>> x = ng.tensor([0.0], dtype=ng.float64, requires_grad=True)
    >>> y = softplus(x)
    >>> y.backward(ng.ones_like(y)); y.grad_fn.name(), x.grad.tolist()
    ('SoftplusDemoBackward0', [0.5])
    >>> defop("mul", np.multiply, replace=True)
    Traceback (most recent call last):
    ...
    ValueError: op 'mul' is built into naivegraph and cannot be replaced; give yours another name
    >>> del OPS["softplus_demo"]  # leave the table as the library defines it
    """
    if name in BUILT_IN:
        if replace:
            raise ValueError(
                f"op {name!r} is built into naivegraph and cannot be replaced; "
                "give yours another name"
            )
        raise ValueError(f"op {name!r} is defined twice; every op has exactly one entry")
    if name in OPS and not replace:
        raise ValueError(
            f"op {name!r} is defined twice; every op has exactly one entry "
            "(replace=True redefines an op of your own)"
        )
    if backward is None:
        backward = backward_name_of(name)  # torch's naming lives in names.py
    kept, by_input = _declared_saves(name, partials, vjp_all, saves)
    if partials is not None and BUILT_IN:  # from outside: a wrong saves says what to write
        partials = [_checked(name, i, p) for i, p in enumerate(partials)]
    op = OpDef(
        name=name,
        forward=quiet(forward),
        partials=tuple(partials) if partials is not None else None,
        backward_name=backward,
        saves=kept,
        saves_by_input=by_input,
        elementwise=elementwise,
        differentiable=differentiable and (partials is not None or vjp_all is not None),
        variadic=variadic,
        commutative=commutative,
        stateful=stateful,
        vjp_all=vjp_all,
        shape_rule=shape_rule,
        doc=doc or (forward.__doc__ or ""),
    )
    OPS[name] = op
    return op


def _declared_saves(
    name: str, partials, vjp_all, saves
) -> tuple[frozenset, tuple[frozenset | None, ...] | None]:
    """``saves`` checked: (every value kept, per input what its partial reads)."""
    if saves is None:
        if partials is None and vjp_all is None:
            return frozenset(), None  # no gradient, nothing to read
        raise TypeError(
            f"defop({name!r}, ...) needs saves=: the values its gradient rules read, by input "
            'position (0, 1, ...) and "out" for the result. Write saves=(0,) if a rule reads '
            'its first input, saves=("out",) if it reads the result, saves=() if it reads '
            "no value (shapes and dtypes always reach it)"
        )
    count = None if partials is None else len(partials)
    if isinstance(saves, Mapping):
        if partials is None:
            raise TypeError(
                f"defop({name!r}, ...): saves as a dict names what each input's partial reads; "
                "a rule for all inputs at once (vjp_all) gives one tuple, e.g. saves=(0,)"
            )
        wanted = [i for i, p in enumerate(partials) if p is not None]
        if sorted(saves) != wanted:
            raise ValueError(
                f"defop({name!r}, ...): saves as a dict has one entry per input with a partial, "
                f"{wanted}, saying what that gradient reads (e.g. {{{wanted[0]}: ()}} for one "
                f"that reads no value); got keys {sorted(saves, key=str)}"
            )
        by_input = tuple(
            _values(name, saves[i], count) if p is not None else None
            for i, p in enumerate(partials)
        )
        return frozenset().union(*(r for r in by_input if r is not None)), by_input
    kept = _values(name, saves, count)
    if partials is None:
        return kept, None
    return kept, tuple(kept if p is not None else None for p in partials)


def _values(name: str, values, count: int | None) -> frozenset:
    """A declared tuple of values, each an input position or ``"out"``."""
    if isinstance(values, (str, int)):
        values = (values,)
    found = frozenset(values)
    for v in found:
        known = v == "out" or (
            isinstance(v, int)
            and not isinstance(v, bool)
            and v >= 0
            and (count is None or v < count)
        )
        if not known:
            inputs = "an input position" if count is None else f"an input position 0..{count - 1}"
            raise ValueError(
                f'defop({name!r}, ...): saves lists {v!r}, which is neither {inputs} nor "out"'
            )
    return found


def _checked(name: str, i: int, partial: Partial | None) -> Partial | None:
    """``partial`` of an op from outside, raising :func:`undeclared_read`'s error (which
    names the op and what to declare) instead of :class:`Meta`'s bare one."""
    if partial is None:
        return None

    @functools.wraps(partial)
    def checked(g, *rest, **attrs):
        try:
            return partial(g, *rest, **attrs)
        except UnsavedValueError as error:
            raise undeclared_read(OPS[name], i, error, partial, g, rest, attrs) from None

    return checked


def _spelled(values) -> str:
    """A declared tuple as it is written in a defop: ``(0, "out")``."""
    items = sorted(values, key=lambda v: (isinstance(v, str), v))
    inner = ", ".join('"out"' if v == "out" else str(v) for v in items)
    return f"({inner},)" if len(items) == 1 else f"({inner})"


def _value_read(error: UnsavedValueError, partial: Partial, g, values, attrs) -> list:
    """Which of ``values`` (the inputs, then the output) the partial read: run again
    with a stand-in of its own for each (backward shares one Meta per shape and dtype)."""
    probes = [Meta(v.shape, v.dtype) if isinstance(v, Meta) else v for v in values]
    try:
        partial(g, *probes, **attrs)
    except UnsavedValueError as again:
        error = again
    except Exception:  # the second run failed otherwise: report the first error as it is
        probes = list(values)
    return ["out" if j == len(values) - 1 else j for j, v in enumerate(probes) if v is error.meta]


def undeclared_read(
    op: OpDef, i: int, error: UnsavedValueError, partial: Partial, g, values, attrs: dict
) -> Exception:
    """The error for ``op``'s partial of input ``i`` reading a value ``saves`` does not
    declare for it (``values``: the inputs, then the output): which value it was, and
    the declaration to write."""
    if error.op is not None:
        return error  # already says it all (the rule of an op from outside)
    read = _value_read(error, partial, g, values, attrs)
    if not read:  # a Meta made inside the rule: the plain message is all there is
        return error
    named = " or ".join("the output" if v == "out" else f"input {v}" for v in read)
    by_input = op.saves_by_input or ()
    if len({r for r in by_input if r is not None}) > 1:
        entries = ", ".join(
            f"{j}: {_spelled(r | set(read) if j == i else r)}"
            for j, r in enumerate(by_input)
            if r is not None
        )
        declaration = f"saves={{{entries}}}"
    else:
        declaration = f"saves={_spelled(op.saves | set(read))}"
    return UnsavedValueError(
        f"op {op.name!r}: the partial for input {i} reads the value of {named}, which the "
        f"op's saves do not declare for it, so backward kept only its shape and dtype. "
        f"Declare every value a rule reads: defop({op.name!r}, ..., {declaration})",
        error.meta,
        op.name,
    )


def op_function(name: str) -> Callable:
    """A module-level function ``f(*args, **attrs)`` that dispatches op ``name``."""
    op = OPS[name]

    def function(*args, **attrs):
        return call(op, args, attrs)

    function.__name__ = name
    function.__qualname__ = name
    function.__doc__ = op.doc
    return function


# ----------------------------------------------------------------------------------
# Type promotion: PyTorch's rule, in one place for both modes
# ----------------------------------------------------------------------------------
class _Default:
    """What a Python float (or a division of integers, or exp of an integer) becomes in
    both modes: torch's float32 unless ``ng.set_default_dtype`` changed it.  Process-wide,
    as torch's default dtype is (not per thread)."""

    float: np.dtype = np.dtype(np.float32)
    complex: np.dtype = np.dtype(np.complex64)


def default_float() -> np.dtype:
    """The default floating dtype (``ng.get_default_dtype()``), float32 as in torch."""
    return _Default.float


def default_complex() -> np.dtype:
    """The complex dtype that goes with the default float: complex64 for float32."""
    return _Default.complex


def set_default_float(dtype: np.dtype) -> None:
    """Make ``dtype`` (float16, float32 or float64, already checked) the default."""
    _Default.float = np.dtype(dtype)
    _Default.complex = np.dtype(np.complex64 if dtype != np.float64 else np.complex128)


def with_default_float(array: np.ndarray) -> np.ndarray:
    """``array``, made by numpy from Python numbers (so float64 or complex128), moved to
    the default dtype as torch does for ``torch.tensor([1.5])``; numpy arrays given as
    such keep their dtype and do not come here."""
    target: np.dtype
    if array.dtype == np.float64 and _Default.float != np.float64:
        target = _Default.float
    elif array.dtype == np.complex128 and _Default.complex != np.complex128:
        target = _Default.complex
    else:
        return array
    with np.errstate(over="ignore"):  # 1e308 becomes inf, as torch.tensor(1e308) does
        return array.astype(target)


_CATEGORY = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}  # bool < integer < floating < complex
_DIMENSIONED, _ZERO_DIM, _PYTHON_NUMBER = 2, 1, 0  # who decides the dtype first
_PYTHON_DTYPES = {
    bool: lambda: np.dtype(np.bool_),
    int: lambda: np.dtype(np.int64),
    float: default_float,
    complex: default_complex,
}


def _priority_and_dtype(operand) -> tuple[int, np.dtype] | None:
    """(priority, dtype) of one operand; None for what is not a number at all."""
    if isinstance(operand, (np.ndarray, np.generic)):
        return (_DIMENSIONED if operand.ndim else _ZERO_DIM), operand.dtype
    kind = type(operand)
    if kind in _PYTHON_DTYPES:
        if kind is int:
            check_python_int(operand)
        return _PYTHON_NUMBER, _PYTHON_DTYPES[kind]()
    dtype = getattr(operand, "dtype", None)
    if dtype is not None:  # a tensor, a static node (shape None: unknown rank) or a Meta
        shape = getattr(operand, "shape", None)
        return (_ZERO_DIM if shape == () else _DIMENSIONED), np.dtype(dtype)
    if isinstance(operand, (bool, int, float, complex)):  # subclasses, e.g. IntEnum
        return _PYTHON_NUMBER, _PYTHON_DTYPES[
            next(t for t in (bool, int, float, complex) if isinstance(operand, t))
        ]()
    return None


#: the Python ints torch takes as scalars: int64's range and, above it, uint64's
PYTHON_INT_RANGE = (-(2**63), 2**64)


def check_python_int(number: int) -> None:
    """Refuse a Python int no 64-bit integer holds, as torch does: numpy would turn it
    into a float (``ones(1, float32) + 2**70``), torch raises instead.

    >>> check_python_int(2**70)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    OverflowError: int too big to convert: 1180591620717411303424 is outside ...
    """
    if not PYTHON_INT_RANGE[0] <= number < PYTHON_INT_RANGE[1]:
        raise OverflowError(
            f"int too big to convert: {number} is outside the 64-bit range torch takes for a "
            f"Python int scalar; write it as a float ({float(number)!r})"
        )


def promote_types(a: np.dtype, b: np.dtype) -> np.dtype:
    """torch.promote_types: within a category numpy's rule; across categories the higher
    one's dtype (int64 with float32 is float32, numpy says float64), widened only to
    keep a float's precision inside a complex."""
    a, b = np.dtype(a), np.dtype(b)
    if _CATEGORY[a.kind] == _CATEGORY[b.kind] or {a.kind, b.kind} == {"f", "c"}:
        return np.promote_types(a, b)
    return a if _CATEGORY[a.kind] > _CATEGORY[b.kind] else b


def _combine_categories(higher: np.dtype | None, lower: np.dtype | None) -> np.dtype | None:
    """torch's combine_categories: the higher-priority dtype wins unless ``lower`` is of
    a higher category (bool < integer < floating < complex)."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    high, low = _CATEGORY[higher.kind], _CATEGORY[lower.kind]
    if high == 3:
        return higher
    if low == 3:  # a float tensor keeps its precision: float32 with complex -> complex64
        return np.result_type(higher, np.complex64) if high == 2 else lower
    if high == 2:
        return higher
    if high == 0 or low == 2:
        return promote_types(higher, lower)
    return higher


def result_type(*operands) -> np.dtype | None:
    """The dtype PyTorch gives an elementwise op on ``operands``.

    Operands are ranked: tensors with dimensions, then 0-d tensors, then Python
    numbers.  The highest-ranked group decides the dtype, unless a lower group holds a
    higher *category* (bool < integer < floating < complex): then that group's dtype
    is used (a Python float gives the default dtype, float32).  numpy instead lets a
    0-d array promote a float32 array to float64.  None if an operand is not a number.

    >>> import numpy as np
    >>> result_type(np.ones(3, np.float32), np.array(2.0)).name   # torch: float32
    'float32'
    >>> result_type(np.array([1, 2], np.int32), np.array(3)).name
    'int32'
    >>> result_type(np.array([1, 2]), 2.5).name   # the default dtype
    'float32'
    >>> result_type(np.ones(3, np.float64), 2.5).name
    'float64'
    """
    groups: list[np.dtype | None] = [None, None, None]
    for operand in operands:
        found = _priority_and_dtype(operand)
        if found is None or found[1].kind not in _CATEGORY:
            return None
        priority, dtype = found
        current = groups[priority]
        groups[priority] = dtype if current is None else promote_types(current, dtype)
    python, zero_dim, dimensioned = groups
    return _combine_categories(dimensioned, _combine_categories(zero_dim, python))


def _as_dtype(operand, dtype: np.dtype):
    """An array operand cast to ``dtype``; Python numbers stay weak (numpy keeps them
    from promoting), and an operand already of ``dtype`` is passed through uncopied."""
    if isinstance(operand, (np.ndarray, np.generic)):
        return operand if operand.dtype == dtype else np.asarray(operand).astype(dtype)
    if type(operand) in _PYTHON_DTYPES:
        return operand
    return np.asarray(operand, dtype=dtype)


def promote(*operands) -> tuple:
    """``operands`` cast to their torch :func:`result_type`, ready for a numpy ufunc.

    Operands that are not numbers come back unchanged, so numpy's own error (turned
    into a clear one by :mod:`naivegraph.ops.errors`) still names them.
    """
    dtype = result_type(*operands)
    if dtype is None:
        return operands
    return tuple(_as_dtype(operand, dtype) for operand in operands)


def writes_like(ufunc: Callable) -> Callable:
    """Mark a forward that takes numpy's ``out=`` as ``ufunc`` does, so that a static
    graph's memory planner may write its result into a buffer that is no longer needed."""

    def mark(forward: Callable) -> Callable:
        forward.ufunc = ufunc  # type: ignore[attr-defined]  # read by the static planner
        return forward

    return mark


def promoted(ufunc: Callable, name: str | None = None) -> Callable:
    """A two-operand forward that promotes as torch does, then calls ``ufunc``."""

    @writes_like(ufunc)
    def forward(x, y, out=None):
        if type(x) is np.ndarray and type(y) is np.ndarray and x.dtype == y.dtype:
            return ufunc(x, y, out=out)  # the common case: nothing to promote
        return ufunc(*promote(x, y), out=out)

    forward.__name__ = name or getattr(ufunc, "__name__", "forward")
    forward.__doc__ = getattr(ufunc, "__doc__", None)
    return forward


_TORCH_NAMES = {
    "bool": "Bool",
    "uint8": "Byte",
    "int8": "Char",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "float16": "Half",
    "float32": "Float",
    "float64": "Double",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
}


def torch_dtype_name(dtype) -> str:
    """PyTorch's name of a dtype in its messages (``Float`` for float32)."""
    name = np.dtype(dtype).name
    return _TORCH_NAMES.get(name, name)


def _can_cast(source: np.dtype, target: np.dtype) -> bool:
    """torch's canCast: no complex into real, no float into integer, nothing but bool
    into bool.  Narrowing within a category (float64 into float32) is allowed."""
    source_category, target_category = _CATEGORY[source.kind], _CATEGORY[target.kind]
    if target_category == 0:
        return source_category == 0
    return source_category <= target_category


def inplace_result_dtype(out_dtype, result) -> np.dtype:
    """The dtype an in-place op writes (``out_dtype``, the tensor's own), after checking
    that ``result`` (the op's value, or its dtype) may be written into it.

    >>> import numpy as np
    >>> inplace_result_dtype(np.int64, np.array([1.5]))
    Traceback (most recent call last):
    ...
    RuntimeError: result type Double can't be cast to the desired output type Long: ...
    """
    out_dtype = np.dtype(out_dtype)
    source = np.dtype(getattr(result, "dtype", result))
    if (
        source.kind in _CATEGORY
        and out_dtype.kind in _CATEGORY
        and not _can_cast(source, out_dtype)
    ):
        method = {
            "float64": "double",
            "float32": "float",
            "int64": "long",
            "int32": "int",
            "bool": "bool",
        }.get(source.name, f"to(ng.{source.name})")
        call_ = f"{method}()" if not method.startswith("to(") else method
        raise RuntimeError(
            f"result type {torch_dtype_name(source)} can't be cast to the desired output type "
            f"{torch_dtype_name(out_dtype)}: an in-place op keeps its tensor's dtype; use the "
            f"out-of-place op (x = x + y) or convert first with x.{call_}"
        )
    return out_dtype


# ----------------------------------------------------------------------------------
# Complex numbers: values yes, gradients no
# ----------------------------------------------------------------------------------
def complex_autograd_error(what: str) -> RuntimeError:
    """The error for a complex value that would take part in autograd.

    naivegraph's gradients are real derivatives; torch differentiates complex values
    with the conjugate Wirtinger convention, so the numbers would silently differ.
    """
    return RuntimeError(
        f"{what}: naivegraph's autograd is real-valued only (torch's complex gradients use "
        "the conjugate Wirtinger convention, which naivegraph does not implement). Keep the "
        "real and imaginary parts as two real tensors, or leave the complex value out of "
        "the gradient (detach it / do not require grad)."
    )


def refuse_complex_result(op: OpDef, out) -> None:
    """Raise if ``op``, run on a tensor that requires grad, produced a complex value."""
    if np.result_type(out).kind == "c":
        raise complex_autograd_error(
            f"{op.name} mixes a complex operand (result dtype {np.result_type(out)}) with a "
            "tensor that requires grad"
        )


def refuse_complex_nodes(nodes) -> None:
    """Raise if a static node that gradients flow through holds complex values."""
    for node in nodes:
        dtype = getattr(node, "dtype", None)
        if dtype is not None and np.dtype(dtype).kind == "c":
            raise complex_autograd_error(
                f"ns.gradients would flow through {getattr(node, 'name', node)!r}, which is "
                f"complex ({np.dtype(dtype)})"
            )
