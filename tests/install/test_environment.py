"""Checks on the installed environment rather than on naivegraph's maths.

These catch a broken install early: a missing console script, or a
pygraphviz that cannot lay out graphs without a system Graphviz.
"""

from importlib.metadata import entry_points

import pygraphviz


def test_naivegraph_console_script_is_registered_to_cli_main():
    scripts = entry_points(group="console_scripts", name="naivegraph")

    assert [(ep.dist.name, ep.value) for ep in scripts] == [("naivegraph", "naivegraph.cli:main")]


def test_pygraphviz_lays_out_two_node_graph_to_svg_in_process(monkeypatch):
    # With PATH empty no `dot` executable can be found, so a successful render
    # proves the layout engine runs inside this process.
    monkeypatch.setenv("PATH", "")
    graph = pygraphviz.AGraph(string="digraph { a -> b }")

    svg = graph.draw(format="svg", prog="dot")

    assert isinstance(svg, bytes)
    assert svg.startswith(b"<?xml") or b"<svg" in svg
    assert b"<title>a</title>" in svg
    assert b"<title>b</title>" in svg
    assert b"<title>a&#45;&gt;b</title>" in svg
