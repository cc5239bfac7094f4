"""The fast layer of static graph building: ``nodes.apply`` for operands that are nodes
or Python numbers.

:func:`naivegraph.static.nodes.apply` builds every operation node: it captures operands
of an enclosing graph, refuses dynamic tensors, finds the graph, makes constants of
literal operands, infers the output's shape and dtype, makes the node and registers it
(unique name, the user's line, creation order).  For the usual call, every operand a
plain node of one graph (or a Python number) built outside any branch or loop body,
most of that decides nothing, and the inference gives the same answer for the same
op, attributes, input dtypes and shapes.  :func:`apply` is that call with the decisions taken once:

``inference by pattern``
    ``nodes.infer``'s (shape, dtype) is kept per (op, attributes, each input's dtype
    and shape, the value of an input that is a Python number, and then the default
    dtype), exactly what ``infer`` reads of its inputs; only answers are kept, so an op
    that cannot be built raises every time.  Control flow and ``group`` are not cached.
``one function``
    The node is made as ``Node.__init__`` makes it (the same fields, the number of its
    name counted as ``Graph._next_count`` counts, one ``(file, line)`` tuple shared by
    the nodes of a line), and whether an op's nodes are built here is read once per op.
``number operands``
    A Python number operand becomes the ``Constant`` node ``nodes.apply`` makes of it:
    one per use (a listing shows each), registered before its user, at its user's line.
``shared numbers``
    A name's number is an int of 32 bytes above 256: a node numbered as one built just
    before (``mul_7``, ``add_7`` of ``y * a + b``) takes its int from a small table.
``site by operator`` (switch: ``site_by_operator``)
    Finding the user's line walks out of the package frame by frame, and CPython makes
    a frame object for each frame it looks at.  A user's frame suspended at an operator
    instruction (``-y``, ``a * b``; not a call) is executing that operator, so the site
    found there is remembered with the instruction, the op and the depth for the next
    node of that op there (not under a tracer, which can move ``f_lineno``).  A user
    class whose operator calls a node's private ``_op`` or ``_ng_apply`` directly could
    be given the line of another use of that instruction.
``operators`` (switch: ``operators_direct``)
    ``-y``, ``x + y``, ``x - y``, ``x * y`` and ``x / y`` of two nodes call :func:`apply`
    from the operator itself with the cyclic collector paused (restored in ``finally``,
    left alone when the program had paused it), as dynamic mode's negation does: no
    full collection rescans the growing graph (another thread's ``gc.disable()`` inside
    one node's window is undone).

With the layer off (``NAIVEGRAPH_FAST=0``, ``fast.disabled()``) ``nodes.apply`` runs
its readable body; a call this module does not take (an array operand, a variadic op,
a branch or loop body, a node of another class) returns None and does the same.  What
each trick saves: ``benchmarks/README.md``, "The fast layer, module by module".
"""

from __future__ import annotations

import dis
import gc
import os
import sys
from typing import Any, Callable

import numpy as np

from ..ops import OPS
from ..ops.core import default_float
from ..ops.methods import _NO_ATTRS
from ..static import nodes
from ..static.graph import _PACKAGE_DIR, _inside_package, _local, get_default_graph
from ..static.nodes import Constant, Operation, infer
from . import tricks as fast

#: (op, attrs, inputs) -> (shape, dtype): ``infer``'s answers
_INFERRED: dict[tuple, tuple] = {}
_INFERRED_MAX = 4096  # fused ops of optimised graphs are new OpDefs: keep it bounded
_HASHABLE_ATTR = (int, float, bool, complex, str, type(None))
_WEAK = (int, float, bool, complex)

#: file -> line -> the ``(file, line)`` tuple every node built there shares
_SITES: dict[str, dict[int, tuple[str, int]]] = {}

site_by_operator = True  # the switch of ``site by operator``
#: id(code) -> (code, {offset of an operator: (op, depth, site)})
_OPERATOR_SITES: dict[int, tuple[Any, dict[int, tuple[Any, int, tuple[str, int]]]]] = {}
_OPERATORS = frozenset(
    dis.opmap[name]
    for name in ("UNARY_NEGATIVE", "UNARY_INVERT", "BINARY_OP", "BINARY_SUBSCR", "COMPARE_OP")
    if name in dis.opmap
)
_depths: dict[Any, int] = {}  # op -> how deep the user's operator was when it last built one

_plain_types: dict[type, tuple] = {}  # Operation -> the node classes taken here
_taken_ops: dict[Any, bool] = {}  # op -> may its nodes be built here (fields of a frozen OpDef)


def _plain(operation: Any) -> tuple:
    """The exact node classes whose nodes :func:`apply` takes (not their subclasses)."""
    node: Any = operation.__base__
    found = tuple(c for c in node.__subclasses__() if c.__module__ == node.__module__)
    _plain_types[operation] = found
    return found


def _attrs_key(attrs: dict) -> tuple | None:
    parts = []
    for name, value in attrs.items():
        if type(value) not in _HASHABLE_ATTR:
            return None
        parts.append((name, type(value), value))  # 2 and 2.0 give different dtypes
    return tuple(parts)


def _shared(filename: str, line: int) -> tuple[str, int]:
    """The ``(file, line)`` tuple every node built on that line shares."""
    lines = _SITES.get(filename)
    if lines is None:
        lines = _SITES[filename] = {}
    site = lines.get(line)
    if site is None:
        if len(lines) > 65536:
            lines.clear()
        site = lines[line] = (filename, line)
    return site


def _walk(op: Any, depth: int) -> tuple[str, int] | None:
    """``graph.build_site``: the innermost frame outside the package, from ``depth``
    frames above :func:`apply` outwards; an operator's site is remembered (``_learn``)."""
    inside_package = _inside_package
    frame: Any = sys._getframe(depth + 2)  # 1 is _site, 2 is apply
    while frame is not None:
        filename = frame.f_code.co_filename
        inside = inside_package.get(filename)
        if inside is None:
            inside = inside_package[filename] = os.path.abspath(filename).startswith(_PACKAGE_DIR)
        if not inside:
            site = _shared(filename, frame.f_lineno)
            _learn(op, frame, depth, site)
            return site
        frame = frame.f_back
        depth += 1
    return None


def _learn(op: Any, frame: Any, depth: int, site: tuple[str, int]) -> None:
    """Remember that the operator ``frame`` is executing built an ``op`` node ``depth``
    frames below it through the package only: the next ``op`` node it builds at that
    depth is built at ``site`` too (see ``site by operator``)."""
    code = frame.f_code
    lasti = frame.f_lasti
    if sys.gettrace() is not None or code.co_code[lasti] not in _OPERATORS:
        return
    entry = _OPERATOR_SITES.get(id(code))
    if entry is None or entry[0] is not code:
        if len(_OPERATOR_SITES) >= 4096:
            _OPERATOR_SITES.clear()
        entry = _OPERATOR_SITES[id(code)] = (code, {})  # the code kept: its id stays its own
    entry[1][lasti] = (op, depth, site)
    if len(_depths) >= 4096:  # ops made on the fly: keep it bounded
        _depths.clear()
    _depths[op] = depth


def _site(op: Any, depth: int) -> tuple[str, int] | None:
    """``graph.build_site`` of the node :func:`apply` builds, from ``depth`` frames above it:
    the remembered site of an operator when the frame at a usual depth is executing
    one, else the walk."""
    guess = _depths.get(op)
    if guess is not None and site_by_operator and sys.gettrace() is None:
        try:
            frame = sys._getframe(guess + 1)  # 1 is apply
        except ValueError:
            frame = None
        if frame is not None:
            code = frame.f_code
            entry = _OPERATOR_SITES.get(id(code))
            if entry is not None and entry[0] is code:
                known = entry[1].get(frame.f_lasti)
                if known is not None and known[0] is op and known[1] == guess:
                    return known[2]
    return _walk(op, depth)


#: ``nodes.apply`` itself, which :func:`build` replaces
readable_apply = nodes.apply


def build(op: Any, args: tuple, attrs: dict) -> Any:
    """``nodes.apply`` (the seam it replaces): :func:`apply` where it takes the call, the
    readable build where it declines."""
    if fast.enabled:
        built = apply(op, args, attrs, Operation, infer)
        if built is not None:
            return built
    return readable_apply(op, args, attrs)


def apply(op: Any, args: tuple, attrs: dict, operation: Any, infer: Callable) -> Any:
    """``nodes.apply(op, args, attrs)`` when every operand is a plain node of one graph
    outside any branch or loop body; None (nothing done) for any other call."""
    taken = _taken_ops.get(op)
    if taken is None:
        if len(_taken_ops) >= _INFERRED_MAX:  # ops made on the fly: keep it bounded
            _taken_ops.clear()
        taken = _taken_ops[op] = not (
            op.variadic or op.name == "group" or getattr(op, "infer_output", None) is not None
        )
    if not taken:
        return None
    stack = getattr(_local, "stack", None)
    default = stack[-1] if stack else get_default_graph()
    if default.outer is not None:
        return None
    plain = _plain_types.get(operation) or _plain(operation)
    graph = None
    numbers = False  # a Python number among the operands: a constant to make
    # the default dtype decides the answer: a Python number (int * 2.5), an integer or
    # boolean operand (int / int, exp(int), int ** 2.5 with the number an attribute)
    by_default = False
    key: list = [op, _attrs_key(attrs) if attrs else ()]
    for node in args:
        kind = type(node)
        if kind in _WEAK:  # a Python number: a constant of its own, as nodes.apply makes
            numbers = by_default = True
            key.append((kind, node))
            continue
        if kind not in plain:
            return None
        owner = node.graph
        if owner is not graph:
            if graph is not None:
                return None  # two graphs: the readable path refuses them
            graph = owner
        if owner is None:
            return None  # an unregistered constant: the readable path registers it
        value = node._value if node.kind == "constant" else None
        if value is not None and type(value) in _WEAK:
            by_default = True
            key.append((type(value), value))
        else:
            dtype = node.dtype
            if dtype is None or dtype.kind not in "fc":
                by_default = True
            key.append((dtype, node.shape))
    if graph is None or key[1] is None or (stack and graph is not default):
        return None  # inside `with other:`, nodes of a graph: the readable path refuses them
    if by_default:  # float32 or float64 by the default dtype
        key.append(default_float())
    if numbers:
        inputs = tuple([_constant(a) if type(a) in _WEAK else a for a in args])
        if None in inputs:
            return None
    else:
        inputs = tuple(args)
    found_key = tuple(key)
    known = _INFERRED.get(found_key)
    if known is None:
        shape, dtype = infer(op, list(inputs), attrs)  # raises as the readable path does
        known = (
            None if shape is None else tuple(shape),
            None if dtype is None else np.dtype(dtype),
        )
        if len(_INFERRED) >= _INFERRED_MAX:
            _INFERRED.clear()
        _INFERRED[found_key] = known
    site = _site(op, 2)  # 1 is nodes.apply: inside, not looked at
    if numbers:
        for constant in inputs:
            if constant.graph is None:
                _register(graph, constant, "const", site)
    node = operation.__new__(operation)
    node.op = op  # Node.__init__'s order
    node.inputs = inputs
    node.attrs = dict(attrs) if attrs else _NO_ATTRS
    node.shape, node.dtype = known
    node.graph = None  # Node.__init__'s fields; _register names and registers it
    node._value = None
    node.grad = None
    node.is_gradient = False
    node.retains_grad = False
    node.gradient_of = None
    _register(graph, node, op.name, site)
    return node


def _constant(value: Any) -> Any:
    """``Constant(value)`` of a Python number, not registered (``nodes.apply`` registers
    it with the node that uses it); None for an int numpy has no dtype for."""
    dtype = _NUMBER_DTYPES.get(type(value))
    if dtype is None:
        try:
            dtype = np.result_type(value)
        except (OverflowError, TypeError):
            return None  # the readable path raises its own error
    node = Constant.__new__(Constant)
    node.op = "constant"  # Node.__init__'s fields
    node.inputs = ()
    node.attrs = _NO_ATTRS
    node.shape = ()
    node.dtype = dtype
    node._name = "<unregistered>"
    node.graph = None
    node._value = value  # kept weak: a Python number
    node.grad = None
    node.is_gradient = False
    node.retains_grad = False
    node.built_at = None
    node.gradient_of = None
    return node


#: the dtype of a Python number of each type (``np.result_type``); ints go by value
_NUMBER_DTYPES = {t: np.result_type(t(1)) for t in (float, bool, complex)}


#: number -> the int a name made lately holds (``shared numbers``), a few dozen at most
_numbers: dict[int, int] = {}


def _register(graph: Any, node: Any, base: str, site: Any) -> None:
    """``graph._register(node, None, base)`` for a node named on demand, built at ``site``."""
    counters, given, reserved = graph._counters, graph._by_name, graph._reserved
    count = counters.get(base, 0) + 1
    if given or reserved:  # graph._next_count: a name given may be the next one
        name = f"{base}_{count}"
        while name in given or name in reserved:
            count += 1
            name = f"{base}_{count}"
    counters[base] = count
    shared = _numbers.get(count)
    if shared is None:
        if len(_numbers) >= 64:
            _numbers.clear()
        _numbers[count] = count
    else:
        count = shared  # the same number: one int object
    node._name = count
    node.graph = graph
    node.built_at = site
    if graph._gradient_depth:
        node.is_gradient = True
    numbered = graph._numbered.get(base)
    if numbered is None:
        numbered = graph._numbered[base] = []
    numbered.append(node)
    graph.nodes.append(node)
    graph.version += 1


# -- operators --------------------------------------------------------------------------
operators_direct = True  # the switch of ``operators``
#: what its operators build nodes with: the Operation class and nodes.infer
building: tuple = (Operation, infer)
_gc_isenabled, _gc_disable, _gc_enable = gc.isenabled, gc.disable, gc.enable


def operators(readable: Any) -> tuple:
    """``__neg__``, ``__add__``, ``__sub__``, ``__mul__`` and ``__truediv__`` for the Node
    class: this module's :func:`apply` called by the operator itself, the collector
    paused while it builds, or ``readable``'s method where :func:`apply` declines (an
    array operand, a node of another class, a branch or loop body).

    >>> import naivegraph.static as ns
    >>> with ns.Graph():
    ...     y = -ns.Variable(2.0, name="w")
    >>> y
    <Operation 'neg_1' op=neg shape=() dtype=float32>
    """
    return (
        _operator(OPS["neg"], readable.__neg__, unary=True),
        _operator(OPS["add"], readable.__add__),
        _operator(OPS["sub"], readable.__sub__),
        _operator(OPS["mul"], readable.__mul__),
        _operator(OPS["div"], readable.__truediv__),
    )


def _operator(op: Any, readable: Callable, unary: bool = False) -> Callable:
    # two functions, not one taking ``*operands``: that tuple (a tracked object) would be
    # allocated before the pause, and a collection could run there
    def unary_operator(x):
        if not (operators_direct and fast.enabled):
            return readable(x)
        paused = _gc_isenabled()
        if paused:
            _gc_disable()
        try:
            built = apply(op, (x,), _NO_ATTRS, *building)  # type: ignore[misc]
        finally:
            if paused:
                _gc_enable()
        return readable(x) if built is None else built

    def binary_operator(x, y):
        if not (operators_direct and fast.enabled):
            return readable(x, y)
        paused = _gc_isenabled()
        if paused:
            _gc_disable()
        try:
            built = apply(op, (x, y), _NO_ATTRS, *building)  # type: ignore[misc]
        finally:
            if paused:
                _gc_enable()
        return readable(x, y) if built is None else built

    method = unary_operator if unary else binary_operator
    method.__name__ = method.__qualname__ = readable.__name__
    method.__doc__ = readable.__doc__
    return method
