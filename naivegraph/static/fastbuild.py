"""The fast layer of static graph building: ``nodes.apply`` for operands that are nodes.

:func:`naivegraph.static.nodes.apply` builds every operation node: it captures operands
of an enclosing graph, refuses dynamic tensors, finds the graph, makes constants of
literal operands, infers the output's shape and dtype, makes the node and registers it
(unique name, the user's line, creation order).  For the usual call, every operand a
plain node of one graph built outside any branch or loop body, most of that decides
nothing, and the inference gives the same answer for the same op, attributes, input
dtypes and shapes.  :func:`apply` is that call with the decisions taken once:

``inference by pattern``
    ``nodes.infer`` is asked once per (op, attributes, each input's dtype and shape, the
    value of an input that is a Python number); its (shape, dtype) is kept and the next
    node of that pattern reuses it, the same tuple and dtype objects.  Only answers are
    kept: an op that cannot be built is asked every time, and raises as it would.  What
    ``infer`` reads of its inputs is exactly that key (``_probe`` builds dummies of
    their dtypes and shapes, and keeps a Python number's value), so the answer is the
    same.  Ops that infer themselves (control flow) and ``group`` are not cached.
``one function``
    The node's attributes are set in ``Node.__init__``'s order (so CPython keeps them in
    its compact per-class layout), its name counted as ``Graph._unique_name`` counts,
    its build site found by the same frame walk as ``graph.build_site``, with one
    ``(file, line)`` tuple shared by every node built on that line.  Whether an op's
    nodes are built here at all (not variadic, not ``group``, no ``infer_output``) is
    read once per op (~0.5 k instructions per node less).
``site by operator`` (switch: ``site_by_operator``)
    Finding the user's line walks out of the package frame by frame, and CPython 3.11
    makes a frame object for each frame it looks at (``-y`` passes through four:
    ``__neg__``, ``_op``, ``_ng_apply``, ``nodes.apply``), so the walk cost ~5 k of
    the ~30 k instructions of a node.  A frame suspended at an operator instruction
    (``-y``, ``a * b``, ``x[i]``, ``a < b``; not a call, whose callee can be anything)
    is executing that operator: the frames below it are the operator's own dispatch.
    When a walk finds the user's frame at such an instruction, the instruction (code
    object and offset), the op, the depth it was found at and the site are remembered;
    the next node of that op looks only at the frame at that depth (the user's frame,
    whose frame object exists already), and if it is suspended at the same instruction,
    taught by the same op at the same depth, the site is the same: same code, same
    offset, same line.  Anything else walks as before.  Under a tracer
    (``sys.gettrace()``: a debugger can move ``f_lineno``) nothing is remembered or
    reused.  This trusts the package's own dispatch: a user class whose operator calls
    the private ``_op`` or ``_ng_apply`` of a node directly, met by an instruction
    that also applied the operator to a plain node, could be attributed to that
    instruction's line instead of its own.  Measured below.

Measured with :mod:`naivegraph.static.fastgraph` (forward and backward), on the chain
``y = -y`` of ``benchmarks/bench_scale.py``:

- instructions per node (``python benchmarks/instructions_static_chain.py TREE``,
  callgrind, 20,000 nodes, garbage collection included), 37fbf30 -> this: build
  57,806 -> 32,137, forward 44,749 -> 12,504, backward 50,330 -> 16,868 (152.9 k ->
  61.5 k in all).  A third of what building still costs is ``build_site``'s walk out
  of the package (CPython 3.11 makes a frame object for each frame it looks at:
  ~10 k instructions for the four frames of ``-y``) and a seventh is the cyclic
  garbage collector scanning the growing graph.
- a million nodes, wall clock, one process each, 2 cores shared with other jobs (load
  average ~4, so both are slow): 37fbf30 build 11.2 s, forward 10.1 s, backward 9.1 s,
  996 MB peak (``ru_maxrss``); this 7.6 s, 2.9 s, 2.9 s, 572 MB.  ``python
  benchmarks/bench_scale.py --against-torch 1e6 --rounds 1 --with-static`` in the same
  hour: static 13.5 s and 541 MB more than before the chain, PyTorch eager 7.9 s and
  607 MB (ratios 1.70 and 0.89: the issue's 0.5 is not met).
- ``site by operator`` and reading once per op whether it is taken, with
  ``fastgraph``'s ``whole-graph order`` and ``one pass``: instructions per node (same
  command) 8c5bb93 -> this, build 33,039 -> 28,356 (the site) -> 27,888, forward
  13,845 -> 9,950, backward 17,529 -> 11,221 (64.4 k -> 49.1 k in all).  Bytes per
  node are unchanged (375 B built, ``tracemalloc``: the node 176 with its twelve
  attributes, its ``attrs`` dict 64, its name 57, its inputs tuple 48, the graph's list
  and name table 30).  A million nodes (``bench_scale.static``'s chain, each phase
  timed, peak ``ru_maxrss``), one process each, 8c5bb93 and this in turns, load ~4:
  build 8.9, 7.9 -> 7.2, 6.2 s, forward 3.5, 3.3 -> 2.8, 2.7 s,
  backward 3.2, 3.4 -> 2.2, 2.2 s, peak 542 -> 533 MB more than before the chain.
  ``bench_scale.py --against-torch 1e6 --rounds 1 --with-static``, three runs each in
  turns (load 2.6-3.7): static / torch time 1.46, 1.71, 1.83 -> 1.56, 1.34, 1.30,
  memory 0.89 -> 0.88.  What building still costs beyond Python's calls is the cyclic
  collector (~6.6 k instructions per node at 20,000 nodes, more at a million), which
  ran in the user's own code between operators until ``operators`` below.

``operators`` (switch: ``operators_direct``)
    ``-y``, ``x + y``, ``x - y``, ``x * y`` and ``x / y`` are the Node class's own
    functions here (``nodes.Node`` takes them from :func:`operators`): when both
    operands are nodes :func:`apply` is called from the operator itself (not through
    ``OpMethods._op``, ``Node._ng_apply`` and ``nodes.apply``), with the cyclic
    collector paused (``gc.disable`` / ``gc.enable`` in ``finally``, left alone when
    the program had paused it), as dynamic mode's negation does.  Every tracked object
    a node needs is then allocated inside the pause, so a loop of operators, which
    allocates nothing else, runs no collection at all: nothing is collected less (the
    allocations still count, and the collector runs at the next allocation made with
    it on), but the full collections that rescanned the growing graph are gone.  As
    there, another thread's ``gc.disable()`` inside one node's window is undone by
    this ``gc.enable()``.  A million-node chain
    (``bench_scale.static``'s, each phase timed in a fresh process, this switch on and
    off in turns, load ~0.5): build 2.90-3.95 s against 4.65-5.84 s; ``gc.callbacks``
    count one young collection (0.22 s) during it instead of 3,914 young, 356 middle
    and 13 full ones.

With the layer off (``NAIVEGRAPH_FAST=0``, ``fast.disabled()``) ``nodes.apply`` runs
its readable body; a call this module does not take (a literal operand, a variadic op,
a branch or loop body, a node of another class) returns None and does the same.
"""

from __future__ import annotations

import dis
import gc
import os
import sys
from typing import Any, Callable

import numpy as np

from .. import fast
from ..ops import OPS
from ..ops.methods import _NO_ATTRS
from .graph import _PACKAGE_DIR, _inside_package, _local, get_default_graph

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
    key: list = [op, _attrs_key(attrs) if attrs else ()]
    for node in args:
        if type(node) not in plain:
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
            key.append((type(value), value))
        else:
            key.append((node.dtype, node.shape))
    if graph is None or key[1] is None:
        return None
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
    node = operation.__new__(operation)
    node.op = op  # Node.__init__'s order
    node.inputs = inputs
    node.attrs = dict(attrs) if attrs else {}
    node.shape, node.dtype = known
    # graph._unique_name
    by_name, reserved, counters = graph._by_name, graph._reserved, graph._counters
    base = op.name
    count = counters.get(base, 0) + 1
    name = f"{base}_{count}"
    while name in by_name or name in reserved:
        count += 1
        name = f"{base}_{count}"
    counters[base] = count
    node.name = name
    node.graph = graph
    node._value = None
    node.grad = None
    node.is_gradient = bool(graph._gradient_depth)
    node.retains_grad = False
    node.built_at = _site(op, 2)  # 1 is nodes.apply: inside, not looked at
    graph.nodes.append(node)
    by_name[name] = node
    graph.version += 1
    return node


# -- operators --------------------------------------------------------------------------
operators_direct = True  # the switch of ``operators``
#: (the Operation class, nodes.infer): :mod:`.nodes` gives them once both exist
building: tuple | None = None
_gc_isenabled, _gc_disable, _gc_enable = gc.isenabled, gc.disable, gc.enable


def operators(readable: Any) -> tuple:
    """``__neg__``, ``__add__``, ``__sub__``, ``__mul__`` and ``__truediv__`` for the Node
    class: this module's :func:`apply` called by the operator itself, the collector
    paused while it builds, or ``readable``'s method where :func:`apply` declines (a
    Python number or array operand, a node of another class, a branch or loop body).

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
