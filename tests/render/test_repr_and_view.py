"""A drawing in a terminal says how to see it; ``.view()`` writes it and opens a viewer."""

from __future__ import annotations

import graphviz

import naivegraph as ng
from naivegraph.render import drawing as drawing_module


def _drawing():
    w = ng.tensor(2.0, dtype=ng.float64, requires_grad=True)
    return ng.render((w * w).exp(), kind="forward")


def test_repr_names_every_way_to_see_the_drawing():
    shown = repr(_drawing())
    assert shown.startswith("<naivegraph drawing: Jupyter shows it; elsewhere ")
    assert '.render("graph", format="svg") writes graph.svg' in shown
    assert ".view() opens it in a viewer" in shown
    assert '.save_html("graph.html") writes a page to open in a browser' in shown
    assert "object at 0x" not in shown


def test_the_repr_lists_what_ways_to_see_returns():
    for way in drawing_module.ways_to_see():
        assert way in repr(_drawing())


def test_view_writes_the_file_and_opens_it_in_the_viewer(tmp_path, monkeypatch):
    opened = []
    monkeypatch.setattr(graphviz, "view", lambda path, quiet=False: opened.append(path))
    path = _drawing().view(tmp_path / "graph")
    assert opened == [path] and path.endswith(".pdf")
    assert (tmp_path / "graph.pdf").read_bytes().startswith(b"%PDF")


def test_render_without_view_opens_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(graphviz, "view", lambda *a, **k: (_ for _ in ()).throw(AssertionError))
    path = _drawing().render(tmp_path / "graph", format="svg")
    assert path == str(tmp_path / "graph.svg")
