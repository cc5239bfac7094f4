"""The fast layer's operators for static nodes (``operators`` in
``naivegraph.fast.fastbuild``): ``-y``, ``x + y``, ``x - y``, ``x * y`` and ``x / y`` of
two nodes build the node themselves with the collector paused.  Each test builds the
same program with the layer on and off and compares what it built field by field, the
values it computes, the errors it raises, and the collector's state afterwards."""

from __future__ import annotations

import dataclasses
import gc

import numpy as np
import pytest
from fast_switch import both_ways, fast_layer_on

import naivegraph.fast.fastbuild as fastbuild
import naivegraph.static as ns
from naivegraph.ops.methods import OpMethods
from naivegraph.static.control_flow import Function, Loop
from naivegraph.static.nodes import Node

pytestmark = pytest.mark.usefixtures(fast_layer_on.__name__)  # they compare on with off

FIELDS = ("name", "op_name", "shape", "dtype", "built_at", "is_gradient", "kind")


def described(graph):
    """Every node of ``graph`` as plain data: its fields, its inputs' names, and the
    nodes of the inner graphs of a branch or loop, described the same way."""
    return [
        tuple(getattr(n, f) for f in FIELDS if f != "attrs")
        + (tuple(i.name for i in n.inputs), _attrs(n.attrs))
        for n in graph.nodes
    ]


def _attrs(attrs: dict) -> tuple:
    return tuple((k, _plain(v)) for k, v in sorted(attrs.items()))


def _plain(value):
    """An attribute as plain data: an inner graph's function as its nodes, described."""
    if isinstance(value, Function):
        return described(value.graph)
    if isinstance(value, Loop):
        return tuple(_plain(getattr(value, f.name)) for f in dataclasses.fields(value))
    if isinstance(value, (tuple, list)):  # a cond's branches
        return tuple(_plain(v) for v in value)
    return value


def every_operator():
    with ns.Graph() as g:
        w = ns.Variable(np.array([1.5, -2.0], np.float32), name="w")
        x = ns.placeholder("x", shape=(None, 2), dtype=np.float32)
        c = ns.constant(np.float32(3.0), name="c")
        y = -(x * w + c) / (w - c)
        y = y - -y
        loss = (y * y).sum()
    feeds = {x: np.array([[1.0, 2.0], [3.0, -4.0]], np.float32)}
    (value,) = g.forward(feeds, fetches=[loss])
    g.backward(loss)
    return described(g), value.tobytes(), w.grad.tobytes()


def test_every_operator_builds_the_readable_nodes_and_values():
    on, off = both_ways(every_operator)
    assert on == off
    names = [row[0] for row in on[0]]
    assert names[3:] == ["mul_1", "add_1", "neg_1", "sub_1", "div_1", "neg_2", "sub_2",
                         "mul_2", "sum_1"]  # fmt: skip


def test_the_node_class_speaks_the_fast_operators_with_the_readable_names():
    assert Node.__neg__ is not OpMethods.__neg__
    assert [Node.__neg__.__name__, Node.__truediv__.__name__] == ["__neg__", "__truediv__"]


def test_operands_the_fast_operators_do_not_take_go_the_readable_way():
    def program():
        with ns.Graph() as g:
            w = ns.Variable(2.0, name="w")
            y = w + 1  # a Python number: a constant, registered by the readable path
            y = 2.0 * y - np.float64(0.5)
            y = y / np.array(4.0)
            with ns.Graph():
                pass
        (value,) = g.forward(fetches=[y])
        return described(g), float(value)

    on, off = both_ways(program)
    assert on == off
    assert on[1] == (2.0 * 3.0 - 0.5) / 4.0


def test_nodes_of_two_graphs_are_refused_with_the_readable_message():
    def program():
        with ns.Graph():
            a = ns.Variable(1.0, name="a")
        with ns.Graph() as g:
            b = ns.Variable(1.0, name="b")
            with pytest.raises(ValueError) as caught:
                a + b
        return str(caught.value), described(g), gc.isenabled()

    on, off = both_ways(program)
    assert on[1:] == off[1:]
    assert "nodes of two graphs cannot be mixed: 'a' belongs to graph_" in on[0]
    assert on[0].split("graph_", 1)[0] == off[0].split("graph_", 1)[0]
    assert on[2] is True


def test_a_shape_error_leaves_the_graph_unchanged_and_the_collector_on():
    def program():
        with ns.Graph() as g:
            a = ns.Variable(np.ones(2), name="a")
            b = ns.Variable(np.ones(3), name="b")
            before = described(g)
            with pytest.raises(ValueError) as caught:
                a * b
        return str(caught.value), before == described(g), gc.isenabled()

    on, off = both_ways(program)
    assert on == off
    assert "broadcast" in on[0]
    assert on[1:] == (True, True)


def test_a_collector_the_program_paused_stays_paused():
    gc.disable()
    try:
        with ns.Graph():
            y = -ns.Variable(1.0, name="w")
            y = y + y
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_collector_does_not_run_while_a_chain_is_built():
    runs = []

    def count(phase, info):
        if phase == "start":
            runs.append(info["generation"])

    gc.collect()
    gc.callbacks.append(count)
    try:
        with ns.Graph():
            y = ns.Variable(1.0, name="w")
            for _ in range(20_000):  # ~30 young collections with the collector on
                y = -y
    finally:
        gc.callbacks.remove(count)
    assert runs == []


def test_in_a_branch_or_loop_body_the_operators_build_the_readable_way():
    def program():
        with ns.Graph() as g:
            x = ns.placeholder("x", shape=())
            w = ns.Variable(3.0, name="w")
            y = ns.cond(x > 0, lambda: -x * w, lambda: x - w)
            _, z = ns.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * w - a), [0, x])
        values = [g.forward({x: v}, fetches=[y, z]) for v in (2.0, -2.0)]
        return described(g), [[float(v) for v in pair] for pair in values]

    on, off = both_ways(program)
    assert on == off
    assert on[1] == [[-6.0, 16.0], [-5.0, -16.0]]


def test_symbolic_gradients_built_with_operators_are_the_readable_ones():
    def program():
        with ns.Graph() as g:
            x = ns.placeholder("x", shape=(3,))
            w = ns.Variable(np.array([1.0, -2.0, 0.5]), name="w")
            y = (x * w - w / (x + w)) * -w
            loss = (y * y).sum()
            (gw,) = ns.gradients(loss, [w])
        values = g.forward({x: np.array([1.0, 2.0, 3.0])}, fetches=[loss, gw])
        return described(g), [v.tobytes() for v in values]

    on, off = both_ways(program)
    assert on == off
    assert any(row[5] for row in on[0])  # is_gradient: the gradient's nodes are marked


def test_a_user_subclass_of_node_goes_the_readable_way(monkeypatch):
    taken = []
    real = fastbuild.apply

    def spy(op, args, attrs, operation, infer):
        built = real(op, args, attrs, operation, infer)
        taken.append(built is not None)
        return built

    monkeypatch.setattr(fastbuild, "apply", spy)

    class Tagged(ns.Variable):
        pass

    with ns.Graph():
        w = Tagged(2.0, name="w")
        y = -w
    assert y.op_name == "neg" and y.inputs == (w,)
    assert taken[0] is False  # declined by the fast operator, built by the readable path


def test_switched_off_the_operators_are_the_readable_ones(monkeypatch):
    monkeypatch.setattr(fastbuild, "operators_direct", False)
    calls = []
    monkeypatch.setattr(fastbuild, "apply", lambda *args: calls.append(args))
    with ns.Graph():
        y = -ns.Variable(1.0, name="w")
    assert y.op_name == "neg"
    # the readable path's nodes.apply still asks the layer once: not the operator itself
    assert len(calls) == 1
