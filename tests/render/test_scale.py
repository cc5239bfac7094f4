"""Huge graphs: iterative traversal, fast DOT, and the collapse note."""

from __future__ import annotations

from drawings import parse_dot
from work import growth

import naivegraph as ng
from naivegraph.render import render


def _chain(n: int):
    x = ng.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(n):  # built in a loop: no recursion anywhere
        y = y.sin()  # SinBackward0 keeps its input: one saved value per op
    return x, y


def test_a_100000_op_chain_draws_without_recursion_error():
    x, y = _chain(100_000)
    for kind in ("forward", "backward"):
        drawing = render(y, kind=kind, params={"x": x, "y": y})
        assert drawing.stats["items"] >= 200_000
        dot = parse_dot(drawing.source)
        assert len(dot.nodes) == 501  # 500 kept + the note
        assert {n.title for n in dot.with_class("leaf")} == {"x"}  # both ends are kept
        assert {n.title for n in dot.with_class("output")} == {"y"}


def test_drawing_work_grows_linearly_with_graph_size():
    # Counted, not timed (tests/work.py); benchmarks/bench_scale.py times it.
    def draw(n):
        _, y = _chain(n)  # n ops + n tensors + the leaf in the forward view
        assert len(parse_dot(render(y, params={}, max_nodes=None).source).nodes) == 2 * n + 1

    assert growth(draw, 200, 2_000) < 15


def test_collapse_note_says_what_was_hidden():
    _, y = _chain(1_000)
    drawing = render(y, kind="backward", params={}, max_nodes=40)
    dot = parse_dot(drawing.source)
    (note,) = dot.with_class("note")
    assert "… 1,963 more nodes hidden" in note.text
    assert "SinBackward0s" in note.text and "saved values" in note.text
    assert len(dot.nodes) == 41
    assert drawing.stats["hidden"] == 1_963
    # the note is wired between the kept ends, with dotted edges
    note_edges = [(a, b) for a, b, attrs in dot.edges if attrs.get("style") == "dotted"]
    assert any(a == note.id for a, b in note_edges) and any(b == note.id for a, b in note_edges)
    assert "hidden part of a large graph" in drawing.source  # legend entry


def test_a_chain_of_one_kind_is_named_as_such():
    x = ng.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(300):
        y = y + 1.0  # AddBackward0 saves nothing: the hidden middle is one kind of node
    (note,) = parse_dot(render(y, kind="backward", params={}, max_nodes=50).source).with_class(
        "note"
    )
    assert note.text.endswith("… 253 more nodes of the same kind hidden: 253 AddBackward0s")
    everything = parse_dot(render(y, kind="backward", params={}, max_nodes=None).source)
    assert not everything.with_class("note") and len(everything.nodes) == 303


def test_a_long_static_chain_draws_fast_and_collapses():
    ns = __import__("pytest").importorskip("naivegraph.static")
    with ns.Graph() as g:
        y = ns.placeholder("x", shape=())
        for _ in range(5_000):
            y = y * 1.0
    drawing = render(g, max_nodes=100)
    (note,) = parse_dot(drawing.source).with_class("note")
    assert "9,901 more nodes hidden" in note.text and "mul ops" in note.text
