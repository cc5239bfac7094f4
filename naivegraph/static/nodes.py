"""Static nodes: ``Placeholder``, ``Variable``, ``Constant`` and ``Operation``.

Building a node computes nothing; it only infers the output ``shape`` and ``dtype``
(so mistakes surface at build time, with both shapes named) and records the node in
its graph.  ``Node._ng_apply`` is the hook :func:`naivegraph.ops.core.call` looks for:
whenever an op-table function (``F.exp``, a VJP rule, a dynamic-mode ``ng.exp``) meets
a static node, it lands in :func:`apply`, which builds a new node instead of computing.
That is how the very same VJP rules build symbolic gradients.
"""

from __future__ import annotations

import linecache
import numbers
import os
import sys
import warnings
from typing import Any, Sequence

import numpy as np

from ..ops import OPS, OpDef
from ..ops.core import default_float, mixed_modes_error, result_type, with_default_float
from ..ops.methods import _NO_ATTRS, OpMethods
from ..ops.shapes import broadcast_shapes
from .graph import Graph, current_trace, get_default_graph, graph_of
from .graph import _stack as _graph_stack

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _is_weak_scalar(value: Any) -> bool:
    # Python numbers stay Python numbers so numpy's weak typing keeps float32 float32.
    return type(value) in (int, float, bool, complex)


def _to_array(value: Any) -> Any:
    """A numpy array (or a Python scalar, kept weak) from arrays, tensors or scalars."""
    if _is_weak_scalar(value) or isinstance(value, np.ndarray):
        return value
    numpy_method = getattr(value, "numpy", None)
    if callable(numpy_method):
        return np.asarray(numpy_method())
    data = getattr(value, "data", None)
    if data is not None and not isinstance(data, memoryview):
        return _to_array(data)
    return np.asarray(value)


# -------------------------------------------------------------------------- numeric data
_NUMERIC_KINDS = "biufc"  # bool, signed and unsigned int, float, complex
_ALL_NUMBERS = object()
NUMERIC_DATA = "numbers, a numeric array, a nested list of numbers, or a tensor"


def _is_number(item: Any) -> bool:
    if isinstance(item, (np.generic, np.ndarray)):
        return item.dtype.kind in _NUMERIC_KINDS
    return isinstance(item, numbers.Number)


def _first_non_number(value: Any) -> Any:
    """The first element of (nested lists / object arrays) ``value`` that is not a number."""
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, np.ndarray) and item.dtype.kind == "O":
            item = item.tolist()
        if isinstance(item, (list, tuple)):
            todo.extend(reversed(item))
        elif not _is_number(item):
            return item
    return _ALL_NUMBERS


def _describe(item: Any) -> str:
    if isinstance(item, np.ndarray):
        return f"an array of dtype {item.dtype}"
    text = repr(item)
    return f"{type(item).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def _ragged_detail(value: Any) -> str | None:
    """Where nested lists stop being rectangular, or None if they are rectangular."""
    level, depth = [value], 0
    while level:
        sequences = [x for x in level if isinstance(x, (list, tuple, np.ndarray))]
        if not sequences:
            return None
        if len(sequences) != len(level):
            return f"at depth {depth} it mixes lists and single numbers"
        lengths = list(dict.fromkeys(len(x) for x in sequences))
        if len(lengths) > 1:
            listed = " and ".join(str(n) for n in lengths[:2]) + (
                " and more" if len(lengths) > 2 else ""
            )
            where = "rows" if depth == 1 else f"lists at depth {depth}"
            return f"its {where} have different lengths ({listed})"
        level = [y for x in sequences for y in x]
        depth += 1
    return None


def numeric_data(value: Any, what: str) -> Any:
    """``_to_array(value)``, refusing what is not numeric with a message about ``what``.

    Non-numbers (strings, None, objects) raise TypeError; ragged nested lists raise
    ValueError saying where the rows differ.  Numeric data passes through untouched
    (Python numbers stay weak), so this costs one dtype check on the common path.

    >>> numeric_data([1, "a"], "a constant")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: a constant must be numeric data (numbers, a numeric array, ... str 'a'
    """
    if _is_weak_scalar(value):
        return value
    try:
        array = _to_array(value)
    except (ValueError, TypeError) as error:
        detail = _ragged_detail(value)
        if detail is not None:
            raise ValueError(
                f"{what} is ragged: {detail}; nested lists must be rectangular, like an "
                f"array (every row the same length)"
            ) from None
        bad = _first_non_number(value)
        if bad is not _ALL_NUMBERS:
            raise _not_numeric(value, bad, what) from None
        raise ValueError(f"{what} cannot be read as an array: {error}") from error
    if _is_weak_scalar(array):
        return array
    kind = getattr(getattr(array, "dtype", None), "kind", "?")  # "?": not numeric data
    if kind in _NUMERIC_KINDS:
        return array
    if kind == "O":  # numbers numpy kept as objects (e.g. a mix with None) are checked one by one
        bad = _first_non_number(array)
        if bad is _ALL_NUMBERS:
            converted = np.array(array.tolist())
            if converted.dtype.kind in _NUMERIC_KINDS:
                return converted
            # numbers numpy has no dtype for (Decimal, Fraction): name the first one
            bad = next(
                (
                    item
                    for item in converted.flat
                    if not isinstance(item, (int, float, complex, np.generic))
                ),
                converted,
            )
    else:
        bad = _first_non_number(value)
        if bad is _ALL_NUMBERS:
            bad = array
    raise _not_numeric(value, bad, what)


def safe_cast(data: np.ndarray, target: Any, what: str, owner: str) -> np.ndarray:
    """``data`` as ``target`` (no copy if it already is); casts that lose information
    raise a TypeError saying ``what`` it was and naming both dtypes.

    A cast within a kind (float64 -> float32) or upwards (int -> float) is fine; one
    that would drop an imaginary part or a fraction, or overflow, is not.
    """
    integers = data.dtype.kind in "iu" and target.kind in "iu"  # checked by value below
    if not (integers or np.can_cast(data.dtype, target, casting="same_kind")):
        raise TypeError(
            f"{what} has dtype {data.dtype}, which cannot be cast to {owner}'s dtype {target} "
            f"without losing information; convert it explicitly (e.g. "
            f"array.astype(np.{target.name})) or create {owner} with dtype {data.dtype.name}"
        )
    with np.errstate(over="ignore"):  # an overflow is reported below, as a TypeError
        array = data.astype(target, copy=False)
    overflow = (integers and not np.array_equal(array, data)) or (
        target.kind in "fc"
        and target.itemsize < data.dtype.itemsize
        and np.count_nonzero(np.isinf(array)) != np.count_nonzero(np.isinf(data))
    )
    if overflow:
        raise TypeError(
            f"{what} (dtype {data.dtype}) has values that do not fit its dtype "
            f"{target}; create {owner} with a wider dtype"
        )
    return array


def _not_numeric(value: Any, bad: Any, what: str) -> TypeError:
    found = f"it is {_describe(bad)}" if bad is value else f"it contains {_describe(bad)}"
    return TypeError(f"{what} must be numeric data ({NUMERIC_DATA}), but {found}")


class Node(OpMethods):
    """A value in a static graph; its ``value`` is None until the graph runs.

    A node keeps its fields in ``__slots__`` (no instance dictionary): a graph of a
    million nodes holds a million of them.  For the same reason a node without
    attributes shares one empty ``attrs`` dict (never changed in place), and a node
    named automatically keeps only its number: ``name`` makes ``"neg_3"`` when asked.
    """

    __slots__ = (
        "op",
        "inputs",
        "attrs",
        "shape",
        "dtype",
        "_name",  # the name, or the number of an automatic name (see ``name``)
        "graph",
        "_value",
        "grad",
        "is_gradient",
        "retains_grad",
        "built_at",
        "gradient_of",
    )

    kind = "node"

    def __init__(
        self,
        op: Any,
        inputs: Sequence["Node"],
        shape: tuple | None,
        dtype: Any,
        attrs: dict | None = None,
    ) -> None:
        self.op = op
        self.inputs: tuple[Node, ...] = tuple(inputs)
        self.attrs: dict = dict(attrs) if attrs else _NO_ATTRS  # shared: never changed in place
        self.shape = None if shape is None else tuple(shape)
        self.dtype = None if dtype is None else np.dtype(dtype)
        self._name: str | int = "<unregistered>"
        self.graph: Graph | None = None
        self._value = None
        self.grad: np.ndarray | None = None
        self.is_gradient = False
        self.retains_grad = False
        self.built_at: tuple[str, int] | None = None  # (file, line) of the user code
        #: the name of ``x`` when ``ns.gradients`` returned this node as the gradient of
        #: ``x`` and it was not renamed since: an ONNX export calls the node ``grad_<x>``
        self.gradient_of: str | None = None

    # ------------------------------------------------------------------ basics
    @property
    def name(self) -> str:
        """The node's name, unique in its graph: given, or ``<op>_<number>`` (made here,
        when asked, from the number the graph gave it)."""
        name = self._name
        if isinstance(name, str):
            return name
        return f"{self.name_base}_{name}"

    @name.setter
    def name(self, name: str | int) -> None:
        self._name = name

    @property
    def name_base(self) -> str:
        """What an automatic name of this node starts with: its op's name."""
        return self.op_name

    @property
    def value(self) -> Any:
        """The value computed by the last run (None before any run, or once freed)."""
        return self._value

    @value.setter
    def value(self, new: Any) -> None:
        self._value = new

    @property
    def op_name(self) -> str:
        return self.op.name if isinstance(self.op, OpDef) else str(self.op)

    @property
    def ndim(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    def retain_grad(self) -> "Node":
        """Ask ``graph.backward`` to keep this node's gradient in ``.grad``."""
        self.retains_grad = True
        return self

    def __repr__(self) -> str:
        shape = _shape_text(self.shape)
        dtype = "?" if self.dtype is None else self.dtype.name
        return (
            f"<{type(self).__name__} {self.name!r} op={self.op_name} shape={shape} dtype={dtype}>"
        )

    __hash__ = object.__hash__  # nodes are dict keys; __eq__ is deliberately not defined
    # numpy defers to our reflected operators (array * node builds a node, not an
    # object array of nodes) and refuses ufuncs on nodes, which have no value yet.
    __array_ufunc__ = None

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        # Without this numpy would read a node as a sequence, building x[0], x[1], ...
        raise TypeError(
            f"static node {self.name!r} has no value while the graph is being built, so it "
            f"cannot become a numpy array or a tensor; use it directly in ns.* ops, and read "
            f"values from graph.forward(...) or a compiled function once the graph runs"
        )

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        # np.mean(node) would call node.mean(axis=..., dtype=..., out=...), np.where(c, node, 0)
        # would turn the node into an array: neither can build a node, so say which one can
        if func in _NUMPY_METADATA:  # np.ndim(node), np.shape(node): what the node knows
            return _NUMPY_METADATA[func](self)
        name = getattr(func, "__name__", "this function")
        module = getattr(func, "__module__", "numpy")
        numpy_name = f"np.linalg.{name}" if module == "numpy.linalg" else f"np.{name}"
        static = sys.modules.get("naivegraph.static")
        dynamic = sys.modules.get("naivegraph")
        if current_trace() and hasattr(dynamic, name):
            # a traced function is written for dynamic mode: its ng.* op records a node
            instead = f"ng.{name}"
        elif hasattr(static, name):
            instead = f"ns.{name}"
        else:
            instead = "the ns.* ops and the node's methods"
        raise TypeError(
            f"{numpy_name} cannot build a graph node: use {instead} (a numpy function computes "
            f"on arrays, and node {self.name!r} has no value while its graph is built)"
        )

    # ------------------------------------------------------------------ no Python control flow
    def __bool__(self) -> bool:
        raise TypeError(control_flow_message(self))

    __float__ = __int__ = __index__ = __bool__

    def item(self) -> Any:
        """Refused: a node has no number while its graph is built (a tensor's ``.item()``)."""
        raise TypeError(control_flow_message(self, need="the Python number (.item())"))

    def __len__(self) -> int:
        if not self.shape or self.shape[0] is None:
            raise TypeError(
                f"len() of node {self.name!r} needs a known first dimension, but its "
                f"shape is {_shape_text(self.shape)}"
            )
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    # ------------------------------------------------------------------ op dispatch hook
    @staticmethod
    def _ng_apply(op: OpDef, args: tuple, attrs: dict) -> "Node":
        return apply(op, args, attrs)

    # ------------------------------------------------- where nodes differ from OpMethods
    def _known_shape(self, what: str) -> tuple:
        return _require_shape(self, what)

    def _index(self, index):
        if any(
            isinstance(part, Node) for part in (index if isinstance(index, tuple) else (index,))
        ):
            raise TypeError(
                "indexing with a node is not supported in a static graph: the index "
                "must be known when the graph is built (use "
                f"{'ng.where' if current_trace() else 'ns.where'} for masks)"
            )
        return index

    # ------------------------------------------- torch's names for casts and comparisons
    # Code written for tensors (``(x > 0).float()``, ``x.gt(0)``) builds nodes too, so a
    # traced function may use them: a cast is the op table's ``to_copy`` node.
    def to(
        self,
        *args: Any,
        dtype: Any = None,
        device: Any = None,
        non_blocking: bool = False,
        copy: bool = False,
    ) -> "Node":
        """This node cast to another dtype, as a tensor's ``to(dtype)``, ``to("cpu",
        dtype)``, ``to(other)``; the node itself when the dtype does not change.

        >>> import naivegraph.static as ns
        >>> with ns.Graph():
        ...     x = ns.placeholder("x", shape=(2,))
        ...     mask = (x > 0).to(x.dtype)
        >>> mask.op_name, mask.dtype.name
        ('to_copy', 'float32')
        """
        for arg in args:
            if isinstance(arg, Node):
                dtype = arg.dtype if dtype is None else dtype
            elif isinstance(arg, str) or type(arg).__name__ == "device":
                device = arg
            elif arg is not None:
                dtype = arg
        if device is not None and str(device) not in ("cpu", "cpu:0"):
            raise RuntimeError(
                f"naivegraph runs on the CPU only, so it cannot move a node to "
                f"{str(device)!r}; use 'cpu' or leave the device out"
            )
        return self._cast(self.dtype if dtype is None else dtype, copy)

    def _cast(self, dtype: Any, copy: bool = False) -> "Node":
        try:
            target = np.dtype(dtype)
        except TypeError:
            target = None
        if target is None or target.kind not in "biufc":
            raise TypeError(
                f"to() expected a dtype such as np.float32 or np.int64, a device such as "
                f"'cpu', or a node, but got {dtype!r}"
            )
        if target == self.dtype and not copy:
            return self
        return self._op("to_copy", dtype=target)

    def float(self) -> "Node":
        return self._cast(np.float32)

    def double(self) -> "Node":
        return self._cast(np.float64)

    def long(self) -> "Node":
        return self._cast(np.int64)

    def type_as(self, other: "Node") -> "Node":
        return self._cast(other.dtype)

    def gt(self, other: Any) -> "Node":
        return self > other

    def lt(self, other: Any) -> "Node":
        return self < other

    def ge(self, other: Any) -> "Node":
        return self >= other

    def le(self, other: Any) -> "Node":
        return self <= other

    def eq(self, other: Any) -> "Node":
        """Elementwise ``==`` as a bool node (the operator keeps identity: nodes are keys)."""
        return self._op("eq", other)

    def ne(self, other: Any) -> "Node":
        return self._op("ne", other)


def _require_shape(node: Node, what: str) -> tuple:
    if node.shape is None:
        raise ValueError(
            f"{what} needs the shape of {node.name!r}, whose rank is unknown; give "
            f"the placeholder it depends on a shape"
        )
    return node.shape


class Placeholder(Node):
    """An input fed at run time; ``None`` in ``shape`` means "any size" along that axis."""

    __slots__ = ()
    kind = "placeholder"


class Variable(Node):
    """A trainable leaf whose value lives across runs; change it with ``assign``.

    Copies of a Variable made by optimisation passes share its storage, so an
    ``assign`` is seen by every compiled function.

    >>> import naivegraph.static as ns
    >>> with ns.Graph():
    ...     w = ns.Variable([1.0, 2.0], name="w")
    >>> w.assign([3.0, 4.0]).value.tolist()
    [3.0, 4.0]
    """

    __slots__ = ("trainable", "_state")
    kind = "variable"

    def __init__(self, value: Any, name: str | None = None, trainable: bool = True) -> None:
        what = "the value of a Variable" if name is None else f"the value of Variable {name!r}"
        # np.array: a private copy, so later edits of `value` do not leak in
        array = np.array(numeric_data(value, what))
        if not isinstance(value, (np.ndarray, np.generic)):  # Python floats: the default dtype
            array = with_default_float(array)
        if not np.issubdtype(array.dtype, np.inexact) and trainable:  # complex stays complex
            array = array.astype(default_float())
        super().__init__("variable", (), array.shape, array.dtype)
        self.trainable = trainable
        self._state = [array]  # a box shared with copies in optimised graphs
        get_default_graph()._register(self, name, "variable")

    @property
    def value(self) -> np.ndarray:
        return self._state[0]

    @value.setter
    def value(self, new: Any) -> None:
        self.assign(new)

    def assign(self, value: Any) -> Any:
        """``self = value``.  A node gives an *assign node*: the update is part of the
        graph and happens each time a run fetches it (see :func:`assign`).  A plain
        value (number, array) is stored at once (same shape; cast to the variable's
        dtype) and the variable itself is returned."""
        if isinstance(value, Node):
            return assign(self, value)
        what = f"the value assigned to Variable {self.name!r}"
        # np.array: a private copy, as in __init__
        array = np.array(
            safe_cast(np.asarray(numeric_data(value, what)), self.dtype, what, "the Variable")
        )
        if array.shape != self.shape:
            raise ValueError(
                f"cannot assign a value of shape {array.shape} to Variable {self.name!r} of "
                f"shape {self.shape}: a variable keeps its shape (build a new one instead)"
            )
        self._state[0] = array
        return self


class Constant(Node):
    """A fixed leaf.  Python numbers are kept as Python numbers (numpy's weak typing).

    Only numeric data can be a constant: strings, None or other objects raise a
    TypeError (``what`` says which value it was in the message).
    """

    __slots__ = ()
    kind = "constant"
    name_base = "const"  # type: ignore[assignment]  # const_1, const_2, ...

    def __init__(self, value: Any, what: str = "a constant", copy: bool = True) -> None:
        from_python = not isinstance(value, (np.ndarray, np.generic))
        value = numeric_data(value, what)
        if _is_weak_scalar(value):
            shape, dtype = (), np.result_type(value)  # kept weak: its own dtype is numpy's
        else:
            if from_python and isinstance(value, np.ndarray):  # [1.5, 2.0]: the default too
                value = with_default_float(value)
            if copy:  # a private copy: later edits of the caller's array do not leak in
                value = np.array(value) if isinstance(value, np.ndarray) else value
            shape, dtype = np.shape(value), np.asarray(value).dtype
        super().__init__("constant", (), shape, dtype)
        self._value = value

    @property
    def value(self) -> Any:
        return self._value

    @value.setter
    def value(self, new: Any) -> None:
        raise AttributeError(f"constant {self.name!r} cannot change; use a Variable for state")


class Operation(Node):
    """The result of applying an op-table primitive to input nodes."""

    __slots__ = ()
    kind = "operation"

    def args_for(self, values: Sequence) -> tuple:
        """Positional arguments of the op's forward/rules for these input values."""
        return (list(values),) if self.op.variadic else tuple(values)


# -------------------------------------------------------------------------- building
def placeholder(name: str, shape: Sequence | None = None, dtype: Any = None) -> Placeholder:
    """An input of the graph, fed by node or by ``name`` at run time; its dtype is the
    default one (float32, ``ng.set_default_dtype``) unless ``dtype`` says otherwise.

    >>> import naivegraph.static as ns
    >>> with ns.Graph():
    ...     x = ns.placeholder("x", shape=(None, 3))
    >>> x.shape, x.dtype.name
    ((None, 3), 'float32')
    """
    if not isinstance(name, str) or not name:
        raise TypeError("a placeholder needs a name (a non-empty string): feeds use it")
    if dtype is None:
        dtype = default_float()
    node = Placeholder("placeholder", (), None if shape is None else tuple(shape), dtype)
    get_default_graph()._register(node, name, "placeholder")
    return node


def constant(value: Any, name: str | None = None) -> Constant:
    """A fixed leaf of the default graph: numbers, a numeric array or a tensor.

    >>> import naivegraph.static as ns
    >>> with ns.Graph():  # doctest: +ELLIPSIS
    ...     ns.constant([1, "a"])
    Traceback (most recent call last):
    ...
    TypeError: a constant must be numeric data (numbers, a numeric array, ... str 'a'
    """
    node = Constant(value, "a constant" if name is None else f"constant {name!r}")
    get_default_graph()._register(node, name, "const")
    return node


def apply(op: OpDef, args: tuple, attrs: dict) -> Operation:
    """Build the node ``op(*args, **attrs)``: validate and infer first, register last.

    Literal arguments (numbers, arrays, dynamic tensors) become constants of the
    graph.  Nothing is registered until shape inference succeeded, so a failed build
    leaves the graph exactly as it was.
    """
    flat = list(args[0]) if op.variadic else list(args)
    default = get_default_graph()
    if default.outer is not None:  # inside a branch or loop body
        flat = [capture(default, a) if isinstance(a, Node) else a for a in flat]
    _refuse_other_modes(flat)
    graph = graph_of(flat) or default
    if graph is not default and default.outer is None and not graph._gradient_depth:
        _refuse_foreign_graph(op, flat, graph, default)
    inputs = [a if isinstance(a, Node) else Constant(a, f"an operand of {op.name}") for a in flat]
    shape, dtype = infer(op, inputs, attrs)
    node = Operation(op, inputs, shape, dtype, attrs)
    for inp in inputs:
        if inp.graph is None:
            graph._register(inp, None, "const")
    graph._register(node, None, op.name)
    return node


def _refuse_foreign_graph(op: OpDef, flat: list, graph: Graph, default: Graph) -> None:
    """Inside ``with other:``, an op on nodes of ``graph`` would silently join ``graph``:
    refuse it, as a mix of nodes of two graphs is refused (outside any ``with`` block the
    op joins its inputs' graph).  ``ns.gradients`` and ``ns.jvp`` build in the graph of
    their ys wherever they are called."""
    if not _graph_stack():
        return
    node = next(a for a in flat if isinstance(a, Node) and a.graph is graph)
    raise ValueError(
        f"nodes of two graphs cannot be mixed: {op.name} is built inside `with "
        f"{default.name}:`, but its input {node.name!r} belongs to {graph.name}; build it "
        f"inside `with {graph.name}:` (the graph of its inputs), or rebuild its inputs in "
        f"{default.name}"
    )


def assign(variable: Any, value: Any, name: str | None = None) -> Any:
    """An update of ``variable`` to ``value`` as a node of the graph (TF1's ``assign``).

    Nothing changes when the node is built.  Each run that fetches it (``g.run``, a
    compiled function's ``updates``, an optimiser's step) computes ``value`` and
    stores it once the whole run has succeeded: every read of a Variable in one run
    sees its value from before the run, and all updates of a run are committed
    together at its end.  The node's own value is the new value.  A plain value
    (not a node) is stored at once, as ``variable.assign(array)``.

    >>> import numpy as np, naivegraph.static as ns
    >>> with ns.Graph() as g:
    ...     w = ns.Variable([1.0, 2.0], name="w")
    ...     step = ns.assign(w, w * 2.0)
    >>> g.run(step).tolist(), w.value.tolist()
    ([2.0, 4.0], [2.0, 4.0])
    """
    if not isinstance(variable, Variable):
        raise TypeError(
            f"assign updates a Variable, but got {_describe_operand(variable)}; create "
            f"state with ns.Variable(initial_value, name=...)"
        )
    if not isinstance(value, Node):
        return variable.assign(value)
    if get_default_graph().outer is not None:
        raise ValueError(
            f"an update of Variable {variable.name!r} inside a branch of ns.cond or the "
            f"body of ns.while_loop is not supported; return the new value from the "
            f"branch or loop and assign the result outside it"
        )
    _check_assignable(variable, value)
    graph = variable.graph
    assert graph is not None
    size = len(graph.nodes)
    node = apply(OPS["assign"], (variable, value), {})
    if name is not None:
        try:
            graph.rename(node, name)
        except ValueError:
            graph._rollback(size)
            raise
    return node


def _describe_operand(value: Any) -> str:
    if isinstance(value, Node):
        return f"{value.kind} {value.name!r}"
    return type(value).__name__


def _check_assignable(variable: Variable, value: Node) -> None:
    """Refuse at build time what the update could never store: another shape or a dtype
    that loses information (sizes unknown until the run are checked when it runs)."""
    if value.graph is not variable.graph:
        raise ValueError(
            f"cannot assign {value.name!r} of {getattr(value.graph, 'name', None)} to "
            f"Variable {variable.name!r} of {getattr(variable.graph, 'name', None)}: nodes of "
            f"two graphs cannot be mixed"
        )
    shape = value.shape
    if shape is not None and (
        len(shape) != len(variable.shape)
        or any(d is not None and d != v for d, v in zip(shape, variable.shape))
    ):
        raise ValueError(
            f"cannot assign {value.name!r} of shape {shape} to Variable {variable.name!r} of "
            f"shape {variable.shape}: a variable keeps its shape"
        )
    if value.dtype is not None and not np.can_cast(value.dtype, variable.dtype, "same_kind"):
        raise TypeError(
            f"cannot assign {value.name!r} of dtype {value.dtype} to Variable "
            f"{variable.name!r} of dtype {variable.dtype} without losing information; "
            f"convert it in the graph first (e.g. value.to(np.{variable.dtype.name}))"
        )


def capture(graph: Graph, node: Node) -> Node:
    """``node`` as ``graph`` sees it: itself, or, for a node of an enclosing graph
    (``graph`` being a branch of ``ns.cond`` or the body of ``ns.while_loop``), the
    placeholder of ``graph`` that brings its value in when the branch runs."""
    if node.graph is graph or node.graph is None or graph.outer is None:
        return node
    if node.graph is not graph.outer:
        node = capture(graph.outer, node)
    if node not in graph.captures:
        inner = Placeholder("placeholder", (), node.shape, node.dtype)
        graph._register(inner, None, f"outer_{node.name}")
        graph.captures[node] = inner
    return graph.captures[node]


def _refuse_other_modes(operands: Sequence[Any]) -> None:
    """A dynamic tensor among the operands is refused, not silently made a constant."""
    for operand in operands:
        if not isinstance(operand, Node) and hasattr(type(operand), "_ng_apply"):
            raise mixed_modes_error(operands)


# -------------------------------------------------------------------------- shape inference
def _probe(op: OpDef, inputs: Sequence[Node], attrs: dict, shapes: Sequence[tuple]) -> Any:
    dummies = [
        node.value
        if isinstance(node, Constant) and _is_weak_scalar(node.value)
        else np.broadcast_to(np.zeros((), dtype=node.dtype), shape)
        for node, shape in zip(inputs, shapes)
    ]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        args = (dummies,) if op.variadic else dummies
        return op.forward(*args, **attrs)


# Elementwise ops probe tiny dummies to learn the output dtype and whether the op
# really keeps the broadcast shape.  The answer depends only on the op, its attrs and
# each input's dtype and tiny shape, so it is cached: a chain of a million ``neg``
# probes numpy once.  Bounded, because fused ops of optimised graphs are new OpDefs.
_PROBES: dict[tuple, tuple[bool, Any]] = {}
_PROBES_MAX = 4096
_HASHABLE_ATTR = (int, float, bool, complex, str, type(None))


def _probe_key(
    op: OpDef, inputs: Sequence[Node], attrs: dict, small: Sequence[tuple]
) -> tuple | None:
    """What an elementwise probe's answer depends on, or None if it cannot be a dict key.
    The default dtype is part of it: ``int * 2.5`` is float32 or float64 by it."""
    parts: list = [op, default_float()]
    for name, value in attrs.items():
        if type(value) not in _HASHABLE_ATTR:
            return None
        parts.append((name, type(value), value))  # 2 and 2.0 give different dtypes
    for node, shape in zip(inputs, small):
        value = node._value if isinstance(node, Constant) else None
        if value is not None and _is_weak_scalar(value):
            # A Python number's value matters only for ints (uint8 + 300 overflows).
            parts.append(("weak", type(value), value if type(value) is int else None))
        else:
            parts.append((node.dtype, shape))
    return tuple(parts)


def _broadcast(shapes: Sequence[tuple]) -> tuple:
    first = shapes[0]
    for shape in shapes:
        if shape != first:
            return broadcast_shapes(*shapes)  # names every shape if they do not broadcast
    return first


def infer(op: OpDef, inputs: Sequence[Node], attrs: dict) -> tuple[tuple | None, Any]:
    """Output (shape, dtype) of ``op`` on ``inputs``; raises at build time if impossible.

    Elementwise ops get numpy's broadcast rule (with both shapes named).  Every other
    op is run once on zero-stride dummies, which is cheap and exactly as strict as
    the real forward.
    """
    if op.name == "group":  # it has no value: it only makes its inputs run
        return None, None
    # control flow knows its results' shapes, and an op with a shape rule its own
    custom = getattr(op, "infer_output", None) or getattr(op, "shape_rule", None)
    if custom is not None:
        return custom(inputs, attrs)
    shapes: list[Any] = [n.shape for n in inputs]
    if any(s is None for s in shapes):
        return None, _dtype_guess(op, inputs, attrs)
    if any(None in s for s in shapes):
        if op.elementwise:  # broadcasting is known without sizes (TF1's static broadcast)
            broadcast = _infer_broadcast(op, inputs, attrs, shapes)
            if broadcast is not None:
                return broadcast
        return _infer_partial(op, inputs, attrs, shapes)
    try:
        if op.elementwise:
            out_shape = _broadcast(shapes)
            # A tiny probe (each axis cut to 0 or 1) tells the dtype and whether the op
            # really is shape-preserving (mse_loss broadcasts but then reduces).
            small = [s if not s else tuple([min(d, 1) for d in s]) for s in shapes]
            key = _probe_key(op, inputs, attrs, small)
            known = None if key is None else _PROBES.get(key)
            if known is None:
                result = _probe(op, inputs, attrs, small)
                known = np.shape(result) == broadcast_shapes(*small), np.result_type(result)
                if key is not None:
                    if len(_PROBES) >= _PROBES_MAX:
                        _PROBES.clear()
                    _PROBES[key] = known
            preserves_shape, dtype = known
            if preserves_shape:
                return out_shape, dtype
        result = _probe(op, inputs, attrs, shapes)
        return np.shape(result), np.result_type(result)
    except Exception as error:  # re-raised with the op and shapes named
        raise _build_error(op, shapes, attrs, error) from error


def _build_error(op: OpDef, shapes: Sequence, attrs: dict, error: Exception) -> Exception:
    """``error`` of a probe, with the op and the input shapes named."""
    listed = ", ".join(_shape_text(s) for s in shapes)
    message = f"cannot build {op.name} on inputs of shapes {listed}"
    if attrs:
        message += f" with {_format_attrs(attrs)}"
    message += f": {error}"
    try:
        return type(error)(message)
    except Exception:
        return ValueError(message)


# Stand-in sizes for the unknown (None) dimensions of placeholders.  An output
# dimension that comes out the same for all of them does not depend on the unknown
# sizes; one that changes is unknown too.  1 is among them so that slicing (x[:2],
# which clamps) and squeezing show their dependence on the size.
_STAND_INS = (1, 2, 3)


# Further sizes tried once every stand-in failed, before calling the failure certain: an
# error that depends on the unknown size (a reshape needing a multiple of 4) names that
# size or goes away for one of them.
_MORE_STAND_INS = (4, 7, 12)


def _fails_for_any_size(
    op: OpDef, inputs: Sequence[Node], attrs: dict, shapes: Sequence[tuple], errors: list
) -> bool:
    """Whether the probe fails with one and the same error for every size tried."""
    for size in _MORE_STAND_INS:
        concrete = [tuple(size if d is None else d for d in s) for s in shapes]
        try:
            _probe(op, inputs, attrs, concrete)
        except Exception as error:
            errors.append(error)
        else:
            return False
    return len({(type(e), str(e)) for e in errors}) == 1


def _infer_partial(
    op: OpDef, inputs: Sequence[Node], attrs: dict, shapes: Sequence[tuple]
) -> tuple[tuple | None, Any]:
    """(shape, dtype) when some input dimensions are unknown: None marks each output
    dimension that depends on them; the whole shape is None if even the rank does, or
    if the op fails for some of the sizes (the run-time sizes decide, as before)."""
    key = _probe_key(op, inputs, attrs, shapes)
    known = None if key is None else _PARTIAL.get(key)
    if known is not None:
        return known
    outcomes, errors = [], []
    for size in _STAND_INS:
        concrete = [tuple(size if d is None else d for d in s) for s in shapes]
        try:
            result = _probe(op, inputs, attrs, concrete)
        except Exception as error:
            errors.append(error)
            continue
        outcomes.append((np.shape(result), np.result_type(result)))
    if errors:
        # An error the same whatever the unknown sizes (float32 @ float64, a Python int
        # too big, (None, 2) @ (8, 2)) does not depend on them: refuse now, as a known
        # shape does and as TF1 does, not in the middle of ns.gradients or a run.
        if len(errors) == len(_STAND_INS) and _fails_for_any_size(
            op, inputs, attrs, shapes, errors
        ):
            raise _build_error(op, shapes, attrs, errors[0]) from errors[0]
        return None, _dtype_guess(op, inputs, attrs)
    if len({len(shape) for shape, _ in outcomes}) != 1:
        known = None, outcomes[0][1]
    else:
        dims = zip(*(shape for shape, _ in outcomes))
        known = tuple(d[0] if len(set(d)) == 1 else None for d in dims), outcomes[0][1]
    if key is not None:
        if len(_PARTIAL) >= _PROBES_MAX:
            _PARTIAL.clear()
        _PARTIAL[key] = known
    return known


_PARTIAL: dict[tuple, tuple] = {}  # the answers of _infer_partial, cached like _PROBES


def _shape_text(shape: tuple | None) -> str:
    return "?" if shape is None else str(shape)


def _infer_broadcast(
    op: OpDef, inputs: Sequence[Node], attrs: dict, shapes: Sequence[tuple]
) -> tuple[tuple, Any] | None:
    """(shape, dtype) of an elementwise op that keeps the broadcast shape (a probe with
    each unknown size 1 tells, and gives the dtype), or None to infer otherwise."""
    shape = _broadcast_unknown(shapes)
    if shape is None:
        return None
    ones = [tuple(1 if d is None else d for d in s) for s in shapes]
    try:
        result = _probe(op, inputs, attrs, ones)
    except Exception:
        return None
    if np.shape(result) != broadcast_shapes(*ones):  # e.g. mse_loss: it reduces
        return None
    return shape, np.result_type(result)


def _broadcast_unknown(shapes: Sequence[tuple]) -> tuple | None:
    """numpy's broadcast of shapes with unknown (None) sizes, or None if a size the
    run decides could still change it: an unknown size against a known one is that
    known one unless it is 1, two unknown sizes stay unknown."""
    rank = max(len(s) for s in shapes)
    result = []
    for axis in range(rank):
        sizes = {s[axis - rank + len(s)] for s in shapes if axis - rank + len(s) >= 0}
        known = {d for d in sizes if d is not None and d != 1}
        if len(known) > 1:
            return None  # they cannot broadcast: the probe names the shapes
        if known:
            result.append(known.pop())
        elif None in sizes:
            result.append(None)
        else:
            result.append(1)
    return tuple(result)


def _dtype_guess(op: OpDef, inputs: Sequence[Node], attrs: dict) -> Any:
    """The result dtype when shapes are not all known: the op itself, run on one
    element per input (comparisons give bool), else torch's promotion rule."""
    if any(n.dtype is None for n in inputs):
        known = [n for n in inputs if n.dtype is not None]
        return result_type(*known) if known else None
    # An input of unknown rank is taken to have dimensions (a 0-d value would not decide
    # the dtype under torch's promotion rule); unknown sizes are 1.
    small = [
        (1,) if n.shape is None else tuple(1 if d is None else d for d in n.shape) for n in inputs
    ]
    try:
        if op.elementwise:
            return np.result_type(_probe(op, inputs, attrs, small))
    except Exception:
        pass
    operands = [
        n.value if isinstance(n, Constant) and _is_weak_scalar(n.value) else n for n in inputs
    ]
    return result_type(*operands)  # torch's rule, as the run will apply


def _format_attrs(attrs: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in attrs.items())


# -------------------------------------------------------------------------- control flow errors
def _user_frame():
    """The innermost stack frame outside naivegraph: where the user's condition is."""
    frame = sys._getframe(1)
    while frame is not None:
        if not os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR + os.sep):
            return frame
        frame = frame.f_back
    return None


def control_flow_message(node: Node, need: str = "the truth value") -> str:
    """Why ``bool(node)`` (or ``node.item()``) cannot work, where, and what to use instead."""
    frame = _user_frame()
    where = ""
    if frame is not None:
        line = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
        where = (
            f"\n  at {frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}: {line}"
        )
    tracing = current_trace()
    context = f" while tracing {tracing}" if tracing else ""
    # A traced function is written for dynamic mode: ng.where works on tensors and
    # records on nodes, while ns.where refuses tensors.
    where_fn = "ng.where" if tracing else "ns.where"
    return (
        f"data-dependent Python control flow cannot be expressed in a static graph: "
        f"{need} of node {node.name!r} is needed{context}, but static nodes have "
        f"no value while the graph is being built.{where}\n"
        f"Inside the graph, choose values elementwise with {where_fn}(condition, a, b), "
        f"branch with ns.cond(pred, true_fn, false_fn), or loop with "
        f"ns.while_loop(cond_fn, body_fn, loop_vars); or run the code in dynamic mode "
        f"(import naivegraph as ng), where every value exists at once."
    )


def _numpy_size(node: Node) -> int:
    if any(d is None for d in node.shape):
        raise TypeError(f"np.size of node {node.name!r} needs a known shape, not {node.shape}")
    return int(np.prod(node.shape, dtype=np.int64))


# numpy functions that ask a node only what it knows while its graph is built (the ops'
# own code asks np.ndim of an operand that may be a node)
_NUMPY_METADATA: dict = {
    np.ndim: lambda node: len(node.shape),
    np.shape: lambda node: tuple(node.shape),
    np.size: _numpy_size,
}


# -------------------------------------------------------------------------- printing
_INFIX = {"add": "+", "sub": "-", "mul": "*", "div": "/", "matmul": "@"}


def expression(node: Node, depth: int = 12) -> str:
    """A readable formula for ``node`` (leaves by name, small constants by value).

    >>> import naivegraph.static as ns
    >>> with ns.Graph():
    ...     x = ns.placeholder("x", shape=())
    ...     y = 2.0 * x + 1.0
    >>> expression(y)
    '(2.0 * x) + 1.0'
    """
    return _expr(node, depth, top=True)


def _expr(node: Node, depth: int, top: bool = False) -> str:
    if isinstance(node, Constant):
        value = node.value
        if np.size(value) == 1:
            return repr(
                value.item()
                if isinstance(value, np.generic)
                else (np.asarray(value).item() if not _is_weak_scalar(value) else value)
            )
        return node.name
    if not isinstance(node, Operation):
        return node.name
    if depth <= 0:
        return node.name
    name = node.op.name
    args = [_expr(i, depth - 1) for i in node.inputs]
    if name in _INFIX and len(args) == 2:
        text = f"{args[0]} {_INFIX[name]} {args[1]}"
        return text if top else f"({text})"
    if name == "neg":
        return f"-{args[0]}"
    if name == "pow_scalar":
        return (
            f"{args[0]} ** {node.attrs['exponent']!r}"
            if top
            else f"({args[0]} ** {node.attrs['exponent']!r})"
        )
    extra = [f"{k}={v!r}" for k, v in node.attrs.items()]
    return f"{name}({', '.join(args + extra)})"
