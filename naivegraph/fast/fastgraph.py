"""The fast layer of ``graph.forward`` and ``graph.backward``: whole-graph runs without
a per-node plan.

``graph.forward(fetches=...)`` builds a :class:`~naivegraph.static.executor.Plan` (a
slot per node, a step per operation with the slots it reads and frees) and runs it,
every forward in its own silenced error state; ``graph.backward(loss)`` asks a closure
for each node's operands and ``OpDef.pullback`` for the gradients.  On a long graph
(the million-op chain of ``benchmarks/bench_scale.py``) that bookkeeping is most of
the time.  :func:`forward` runs the same nodes in the same order in one silenced error
state, each value written on its node and released after its last reader where the
plan releases it (a failed run puts back the values of the run before);
:func:`backward` is ``gradients.reverse_sweep`` with the operands and ``pullback``
inline: the same rules, fix-ups and summing order, the same arrays bit for bit.

>>> import naivegraph.static as ns
>>> from naivegraph import fast
>>> with ns.Graph() as g:
...     w = ns.Variable(1.5, name="w")
...     y = -(-(-w))
>>> g.forward(fetches=[y]), g.backward(y), float(w.grad)
([np.float32(-1.5)], None, -1.0)
>>> with fast.disabled():
...     g.forward(fetches=[y]), g.backward(y), float(w.grad)
([np.float32(-1.5)], None, -1.0)

Not taken (the readable path runs): ``check_numerics``, a run that fetches an update, a
placeholder not fed, an op whose forward is not an op-table forward.  Smaller tricks:
``direct neg`` negates a float numpy scalar with ``-``; ``whole-graph order`` (switch:
``order_cache``) uses ``graph.nodes`` itself when a run needs every node (found by the
order's walk, no list built), remembered per graph with its ``version``; ``one pass``
collects leaves and Variables in one pass; ``last reads`` finds each value's last
reader in one pass backwards, holding only the nodes read later and not yet reached (a
bit mask of inputs per node), leaving out the values the backward reads; ``flow
complement`` holds the operations no gradient flows through, not those it flows
through; ``compact shapes`` keeps the freed shapes as the masks and the few shapes
that differ from ``node.shape`` (:class:`FreedShapes`); ``direct number`` calls a
promoting forward's ufunc on a numpy float and a Python float directly; ``two-input
sweep`` runs a two-input op's partials without lists.  What they save:
``benchmarks/README.md``, "The fast layer, module by module" and "Static million-op
chain, round 5".
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Mapping
from typing import Any, Sequence

import numpy as np

from ..ops import OPS, Meta
from ..ops.core import _in_dtype_of
from ..static.executor import (
    _read_only_if_view,
    _shares_leaf_storage,
    collect_feeds,
    run_forward,
    shape_of,
    topological_order,
    without_updates,
)
from ..static.gradients import _check_differentiable, _seed_value, numeric_backward, store_gradients
from ..static.graph import Graph, RunState
from ..static.nodes import Constant, Node, Operation, Placeholder, Variable
from . import tricks as fast
from .fastrun import _PROMOTED_CODE, _scalar_keeps_dtype, unquiet

DECLINED: Any = object()  # a run left to the readable path

_plain_forward: dict[Any, Any] = {}  # op -> its forward without the silencing wrapper


def _negative(x: Any) -> Any:
    """The op table's ``neg`` forward: ``np.negative``, whose bits a float's ``-`` gives
    too (one sign flip) at a tenth of the cost; anything else goes to that forward."""
    if type(x) is np.float64 or type(x) is np.float32:
        return -x
    return _neg_forward(x)


_neg_forward = unquiet(OPS["neg"].forward)
_DIRECT = {"neg": _negative}  # forwards with a direct line for the values met most


def _unwrapped(op: Any) -> Any:
    """``op.forward`` without ``quiet``'s wrapper (or its direct line), False if it has
    none (then the readable path runs: a forward that sets no error state must not run
    under ours)."""
    found = _plain_forward.get(op)
    if found is None:
        inner = unquiet(op.forward)
        found = _plain_forward[op] = False if inner is op.forward else _DIRECT.get(op.name, inner)
    return found


# ----------------------------------------------------------------------------- order
order_cache = True  # the switch of ``whole-graph order``
#: graph -> (graph.version, len(graph.nodes), ids of the roots) of a run that needed
#: every node of the graph
_WHOLE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _order(graph: Graph, roots: list) -> list:
    """``topological_order(graph, roots)``; ``graph.nodes`` itself when the last run
    found that these roots need every node and the graph has not changed since."""
    if not order_cache:
        return topological_order(graph, roots)
    nodes = graph.nodes
    key = (graph.version, len(nodes), tuple([id(n) for n in roots]))
    if _WHOLE.get(graph) == key:
        return nodes
    if _needs_every_node(nodes, roots):  # topological_order would be a copy of nodes
        _WHOLE[graph] = key
        return nodes
    return topological_order(graph, roots)


def _needs_every_node(nodes: list, roots: list) -> bool:
    """Whether ``topological_order`` of ``roots`` is every node: its walk backwards,
    stopped at the first node not wanted, with no list built (8 bytes a node that
    the first run of a long graph held at its peak)."""
    wanted = set(roots)
    discard, update = wanted.discard, wanted.update
    for node in reversed(nodes):
        if node not in wanted:
            return False
        discard(node)
        update(node.inputs)
    return True


# ----------------------------------------------------------------------------- forward
def forward(
    graph: Graph,
    feeds: Mapping | None,
    named: Mapping[str, Any],
    fetches: Sequence | None,
    free_intermediates: bool | None,
    check_numerics: bool,
) -> Any:
    """``executor.run_forward``, faster where it can (``run_forward`` itself elsewhere)."""
    if check_numerics:
        return run_forward(graph, feeds, named, fetches, free_intermediates, check_numerics)
    fed = collect_feeds(graph, feeds, named)
    if fetches is None:
        targets = without_updates(graph.nodes)
        free = bool(free_intermediates)
    else:
        targets = [graph.resolve(f) for f in fetches]
        free = True if free_intermediates is None else free_intermediates
    with fast.paused_gc():
        order = targets if fetches is None else _order(graph, targets)
        prepared = _prepare(order, fed)
        if prepared is not DECLINED:
            values, saving, leaves, variables, before = prepared
            # a whole-graph run fetches every node: nothing is freed
            dying = None
            if free and fetches is not None:
                dead = _not_flowing(order, check=False) if saving else None
                dying = _last_reads(order, set(targets), dead)
            shapes = FreedShapes(order, dying)
            try:
                arrays = _run(order, values, dying, shapes)
            except BaseException:
                for node in order:  # the values of the run before, as the plan leaves them
                    if type(node) is Operation:
                        node._value = before.get(node)
                raise
    if prepared is DECLINED:
        return run_forward(graph, feeds, named, fetches, free_intermediates, check_numerics)
    result = None
    if fetches is not None:
        result = []
        for node in targets:  # Plan.fetched, of the values as computed
            kind = type(node)
            value: Any = values[node] if kind is Variable or kind is Placeholder else node._value
            if _shares_leaf_storage(value, leaves):
                value = value.copy()
            result.append(value)
    _store(graph, order, values, leaves, arrays)
    graph.last_run = RunState(shapes, {n: values[n] for n in variables})
    return result


def _store(graph: Graph, order: list, values: dict, leaves: list, arrays: list) -> None:
    """Each node's ``value`` after a run, as ``run_forward`` leaves them: None for an
    operation or placeholder whose value was not kept (the run wrote the operations' own
    and freed them); a kept array that views a leaf made read-only (``arrays``: the
    operations whose value the run made an array)."""
    if order is not graph.nodes:  # None outside the run: order is a part of graph.nodes
        ahead = iter(order)
        wanted = next(ahead, None)
        for node in graph.nodes:
            if node is wanted:
                wanted = next(ahead, None)
            elif type(node) is Operation or type(node) is Placeholder:
                node._value = None
    if leaves:
        for node in arrays:
            value = node._value
            if value is not None:
                node._value = _read_only_if_view(value, leaves)
    for node in values:
        if type(node) is Placeholder:
            node._value = values[node]


class FreedShapes(Mapping):
    """``RunState.shapes`` of a run here: node -> the shape its value had, for each value
    the run freed, as ``run_forward``'s dict holds them (same keys, order and shapes).

    ``compact shapes``: the run's order and its masks of freed inputs (from
    :func:`_last_reads`, one byte a node) say which values were freed and in which
    order; most had the shape the node was built with, so only the others are kept by
    node (``odd``).  The dict (~50 bytes a node) is made the first time anything reads
    this mapping (a drawing asks whether a node was freed); the backward here reads
    ``odd`` alone: a freed node's value is None, and the shape of a node with no value
    and no odd shape is ``node.shape``, what ``gradients._run_shape`` finds too.  When
    the order is ``graph.nodes`` itself, the nodes built since are appended after it:
    the run's part is unchanged (``Graph._rollback`` removes only nodes of a build)."""

    __slots__ = ("order", "masks", "odd", "_dict")

    def __init__(self, order: list, masks: Any) -> None:
        self.order = order
        self.masks = b"" if masks is None else masks  # nothing freed without them
        self.odd: dict = {}  # node -> its value's shape where that is not node.shape
        self._dict: dict | None = None

    def _all(self) -> dict:
        found = self._dict
        if found is None:
            found = self._dict = {}
            odd = self.odd
            index = None
            for node, mask in zip(self.order, self.masks):  # _run's frees, replayed
                if not mask:
                    continue
                dying = [i for k, i in enumerate(node.inputs) if mask >> k & 1]
                if len(dying) > 1:  # freed in slot order
                    if index is None:
                        index = {n: k for k, n in enumerate(self.order)}
                    dying.sort(key=index.__getitem__)
                for i in dying:
                    found[i] = odd[i] if i in odd else i.shape
        return found

    def __getitem__(self, node: Any) -> Any:
        return self._all()[node]

    def get(self, node: Any, default: Any = None) -> Any:
        return self._all().get(node, default)

    def __contains__(self, node: Any) -> bool:
        return node in self._all()

    def __iter__(self) -> Any:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


#: op -> its forward (unwrapped) if a run here may call it, else False
_runnable: dict[Any, Any] = {}


def _runnable_forward(op: Any) -> Any:
    forward = plain if (plain := _unwrapped(op)) and not op.stateful else False
    if op.name == "assign":
        forward = False
    _runnable[op] = forward
    return forward


def _prepare(order: list, fed: dict) -> Any:
    """(node -> value of each Variable and placeholder, does an op save values, the
    leaves' arrays, the Variables, node -> the value an operation holds from the run
    before) of a run of ``order``, or DECLINED."""
    values: dict[Node, Any] = {}
    leaves: list = []
    variables: list = []
    before: dict[Node, Any] = {}  # what a failed run puts back
    saving = False
    runnable = _runnable
    for node in order:
        kind = type(node)
        if kind is Operation:
            if node._value is not None:
                before[node] = node._value
            op = node.op
            forward = runnable.get(op)
            if forward is None:
                forward = _runnable_forward(op)
            if forward is False:
                return DECLINED
            if op.saves:
                saving = True
            continue
        if kind is Constant:  # read off the node by the run: not in ``values``
            value = node._value
            if isinstance(value, np.ndarray):
                leaves.append(value)
            continue
        if kind is Variable:
            value = node._state[0]
            variables.append(node)
        elif kind is Placeholder:
            if node not in fed:
                return DECLINED  # the readable plan names what needs it
            value = fed[node]
        else:
            return DECLINED
        values[node] = value
        if isinstance(value, np.ndarray):
            leaves.append(value)
    return values, saving, leaves, variables, before


def _last_reads(order: list, targets: set, dead: set | None) -> Any:
    """Per node of ``order``, the inputs whose values it frees: bit ``k`` for
    ``inputs[k]`` (a node read twice by one reader counts at its first place), as a
    plan frees them: an operation's value after its last reader, unless it is a target
    or a value the backward reads (``kept_for_backward``: what a differentiable op
    through which a gradient flows saves; ``dead`` holds the operations no gradient
    flows through, None when no op of the run saves anything).

    One pass backwards: the first reader met of a node is its last one.  ``pending``
    holds only nodes read later and not yet reached (where that reader is), not every
    node; the masks are a bytearray while they fit in 8 bits (1 byte a node where a
    dict of last readers took ~50 and a set of kept nodes ~40 more)."""
    masks: Any = bytearray(len(order))
    k = len(order)
    if dead is None:  # nothing kept for a backward: no bit is ever cleared, a set will do
        seen: set = set()
        for node in reversed(order):
            k -= 1
            seen.discard(node)
            if type(node) is not Operation:
                continue
            mask = 0
            bit = 1
            for inp in node.inputs:
                if inp not in seen:
                    seen.add(inp)
                    if type(inp) is Operation and inp not in targets:
                        mask |= bit
                bit <<= 1
            if mask:
                if mask > 255 and type(masks) is bytearray:
                    masks = list(masks)
                masks[k] = mask
        return masks
    pending: dict = {}  # node read later, not reached yet -> (its last reader's index, bit)
    saved_by = _saved_by
    for node in reversed(order):
        k -= 1
        last = pending.pop(node, None)  # every reader of it comes after it: done with it
        if type(node) is not Operation:
            continue
        op = node.op
        kept: Any = ()
        if dead is not None and op.saves and node not in dead:  # it flows and saves
            kept = saved_by.get(op)
            if kept is None:
                kept = saved_by[op] = (
                    frozenset(i for i in range(len(node.inputs)) if op.saves_input(i)),
                    op.saves_out,
                )
            if kept[1] and last is not None:  # its own value: not freed by its last reader
                masks[last[0]] &= ~last[1]
            kept = kept[0]
        mask = 0
        bit = 1
        for position, inp in enumerate(node.inputs):
            reader = pending.get(inp)
            if reader is None:
                pending[inp] = (k, bit)
                if type(inp) is Operation and position not in kept and inp not in targets:
                    mask |= bit
            elif position in kept:  # a later reader frees it: not if this one saves it
                masks[reader[0]] &= ~reader[1]
            bit <<= 1
        if mask:
            if mask > 255 and type(masks) is bytearray:
                masks = list(masks)
            masks[k] = mask
    return masks


#: op -> (positions of the inputs it saves, saves its output)
_saved_by: dict[Any, tuple] = {}


def _not_flowing(order: list, check: bool) -> set:
    """The operations of ``order`` no gradient flows through: the complement, within
    the operations, of ``gradients.flowing(order, sources)`` with its sources
    (trainable Variables, nodes that retain their gradient), or of
    ``executor.requires_grad_nodes``.  A gradient flows through most operations of a
    graph that is differentiated, so this set is small where the other was every node.
    ``check``: an inference-only op a gradient would flow through raises, as
    ``flowing`` raises (at the first such op in order)."""
    dead: set = set()
    add = dead.add
    rules = _flow_rules
    for node in order:
        if type(node) is not Operation and not isinstance(node, Operation):
            continue
        if node.retains_grad:  # a source
            continue
        for i in node.inputs:
            if i not in dead if type(i) is Operation else _leaf_flows(i, dead):
                op = node.op
                found = rules.get(op)
                if found is None:
                    found = rules[op] = (
                        bool(getattr(op, "inference_only", False)),
                        bool(op.differentiable),
                    )
                if check and found[0]:
                    _check_differentiable(node)  # raises
                if not found[1]:
                    add(node)
                break
        else:
            add(node)
    return dead


def _leaf_flows(node: Node, dead: set) -> bool:
    """Whether a gradient flows through ``node``, not a plain operation (see
    :func:`_not_flowing`)."""
    if node.retains_grad:
        return True
    if isinstance(node, Variable):
        return bool(node.trainable)
    return isinstance(node, Operation) and node not in dead


def _run(order: list, values: dict, dying: Any, shapes: FreedShapes) -> list:
    """Run ``order`` (a plan's run): each operation's value written on its node and
    released (None) where ``dying`` says (from :func:`_last_reads`; none with None),
    its shape recorded in ``shapes`` where odd; the operations whose value is an array.  A
    Variable's or placeholder's value is read from ``values``, every other off its node.
    The caller puts the values of the run before back if this raises."""
    runnable = _runnable
    odd = shapes.odd
    arrays: list = []
    node: Any = None
    index = None
    masks = dying if dying is not None else itertools.repeat(0)
    try:
        with fast.ignoring_fp_errors():
            for node, mask in zip(order, masks):
                if type(node) is not Operation:
                    continue
                op = node.op
                inputs = node.inputs
                forward = runnable[op]
                if len(inputs) == 1:
                    source = inputs[0]
                    kind = type(source)
                    x: Any = (
                        values[source] if kind is Variable or kind is Placeholder else source._value
                    )
                    if op.variadic:
                        value = forward([x], **node.attrs)
                    elif node.attrs:
                        value = forward(x, **node.attrs)
                    else:
                        value = forward(x)
                    node._value = value
                    if isinstance(value, np.ndarray):
                        arrays.append(node)
                    del value
                    if mask:
                        try:
                            shape = x.shape
                        except AttributeError:
                            shape = shape_of(x)
                        del x
                        source._value = None  # released now, as the plan releases it
                        if shape != source.shape:
                            odd[source] = shape
                    continue
                if len(inputs) == 2 and not node.attrs:
                    first, second = inputs
                    kind = type(first)
                    x = values[first] if kind is Variable or kind is Placeholder else first._value
                    kind = type(second)
                    y = values[second] if kind is Variable or kind is Placeholder else second._value
                    ufunc = _number_ufunc.get(op)
                    if ufunc is None:
                        ufunc = _number_ufunc_of(op)
                    if ufunc is not False and (
                        (type(y) is float and (type(x) is np.float32 or type(x) is np.float64))
                        or _keeps_dtype(x, y)  # the line before: its commonest answer inline
                    ):
                        value = ufunc(x, y)
                    else:
                        value = forward(x, y)
                    del x, y
                    node._value = value
                    if isinstance(value, np.ndarray):
                        arrays.append(node)
                    del value
                    if mask == 1 or mask == 2:  # one value dies here
                        _release(first if mask == 1 else second, odd)
                        continue
                else:
                    args: Any = tuple(
                        [
                            values[i] if type(i) is Variable or type(i) is Placeholder else i._value
                            for i in inputs
                        ]
                    )
                    if op.variadic:
                        args = (list(args),)
                    value = forward(*args, **node.attrs) if node.attrs else forward(*args)
                    del args
                    node._value = value
                    if isinstance(value, np.ndarray):
                        arrays.append(node)
                    del value
                if not mask:
                    continue
                dying_here = [i for k, i in enumerate(inputs) if mask >> k & 1]
                if len(dying_here) > 1:  # the plan frees them in its slot order
                    if index is None:
                        index = {n: k for k, n in enumerate(order)}
                    dying_here.sort(key=index.__getitem__)
                for i in dying_here:
                    _release(i, odd)
    except Exception as error:
        raise type(error)(f"while running node {node.name!r} ({node.op_name}): {error}") from error
    return arrays


def _release(node: Node, odd: dict) -> None:
    """Let go of ``node``'s value, its shape recorded if odd (see :class:`FreedShapes`)."""
    shape = shape_of(node._value)
    node._value = None
    if shape != node.shape:
        odd[node] = shape


#: op -> the ufunc its promoting forward calls, False for other forwards
_number_ufunc: dict[Any, Any] = {}
_NUMPY_FLOATS = (np.float32, np.float64, np.ndarray)


def _number_ufunc_of(op: Any) -> Any:
    inner = unquiet(op.forward)
    found = getattr(inner, "ufunc", False) if inner.__code__ is _PROMOTED_CODE else False
    _number_ufunc[op] = found
    return found


def _keeps_dtype(x: Any, y: Any) -> bool:
    """``direct number``: whether ``promoted``'s forward would pass ``x`` and ``y`` to its
    ufunc unchanged, one a numpy float (scalar or array) and the other a Python float
    of a category no higher (torch's promotion keeps the numpy dtype)."""
    if type(y) is float:
        return type(x) in _NUMPY_FLOATS and _scalar_keeps_dtype(x.dtype, float)
    if type(x) is float:
        return type(y) in _NUMPY_FLOATS and _scalar_keeps_dtype(y.dtype, float)
    return False


# ----------------------------------------------------------------------------- backward
#: op -> (partials, saved by input, saves out, unary reading nothing) or None
_rules: dict[Any, Any] = {}


def _rules_of(op: Any) -> Any:
    found = None
    if op.vjp_all is None and op.partials is not None and not op.variadic:
        saves = tuple(op.saves_input(i) for i in range(len(op.partials)))
        unary = len(op.partials) == 1 and op.partials[0] is not None
        found = (op.partials, saves, op.saves_out, unary and not op.saves)
    _rules[op] = found
    return found


_metas: dict[tuple, Meta] = {}
_last_meta = [Meta((), None)]  # the one asked for last (a chain asks for one again and again)


def _meta(shape: Any, dtype: Any) -> Meta:
    """A Meta of that shape and dtype, one shared per pair (the rules only read it)."""
    last = _last_meta[0]
    if last.dtype is dtype and last.shape == shape and type(shape) is tuple:
        return last
    key = (shape, dtype)
    found = _metas.get(key)
    if found is None:
        if len(_metas) > 4096:
            _metas.clear()
        found = _metas[key] = Meta(shape, dtype)
    _last_meta[0] = found
    return found


def session_backward(graph: Graph, loss: Node, grad: Any, check_numerics: bool) -> None:
    """``session.backward`` (the seam it replaces): :func:`backward`, the collector paused."""
    with fast.paused_gc():
        backward(graph, loss, grad, check_numerics)


def backward(graph: Graph, loss: Node, grad: Any, check_numerics: bool) -> None:
    """``gradients.numeric_backward``, faster where it can (itself elsewhere)."""
    if check_numerics or loss.value is None:  # the readable path raises for a missing value
        return numeric_backward(graph, loss, grad, check_numerics)
    order = _order(graph, [loss])
    dead = _not_flowing(order, check=True)
    if not (loss not in dead if type(loss) is Operation else _leaf_flows(loss, dead)):
        return numeric_backward(graph, loss, grad, check_numerics)
    seed = _seed_value(loss, grad)
    with np.errstate(all="ignore"):
        grads = _sweep(order, loss, seed, dead, graph.last_run)
    store_gradients(graph, grads, seed)


#: op -> (inference_only, differentiable)
_flow_rules: dict[Any, tuple[bool, bool]] = {}


def _sweep(order: list, loss: Node, seed: Any, dead: set, last_run: RunState) -> dict:
    """``reverse_sweep`` with ``numeric_backward``'s operands, inline; a one-input op
    whose rule reads neither value runs in the loop itself, a two-input op with one
    partial per input without the general path's lists.

    A gradient reaches only the loss and nodes it flows to (``dead`` holds the
    operations it does not flow through), so a node holding one needs no test."""
    shapes: Any = last_run.shapes
    if type(shapes) is FreedShapes:
        shapes = shapes.odd  # a freed node's other shapes are its node.shape: see there
    run_values = last_run.variables
    grads: dict[Node, Any] = {loss: seed}
    get = grads.get
    rules_of = _rules
    for node in reversed(order):
        g = get(node)
        if g is None or type(node) is not Operation:
            continue
        inputs = node.inputs
        op = node.op
        rules = rules_of.get(op, False)
        if rules is False:
            rules = _rules_of(op)
        if rules is not None and rules[3] and not node.attrs:  # one input, nothing read
            source = inputs[0]
            if source not in dead if type(source) is Operation else _leaf_flows(source, dead):
                shape = shapes.get(source)
                if shape is None:
                    if type(source) is Operation:  # _run_shape's answer, inline
                        value = source._value
                        shape = source.shape if value is None else shape_of(value)
                    else:
                        shape = _run_shape(source, shapes)
                out_shape = shapes.get(node)
                if out_shape is None:
                    value = node._value
                    out_shape = node.shape if value is None else shape_of(value)
                last = _last_meta[0]  # _meta's first test, inline: a chain asks for one Meta
                dtype = source.dtype or np.float64
                if last.dtype is dtype and last.shape == shape and type(shape) is tuple:
                    x = last
                else:
                    x = _meta(shape, dtype)
                    last = _last_meta[0]
                dtype = node.dtype or np.float64
                if last.dtype is dtype and last.shape == out_shape and type(out_shape) is tuple:
                    out = last
                else:
                    out = _meta(out_shape, dtype)
                gi = rules[0][0](g, x, out)
                if gi is not None:
                    if op.elementwise and gi.shape != shape:
                        gi = _summed(gi, x, shape)
                    if getattr(gi, "dtype", None) is not x.dtype:  # else it is gi itself
                        gi = _in_dtype_of(gi, x)
                    before = get(source)
                    grads[source] = gi if before is None else before + gi
        elif rules is not None and len(inputs) == 2 and len(rules[0]) == 2 and not node.attrs:
            first, second = inputs
            kind = type(first)  # _leaf_flows of a constant, inline: whether it retains
            need0 = (
                first not in dead
                if kind is Operation
                else (first.retains_grad if kind is Constant else _leaf_flows(first, dead))
            )
            kind = type(second)
            need1 = (
                second not in dead
                if kind is Operation
                else (second.retains_grad if kind is Constant else _leaf_flows(second, dead))
            )
            if need0 or need1:  # _pullback's steps, input by input
                saves = rules[1]
                # _operand and _run_shape, a constant's Python number inline: shape ()
                shape_a = shape_b = None
                value = first._value if type(first) is Constant else None
                if type(value) in _NUMBERS:
                    shape_a = ()
                    a = value if saves[0] else _meta((), first.dtype or np.float64)
                else:
                    a = _operand(first, saves[0], shapes, run_values, node)
                value = second._value if type(second) is Constant else None
                if type(value) in _NUMBERS:
                    shape_b = ()
                    b = value if saves[1] else _meta((), second.dtype or np.float64)
                else:
                    b = _operand(second, saves[1], shapes, run_values, node)
                out = _operand(node, rules[2], shapes, None, node)
                partial_a, partial_b = rules[0]
                ga = partial_a(g, a, b, out) if need0 and partial_a is not None else None
                gb = partial_b(g, a, b, out) if need1 and partial_b is not None else None
                if ga is not None:
                    if op.elementwise:
                        if shape_a is None:
                            shape_a = _run_shape(first, shapes)
                        if ga.shape != shape_a:
                            ga = _summed(ga, a, shape_a)
                    if getattr(ga, "dtype", None) is not getattr(a, "dtype", None):
                        ga = _in_dtype_of(ga, a)  # else it is ga itself
                    before = get(first)
                    grads[first] = ga if before is None else before + ga
                if gb is not None:
                    if op.elementwise:
                        if shape_b is None:
                            shape_b = _run_shape(second, shapes)
                        if gb.shape != shape_b:
                            gb = _summed(gb, b, shape_b)
                    if getattr(gb, "dtype", None) is not getattr(b, "dtype", None):
                        gb = _in_dtype_of(gb, b)
                    before = get(second)
                    grads[second] = gb if before is None else before + gb
        else:
            needs = [
                inp not in dead if type(inp) is Operation else _leaf_flows(inp, dead)
                for inp in inputs
            ]
            if True in needs:
                saves = (
                    rules[1]
                    if rules is not None
                    else [op.saves_input(i) for i in range(len(inputs))]
                )
                values = [
                    _operand(inp, saved, shapes, run_values, node)
                    for inp, saved in zip(inputs, saves)
                ]
                out = _operand(node, op.saves_out, shapes, None, node)
                run_shapes = [_run_shape(inp, shapes) for inp in inputs]
                if rules is None or len(rules[0]) != len(inputs):
                    input_grads = op.pullback(g, values, out, node.attrs, needs, run_shapes)
                else:
                    input_grads = _pullback(
                        op, rules[0], g, values, out, node.attrs, needs, run_shapes
                    )
                for inp, gi, need in zip(inputs, input_grads, needs):
                    if gi is not None and need:
                        before = get(inp)
                        grads[inp] = gi if before is None else before + gi
        if not (node.retains_grad or isinstance(node, Variable)):
            del grads[node]  # used: released (the readable sweep sets it to None)
    return grads


def _summed(gi: Any, x: Any, shape: Any) -> Any:
    if shape is None or None in shape:
        return OPS["sum_to_like"].dispatch(gi, x)
    return OPS["sum_to"].dispatch(gi, shape=tuple(shape))


def _pullback(op, partials, g, inputs, out, attrs, needs, shapes) -> list:
    """``OpDef.pullback`` for an op with one partial per input (already silenced)."""
    grads: list = [None] * len(needs)
    for i, partial in enumerate(partials):
        if needs[i] and partial is not None:
            grads[i] = partial(g, *inputs, out, **attrs) if attrs else partial(g, *inputs, out)
    if op.elementwise:
        for i, gi in enumerate(grads):
            if gi is not None:
                shape = shapes[i]
                if gi.shape != shape:
                    grads[i] = (
                        OPS["sum_to_like"].dispatch(gi, inputs[i])
                        if shape is None or None in shape
                        else OPS["sum_to"].dispatch(gi, shape=tuple(shape))
                    )
    for i, gi in enumerate(grads):
        if gi is not None:
            grads[i] = _in_dtype_of(gi, inputs[i])
    return grads


_NUMBERS = (float, int, bool, complex)  # a constant's Python number: its run shape is ()


def _operand(node: Node, saved: bool, shapes: dict, run_values: Any, user: Node) -> Any:
    """``gradients._saved_or_meta`` of the value ``node`` had in the last run."""
    if not saved:
        shape = shapes.get(node)
        if shape is None:
            if type(node) is Operation:  # _run_shape's answer, inline
                value = node._value
                shape = node.shape if value is None else shape_of(value)
            else:
                shape = _run_shape(node, shapes)
        return _meta(shape, node.dtype or np.float64)
    if type(node) is Operation:  # not a Variable, whose run value may differ
        value = node._value
    else:
        value = run_values[node] if run_values is not None and node in run_values else node.value
    if value is None:
        raise RuntimeError(
            f"the value of {node.name!r} needed to differentiate {user.name!r} was freed; "
            f"run graph.forward again (fetching the loss) right before graph.backward"
        )
    return value


def _run_shape(node: Node, shapes: dict) -> Any:
    shape = shapes.get(node)
    if shape is None:
        value = node.value
        if type(value) is float:  # a constant's Python number: np.shape's ()
            return ()
        shape = node.shape if value is None else shape_of(value)
    return shape
