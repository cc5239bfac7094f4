"""The fast layer's whole-graph order (``naivegraph.fast.fastgraph``): a run whose
fetches need every node of an unchanged graph reuses the graph's own node list, and
``backward`` finds the sources of its gradients in the same pass as where they flow.
Each test runs the same program with the layer on and off and compares everything a
run leaves: fetched values, node values, the run's record, gradients, errors."""

from __future__ import annotations

import numpy as np
import pytest
from default_dtype import float64_default
from fast_switch import both_ways, fast_layer_on

import naivegraph.static as ns

pytestmark = pytest.mark.usefixtures(fast_layer_on.__name__)  # they compare on with off
# numpy float64 data, compared bit for bit with the fast layer on and off:
# placeholders and Python floats in float64 too (the default dtype is float32)
pytestmark = [pytestmark, pytest.mark.usefixtures(float64_default.__name__)]


def bits(value):
    if value is None:
        return None
    array = np.asarray(value)
    return type(value).__name__, array.dtype, array.shape, array.tobytes()


def state(graph):
    """Every value, gradient and the last run's record, by node name."""
    return (
        [(n.name, bits(n.value), bits(n.grad)) for n in graph.nodes],
        [(n.name, s) for n, s in graph.last_run.shapes.items()],
        [(n.name, bits(v)) for n, v in graph.last_run.variables.items()],
    )


def test_a_node_added_after_a_run_is_run_by_the_next_one_either_way():
    def program():
        with ns.Graph() as g:
            w = ns.Variable(1.5, name="w")
            y = -(w * w)
        first = g.forward(fetches=[y])
        g.backward(y)
        before = state(g)
        with g:
            z = ns.exp(y) - w  # the graph changed: every node is needed again
        second = g.forward(fetches=[z])
        g.backward(z)
        return [bits(v) for v in first + second], before, state(g)

    on, off = both_ways(program)
    assert on == off
    assert on[2][0][-1][0] == "sub_1" and on[2][0][-1][1] is not None


def test_a_run_of_part_of_the_graph_then_of_all_of_it_is_the_same_either_way():
    def program():
        with ns.Graph() as g:
            w = ns.Variable(2.0, name="w")
            v = ns.Variable(3.0, name="v")
            a = -w
            b = v * v  # not needed by a
            c = a + b
        runs = []
        for fetch in (a, c, a, c):
            runs.append([bits(x) for x in g.forward(fetches=[fetch])])
            g.backward(fetch)
            runs.append(state(g))
        return runs

    on, off = both_ways(program)
    assert on == off
    assert on[1][0][3] == ("mul_1", None, None)  # b neither ran nor got a gradient for a


def test_nodes_removed_by_a_refused_compile_are_not_run_either_way():
    def program():
        with ns.Graph() as g:
            x = ns.placeholder("x", shape=())
            w = ns.Variable(2.0, name="w")
            y = -(x * w)
        g.forward({x: np.array(1.0)}, fetches=[y])
        with pytest.raises(TypeError) as error:
            g.compile([x], [y], updates=[(w, w * 2.0), "not a pair"])
        runs = [len(g.nodes), str(error.value)]
        runs.append([bits(v) for v in g.forward({x: np.array(4.0)}, fetches=[y])])
        g.backward(y)
        return runs + [state(g)]

    on, off = both_ways(program)
    assert on == off
    assert on[0] == 6 and "updates are (variable, new_value) pairs" in on[1]


def test_retain_grad_and_trainable_changed_between_backwards_are_seen_either_way():
    def program():
        with ns.Graph() as g:
            w = ns.Variable(2.0, name="w")
            v = ns.Variable(-1.0, name="v")
            h = w * v
            y = -h
        results = []
        for change in (None, "retain", "freeze"):
            if change == "retain":
                h.retain_grad()
            elif change == "freeze":
                w.trainable = False
            g.forward(fetches=[y])
            g.backward(y)
            results.append(state(g))
        return results

    on, off = both_ways(program)
    assert on == off
    assert on[0][0][2][2] is None and on[1][0][2][2] is not None  # h's gradient once retained
    assert on[2][0][0][2] is None  # a frozen w gets none


class Weight(ns.Variable):
    """A user's subclass of Variable: still a source of gradients."""


def test_a_subclass_of_variable_gets_its_gradient_either_way():
    def program():
        with ns.Graph() as g:
            w = Weight(3.0, name="w")
            v = ns.Variable(2.0, name="v")
            y = -(-(-w)) * v
        g.forward(fetches=[y])
        g.backward(y)
        return state(g)

    on, off = both_ways(program)
    assert on == off
    assert on[0][0] == ("w", bits(np.array(3.0)), bits(np.array(-2.0)))


def test_a_retained_node_no_variable_feeds_gets_its_gradient_either_way():
    def program():
        with ns.Graph() as g:
            c = ns.constant(np.array([1.0, -2.0]), name="c")
            w = ns.Variable(0.5, name="w")
            h = (c * c).retain_grad()
            y = (-h * w).sum()
        g.forward(fetches=[y])
        g.backward(y)
        return state(g), bits(h.grad)

    on, off = both_ways(program)
    assert on == off
    assert on[1] == bits(np.array([-0.5, -0.5]))


def test_no_trainable_source_is_the_same_error_either_way():
    def program():
        with ns.Graph() as g:
            w = ns.Variable(3.0, name="w", trainable=False)
            y = -w
        g.forward(fetches=[y])
        with pytest.raises(RuntimeError) as error:
            g.backward(y)
        return str(error.value)

    on, off = both_ways(program)
    assert on == off
    assert "does not depend on any trainable Variable" in on
