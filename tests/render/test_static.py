"""Static-mode drawings: leaves, symbolic gradients, and ns.optimize side by side."""

from __future__ import annotations

import numpy as np
import pytest

ns = pytest.importorskip("naivegraph.static", reason="static mode is not importable yet")

from drawings import parse_dot  # noqa: E402

import naivegraph as ng  # noqa: E402
from naivegraph.render import render, render_gradient_optimization, render_optimization  # noqa: E402


@pytest.fixture
def static_reference():
    g = ns.Graph(name="reference")
    with g:
        input = ns.placeholder("input", shape=(2, 2))
        w1 = ns.Variable(2.0, name="w1")
        w2 = ns.Variable(3.0, name="w2")
        w3 = ns.Variable(4.0, name="w3")
        l1 = input * w1
        l2 = l1 + w2
        l3 = l1 * w3
        l4 = l2 * l3
        loss = ns.mean(l4)
    return g, dict(input=input, w1=w1, w2=w2, w3=w3, l4=l4, loss=loss)


def test_variables_and_only_variables_are_leaves(static_reference):
    g, n = static_reference
    dot = parse_dot(render(g).source)
    assert {x.title for x in dot.with_class("leaf")} == {"w1", "w2", "w3"}
    assert {x.title for x in dot.with_class("nograd")} == {"input"}
    assert [x.title for x in dot.with_class("output")] == [n["loss"].name]
    assert len(dot.nodes) == len(g.nodes)


def test_values_appear_only_after_a_run(static_reference):
    g, n = static_reference
    assert "= 40" not in render(g).source  # built, not run: nothing to show
    g.forward(input=np.ones((2, 2)))
    g.backward(n["loss"])
    source = render(g).source
    assert "= 40" in source and "grad 28" in source


def test_a_node_draws_only_what_it_depends_on(static_reference):
    g, n = static_reference
    dot = parse_dot(render(n["l4"]).source)
    assert n["loss"].name not in {x.title for x in dot.nodes.values()}
    assert dot.nodes["n0"].title == n["l4"].name


def test_symbolic_gradient_nodes_are_marked(static_reference):
    g, n = static_reference
    grads = ns.gradients(n["loss"], [n["w1"], n["w2"], n["w3"]])
    whole = parse_dot(render(g).source)
    gradient_titles = {x.title for x in whole.with_class("gradient")}
    assert {x.name for x in grads} <= gradient_titles
    assert gradient_titles == {x.name for x in g.nodes if x.is_gradient}
    forward = parse_dot(render(g, kind="forward").source)
    assert not forward.with_class("gradient") and len(forward.nodes) == 9
    backward = parse_dot(render(g, kind="backward").source)
    assert backward.with_class("gradient") and backward.with_class("leaf")


def test_numeric_backward_view_without_gradient_nodes(static_reference):
    g, n = static_reference
    g.forward(input=np.ones((2, 2)))
    g.backward(n["loss"])
    drawing = render(g, kind="backward")
    dot = parse_dot(drawing.source)
    (loss,) = dot.by_title(n["loss"].name)
    assert dot.successors(loss.id)  # edges point from the loss towards the leaves
    assert all(attrs["color"] == "#c62828" for _, _, attrs in dot.edges)
    assert "numeric sweep" in drawing.source


def test_before_and_after_optimize_side_by_side():
    with ns.Graph(name="simplify") as g:
        x = ns.placeholder("x", shape=(3,))
        y = ((x * 1.0 + 0.0) * (x * 1.0 + 0.0)).sum()
    drawing = render_optimization(g, fetches=[y])
    assert (
        "subgraph cluster_before" in drawing.source and "subgraph cluster_after" in drawing.source
    )
    assert f"before: {len(g.nodes)} nodes" in drawing.source
    assert len(drawing.optimized.nodes) < len(g.nodes)
    assert drawing.report.total_changes > 0
    assert drawing.pipe("png").startswith(b"\x89PNG")


def test_raw_and_optimised_symbolic_gradients(static_reference):
    g, n = static_reference
    grads = ns.gradients(n["loss"], [n["w1"], n["w2"], n["w3"]])
    drawing = render_gradient_optimization(grads)
    source = drawing.source
    assert "subgraph cluster_raw" in source and "subgraph cluster_optimized" in source
    dot = parse_dot(source)
    assert len(dot.with_class("gradient")) > 0
    assert {x.title for x in dot.with_class("leaf")} == {"w1", "w2", "w3"}
    with pytest.raises(ValueError, match="no gradient nodes"):
        render_gradient_optimization([None])


def test_ng_render_accepts_static_graph_node_and_list(static_reference):
    g, n = static_reference
    assert ng.render(g).source.startswith("digraph")
    assert ng.render([n["l4"], n["loss"]]).source.count("class=output") == 2  # both asked for


def test_static_edges_into_a_division_are_labelled_numerator_0_denominator_1():
    with ns.Graph() as g:
        a = ns.placeholder("a", shape=(2,))
        b = ns.Variable(np.ones(2), name="b")
        q = a / b
    dot = parse_dot(render(g).source)
    (div,) = [x for x in dot.nodes.values() if x.title == q.name]
    labels = {dot.nodes[s].title: attrs.get("label") for s, t, attrs in dot.edges if t == div.id}
    assert labels == {"a": "0", "b": "1"}
