"""Long chains of negations through the fast layer build and run what the readable
path builds and runs: ``naivegraph.fast.fastnodes`` (a node's one edge kept as its
input's node, its dead output reference shared), the negation's paused collector
(``fastpath``) and the backward's chain walk and run of negations (``fastback``).

Every case runs with the layer on and off in one process and compares: the values
bit for bit, and every node field for field (``next_functions`` read as a program
reads it), the errors, the drawings.
"""

from __future__ import annotations

import gc
import weakref
from typing import Callable

import numpy as np
import pytest
from fast_switch import fast_layer_on

import naivegraph as ng
from naivegraph import fast
from naivegraph.dynamic import engine
from naivegraph.dynamic.node import Node, OpNode
from naivegraph.fast import fastback, fastnodes, fastpath
from naivegraph.ops.core import Meta

pytestmark = pytest.mark.usefixtures(fast_layer_on.__name__)  # they compare on with off

needs_compact = pytest.mark.skipif(
    fastnodes.NEGATION is None, reason="NAIVEGRAPH_FAST=0 at import: NegBackward0 is plain"
)

#: the slot behind ``next_functions``, read directly: what a node stores
_STORED_EDGES = Node.__dict__["next_functions"].__get__


# -- describing a graph, names instead of identities ----------------------------------------
def _field(value, names: dict):
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, Meta):
        return ("meta", tuple(value.shape), np.dtype(value.dtype).str)
    if isinstance(value, (Node, ng.Tensor)):
        return (type(value).__name__, names.get(id(value), "?"))
    if isinstance(value, weakref.ref):
        return ("weakref", _field(value(), names))
    if isinstance(value, (list, tuple)):  # the type too: next_functions is tuples of tuples
        return (type(value).__name__, tuple(_field(v, names) for v in value))
    if type(value).__name__ == "_Hooks":  # a node's hooks: how many of each kind
        return ("hooks", tuple(len(getattr(value, k) or ()) for k in value.__slots__))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, _field(v, names)) for k, v in value.items())))
    if hasattr(value, "forward") and hasattr(value, "name"):  # an OpDef
        return ("op", value.name)
    return (type(value).__name__, repr(value))


def _describe(tensors: dict) -> list:
    """Each tensor's bits and gradient, and every node reachable from them: its class,
    name, ``freed`` and every field as a program reads it."""
    names = {id(t): name for name, t in tensors.items()}
    nodes, todo = [], [t.grad_fn for t in tensors.values() if t.grad_fn is not None]
    while todo:
        node = todo.pop(0)
        if id(node) not in names:
            names[id(node)] = f"node{len(nodes)}"
            nodes.append(node)
            todo.extend(fn for fn, _ in node.next_functions if fn is not None)
    out: list = []
    for name, t in tensors.items():
        grad = None if t._grad is None else _field(t._grad._data, names)  # no warning
        out.append((name, _field(t._data, names), t.requires_grad, grad))
        out.append((name, _field(t.grad_fn, names), t._output_nr))
    fields = ["next_functions", "_hooks", "_released", "op", "attrs", "saved", "saved_out"]
    fields += ["sources", "needs", "_constants", "output_ref"]
    for node in nodes:
        row = [type(node).__name__, type(node).__qualname__, node.freed]
        if isinstance(node, OpNode):
            row += [(f, _field(getattr(node, f), names)) for f in fields]
        else:
            row += [("next_functions", _field(node.next_functions, names))]
        out.append(tuple(row))
    return out


def _run(program: Callable[[], dict]):
    try:
        return _describe(program())
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        return ("raised", type(error).__name__, str(error))


def _same_on_and_off(program: Callable[[], dict]) -> list:
    on = _run(program)
    with fast.disabled():
        off = _run(program)
    assert on == off
    return on


class _Split(ng.autograd.Function):
    """Two outputs of one node: a negation of the second has the edge (node, 1)."""

    @staticmethod
    def forward(ctx, x):
        return x * 2.0, x * 3.0

    @staticmethod
    def backward(ctx, g_first, g_second):
        return g_first * 2.0 + g_second * 3.0


def _negations(x, n: int):
    for _ in range(n):
        x = -x
    return x


# -- the forward: compact edges, the same next_functions ------------------------------------
@needs_compact
def test_a_negation_keeps_its_input_node_alone_and_reads_back_the_readable_edges():
    w = ng.tensor(2.0, requires_grad=True)
    y = -w
    z = -y
    assert _STORED_EDGES(z.grad_fn) is y.grad_fn  # stored: the node alone
    assert z.grad_fn.next_functions == ((y.grad_fn, 0),)  # read: the edges
    assert type(z.grad_fn.next_functions) is tuple
    assert type(z.grad_fn.next_functions[0]) is tuple
    assert y.grad_fn.next_functions[0][0] is w._edge()[0]  # a leaf: its AccumulateGrad
    with fast.disabled():
        v = -y
    assert _STORED_EDGES(v.grad_fn) == ((y.grad_fn, 0),)  # the readable path: its tuple
    assert type(v.grad_fn) is type(z.grad_fn)


def test_negation_chains_from_leaves_nodes_and_second_outputs_build_the_same_graphs():
    def program():
        w = ng.tensor([1.5, -2.0, 0.0], requires_grad=True)
        parts = _Split.apply(w)  # outputs 0 and 1 of one node: an edge (node, 1) is a tuple
        out = {"w": w, "a": _negations(w, 4), "b": _negations(parts[1], 3)}
        out["c"] = _negations(parts[0], 2) * _negations(parts[1], 1)
        out["d"] = _negations(ng.tensor(3.0), 2)  # no grad: no node
        out["e"] = _negations(w.detach().requires_grad_(), 1)
        return out

    _same_on_and_off(program)


def test_torch_builds_the_same_next_functions_for_a_chain_of_negations():
    torch = pytest.importorskip("torch")
    seen = []
    for lib in (ng, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        y = -(-(-w))
        z = -(y * 2.0)
        edges = []
        for node in (z.grad_fn, y.grad_fn, y.grad_fn.next_functions[0][0]):
            edges += [(type(n).__name__, nr) for n, nr in node.next_functions]
        assert y.grad_fn.next_functions == y.grad_fn.next_functions  # equal on each read
        seen.append(edges)
    assert seen[0] == seen[1]
    assert seen[0] == [("MulBackward0", 0), ("NegBackward0", 0), ("NegBackward0", 0)]


# -- the output's weak reference ------------------------------------------------------------
@needs_compact
def test_a_dead_outputs_reference_gives_way_to_the_shared_dead_one():
    w = ng.tensor(2.0, requires_grad=True)
    y = -w
    node = y.grad_fn
    z = -y
    assert node.output_ref() is y
    del y
    assert node.output_ref() is None and node.output_ref is not fastnodes.DEAD_REF
    u = -z  # looks two nodes back: y is gone
    assert node.output_ref is fastnodes.DEAD_REF and node.output_ref() is None
    assert z.grad_fn.output_ref() is z and u.grad_fn.output_ref() is u  # alive: kept
    -u
    assert z.grad_fn.output_ref() is z  # still alive: still its own


def test_a_node_lives_no_longer_than_on_the_readable_path():
    for on in (True, False):
        fast.set_enabled(on)
        w = ng.tensor(2.0, requires_grad=True)
        y = -(-w)
        gone = weakref.ref(y.grad_fn)
        y.detach_()  # the tensor lets go of its node before it dies itself
        assert gone() is None
    fast.set_enabled(True)


def test_a_node_whose_output_is_alive_keeps_its_reference_and_draws_its_name():
    pytest.importorskip("graphviz")
    from naivegraph.render import render

    def program():
        w = ng.tensor(2.0, requires_grad=True)
        kept = _negations(w, 2)
        top = _negations(kept, 5)
        return render(top, params={"w": w, "kept": kept}).source

    on = program()
    with fast.disabled():
        off = program()
    assert on == off and "kept" in on


def test_chains_drawn_alive_dead_and_after_backward_look_the_same_on_and_off():
    pytest.importorskip("graphviz")
    from naivegraph.render import render

    def program():
        w = ng.tensor([2.0, -1.0], requires_grad=True)
        mid = _negations(w, 3)
        top = _negations(mid, 2)
        last = -(-_Split.apply(top)[1]).sum()
        before = render(last, params={"w": w, "mid": mid}).source
        last.backward()
        return before + render(last, params={"w": w}).source

    on = program()
    with fast.disabled():
        off = program()
    assert on == off


# -- the collector, paused for one negation ------------------------------------------------
def test_a_negation_leaves_the_collector_as_it_found_it():
    w = ng.tensor(2.0, requires_grad=True)
    assert gc.isenabled()
    -w
    assert gc.isenabled()
    gc.disable()
    try:
        -w
        assert not gc.isenabled()
    finally:
        gc.enable()


class _NoRoom:
    """A leaf whose accumulator cannot be made: the negation fails while recording."""

    def __get__(self, tensor, owner):
        raise MemoryError("no room for the accumulator")


def test_a_negation_that_fails_while_recording_restores_the_collector(monkeypatch):
    monkeypatch.setattr(fastpath, "pause_collector", True)
    w = ng.tensor(2.0, requires_grad=True)
    monkeypatch.setattr(ng.Tensor, "_accumulator", _NoRoom(), raising=True)
    with pytest.raises(MemoryError, match="no room"):
        -w
    assert gc.isenabled()


# -- the backward ---------------------------------------------------------------------------
DTYPES = ["float16", "float32", "float64"]
VALUES = [1.5, -0.0, 0.0, float("inf"), float("nan"), -float("nan"), 5e-324]


def _backward_programs() -> dict:
    def plain(dtype):
        def program():
            w = ng.tensor(np.array(VALUES, dtype=dtype), requires_grad=True)
            y = _negations(w, 7)
            y.sum().backward()
            z = _negations(w[0], 5)  # a 0-d root: the seeded start
            z.backward()
            return {"w": w, "y": y, "z": z}

        return program

    def fed_twice():  # a chain whose inner tensor another op also reads
        w = ng.tensor(2.0, requires_grad=True)
        a = _negations(w, 3)
        b = _negations(a, 4) * a
        b.backward()
        return {"w": w, "a": a, "b": b}

    def below_a_branch():  # the root has two edges: the search, not the chain walk
        w = ng.tensor([1.0, -3.0], requires_grad=True)
        c = _negations(w, 6)
        d = (c * 2.0 + _negations(c, 3)).sum()
        d.backward()
        return {"w": w, "c": c, "d": d}

    def two_roots():
        w = ng.tensor(2.0, requires_grad=True)
        a = _negations(w, 3)
        b = _negations(a, 2)
        ng.autograd.backward([b, _negations(a, 5)])
        return {"w": w, "a": a, "b": b}

    def hooked_in_the_middle():
        w = ng.tensor(2.0, requires_grad=True)
        a = _negations(w, 3)
        a.retain_grad()
        b = _negations(a, 2)
        b.register_hook(lambda g: g * 3.0)
        c = _negations(b, 2)
        c.grad_fn.next_functions[0][0].register_prehook(lambda go: (go[0] * 5.0,))
        c.backward()
        return {"w": w, "a": a, "b": b, "c": c}

    def retained_twice():
        w = ng.tensor(np.float32(0.25), requires_grad=True)
        y = _negations(w, 5)
        y.backward(retain_graph=True)
        y.backward()
        y.backward()  # a negation keeps nothing: a third pass runs, as in torch
        return {"w": w, "y": y}

    def float32_chain_over_float64():
        w = ng.tensor(np.float32(1.5), requires_grad=True)
        y = _negations(w, 3) * ng.tensor(2.0, dtype=ng.float64)
        y = _negations(y, 3)
        y.backward()
        return {"w": w, "y": y}

    def gradient_given_in_another_dtype():  # cast to float64 at the chain's first node
        w = ng.tensor([1.0, 2.0], requires_grad=True)
        y = _negations(w * 0.1, 3)  # 3 * 0.1 rounds otherwise in float32 than in float64
        y.backward(ng.tensor([1.0, 3.0], dtype=ng.float32))
        return {"w": w, "y": y}

    def second_output():
        w = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
        first, second = _Split.apply(w)
        (_negations(second, 3) + _negations(first, 2)).sum().backward()
        return {"w": w}

    programs = {f"plain {dtype}": plain(dtype) for dtype in DTYPES}
    for program in (
        fed_twice,
        below_a_branch,
        two_roots,
        hooked_in_the_middle,
        retained_twice,
        float32_chain_over_float64,
        gradient_given_in_another_dtype,
        second_output,
    ):
        programs[program.__name__] = program
    return programs


BACKWARD = _backward_programs()


@pytest.mark.parametrize("name", BACKWARD)
def test_chains_backward_give_the_same_bits_grads_and_freed_nodes_on_and_off(name):
    _same_on_and_off(BACKWARD[name])


def test_errors_in_and_after_a_chain_are_the_same_on_and_off():
    def shape_changed():
        w = ng.tensor([1.0, 2.0], requires_grad=True)
        y = _negations(w * 1.0, 4)
        w.data = ng.tensor([1.0, 2.0, 3.0])
        y.sum().backward()
        return {"w": w, "y": y}

    def raising_hook():
        w = ng.tensor(2.0, requires_grad=True)
        a = _negations(w, 2)
        a.register_hook(lambda g: 1 / 0)
        _negations(a, 3).backward()
        return {"w": w, "a": a}

    def saved_before_the_chain_changed():
        w = ng.tensor([1.0, 2.0], requires_grad=True)
        a = w * 1.0
        b = a * a  # saves a
        y = _negations(b, 3)
        a.add_(1.0)
        y.sum().backward()
        return {"w": w, "y": y}

    for program in (shape_changed, raising_hook, saved_before_the_chain_changed):
        described = _same_on_and_off(program)
        assert described[0] == "raised"


def test_the_chain_walk_gives_the_engines_order():
    w = ng.tensor([1.0, 2.0], requires_grad=True)
    a = _negations(w, 20)
    graphs = [
        [a.grad_fn],
        [_negations(a * a, 7).grad_fn],
        [_negations(_Split.apply(w)[1], 3).grad_fn],
        [(a * 2.0).grad_fn, a.grad_fn],
        [_negations(w.detach(), 1).grad_fn or a.grad_fn],
    ]
    with fast.disabled():
        graphs.append([_negations(a, 4).grad_fn])  # readable nodes: stored tuples
    for roots in graphs:
        assert fastback.order_of(roots) == engine.topological_order(roots)[::-1]


def test_the_chain_walk_follows_nodes_whose_other_edges_lead_to_no_node():
    w = ng.tensor([1.0, 2.0], requires_grad=True)
    constant = ng.tensor([3.0, 4.0])  # no grad: its edge leads to no node
    y = w
    for _ in range(10):
        y = y * 0.999  # edges: (y's node, none)
        y = 0.001 + y  # edges: (none, y's node) or (y's node, none)
        y = constant * y  # edges: (none, y's node)
    two_live = y * y  # two edges to one node: not a chain's
    branched = two_live * 0.5
    shared = (branched + branched * 2.0) * 3.0  # branched reached twice
    graphs = [
        [y.grad_fn],
        [shared.grad_fn],
        [(y * 0.5).grad_fn, y.grad_fn],
        [(ng.tensor(1.0) * 2.0 + w).grad_fn],
    ]
    for roots in graphs:
        assert fastback.order_of(roots) == engine.topological_order(roots)[::-1]
    assert [len(node.next_functions) for node in fastback._chain_from(y.grad_fn)[0]] == [2] * 30


class _Recording(dict):
    """A ``pending`` dict that remembers every node a gradient was put under."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.stored: list = []

    def __setitem__(self, key, value) -> None:
        self.stored.append(key)
        super().__setitem__(key, value)


def _multiply_add_chain(w, n: int):
    y = w
    for _ in range(n):
        y = 0.001 + y * 0.999  # two edges each, one to no node
    return y


def test_a_chain_of_nodes_with_one_live_edge_hands_its_gradient_past_pending():
    w = ng.tensor(0.5, requires_grad=True)
    y = _multiply_add_chain(w, 5)
    order = fastback.order_of([y.grad_fn])
    pending = _Recording({y.grad_fn: [np.ones((), np.float32)]})
    leaf_updates, _ = fastback.backward_pass(order, pending, False)
    assert pending.stored == []
    assert [(leaf is w, grad.dtype, float(grad)) for leaf, grad in leaf_updates] == [
        (True, np.float32, float(np.float32(0.999) ** 5))
    ]


def test_a_multiply_add_chain_gives_the_same_bits_and_graph_with_the_layer_on_and_off():
    def chain():
        w = ng.tensor([0.5, -3.0e-39, 7.0], requires_grad=True)  # a subnormal too
        c = ng.tensor([2.0, 3.0, 0.1])
        y = _multiply_add_chain(w, 40) / 3.0
        z = c * _multiply_add_chain(y, 3) - 1.5
        branch = z * 0.25
        (branch + branch / 7.0).sum().backward()
        return {"w": w, "y": y, "z": z}

    _same_on_and_off(chain)


def test_a_million_deep_chain_needs_no_recursion_and_frees_its_nodes():
    x = ng.tensor(2.0, requires_grad=True)
    y = _negations(x, 100_000)
    y.backward()
    assert x.grad.item() == 1.0 and y.grad_fn.freed
    assert y.grad_fn.next_functions[0][0].freed
