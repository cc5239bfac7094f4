"""Static-mode messages point only to what exists: a foreign node is matched to a node
of the running graph only when it has one of that name; a name taken in the default
graph says how it got there; compile names its own inputs; and a numpy function in a
traced (dynamic-mode) function is sent to the ng.* op; a foreign placeholder is sent to
the graph's own placeholders, and compile's outputs given as a dict are refused as one."""

from __future__ import annotations

import numpy as np
import pytest

import naivegraph.static as ns


def test_a_foreign_node_whose_name_the_graph_lacks_is_told_to_build_inside_the_block():
    with ns.Graph() as other:
        x = ns.placeholder("x", shape=(2,))
        y = ns.sum(x * 2.0)
    g = ns.Graph()
    with pytest.raises(ValueError) as error:
        g.compile([x], [y])
    message = str(error.value)
    assert f"node 'x' belongs to {other.name}, not to {g.name}" in message
    assert f"{g.name} has no node named 'x'" in message
    assert "build the node inside the `with` block" in message
    assert f"{g.name}['x']" not in message


def test_a_foreign_node_whose_name_the_graph_has_is_sent_to_the_graphs_own():
    with ns.Graph() as other:
        x = ns.placeholder("x", shape=(2,))
    with ns.Graph() as g:
        ns.placeholder("x", shape=(2,))
        y = ns.sum(g["x"] * 2.0)
    with pytest.raises(ValueError, match=rf"use this graph's own node, {g.name}\['x'\]"):
        g.compile([x], [y])
    assert other.name != g.name


def test_a_name_taken_in_the_default_graph_says_an_earlier_run_built_it():
    ns.reset_default_graph()
    try:
        ns.placeholder("x", shape=(2,))
        with pytest.raises(ValueError) as error:
            ns.placeholder("x", shape=(2,))
        message = str(error.value)
        assert "a node named 'x' already exists in default_graph" in message
        assert "built outside any `with graph:` block" in message
        assert "ns.reset_default_graph()" in message
        assert "pick another name" not in message
    finally:
        ns.reset_default_graph()


def test_a_name_taken_in_a_graph_of_ones_own_still_asks_for_another_name():
    with ns.Graph():
        ns.placeholder("x", shape=(2,))
        with pytest.raises(ValueError, match="pick another name"):
            ns.placeholder("x", shape=(2,))


def test_compile_without_a_needed_input_says_to_list_it_in_compiles_inputs():
    with ns.Graph() as g:
        x = ns.placeholder("input", shape=(2,))
        loss = ns.sum(x * 2.0)
    with pytest.raises(ValueError) as error:
        g.compile([], [loss])
    message = str(error.value)
    assert "placeholder 'input' needs a value" in message
    assert "list it in compile's inputs" in message
    assert "graph.forward" not in message


def test_np_where_in_a_traced_function_is_sent_to_ng_where():
    def f(x):
        return np.where(x > 0, x, 0.0)

    with pytest.raises(TypeError, match="np.where cannot build a graph node: use ng.where"):
        ns.trace(f, np.ones(2))


def test_a_masked_assignment_in_a_traced_function_is_sent_to_ng_where():
    def f(x):
        y = x * 1.0
        y[y > 0] = 0.0
        return y

    with pytest.raises(TypeError) as error:
        ns.trace(f, np.ones(2))
    assert "ng.where" in str(error.value)
    assert "ns.where" not in str(error.value)


def test_np_where_on_a_node_built_by_hand_is_still_sent_to_ns_where():
    with ns.Graph():
        p = ns.placeholder("p", shape=(2,))
        with pytest.raises(TypeError, match="np.where cannot build a graph node: use ns.where"):
            np.where(p > 0, p, 0.0)


def test_a_foreign_placeholder_is_sent_to_the_graphs_own_placeholder():
    with ns.Graph() as other:
        x = ns.placeholder("x", shape=(2, 2))
    with ns.Graph() as g:
        own = ns.placeholder("input", shape=(2, 2))
        loss = ns.sum(own * 2.0)
    with pytest.raises(ValueError) as error:
        g.compile([x], [loss])
    message = str(error.value)
    assert f"node 'x' belongs to {other.name}, not to {g.name}" in message
    assert f"{g.name}'s placeholder is 'input': use {g.name}'s own placeholder" in message
    assert f"{g.name}['x']" not in message
    assert "build the node inside" not in message
    assert [float(v) for v in g.compile([own], [loss])(np.ones((2, 2)))] == [8.0]


def test_compile_outputs_given_as_a_dict_are_refused_as_a_dict():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2,))
        loss = ns.sum(x * 2.0)
    size = len(g.nodes)
    with pytest.raises(TypeError, match="compile outputs must be a list of nodes") as error:
        g.compile([x], {"loss": loss})
    assert "got a dict, whose keys would be read as node names" in str(error.value)
    assert len(g.nodes) == size
