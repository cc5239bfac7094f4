"""Rendering through the engine chain: dot on PATH, else pygraphviz, else one clear error."""

from __future__ import annotations

import builtins
import shutil

import pytest
from drawings import reference_example

from naivegraph.render import GraphvizUnavailable, engine, render

MAGIC = {"svg": (b"<?xml", b"<svg"), "png": (b"\x89PNG",), "pdf": (b"%PDF",)}
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="no `dot` binary on PATH")


@pytest.fixture
def drawing():
    example = reference_example()
    return render(example["loss"], kind="both", params=example)


@pytest.fixture
def no_dot(monkeypatch, tmp_path):
    """PATH without the Graphviz programs: the chain must fall back to pygraphviz."""
    monkeypatch.setenv("PATH", str(tmp_path))
    assert shutil.which("dot") is None


@pytest.fixture
def no_pygraphviz(monkeypatch):
    real_import = builtins.__import__

    def failing_import(name, *args, **kwargs):
        if name == "pygraphviz" or name.startswith("pygraphviz."):
            raise ImportError("No module named 'pygraphviz' (hidden by the test)")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", failing_import)


def _check(data: bytes, fmt: str) -> None:
    assert data.startswith(MAGIC[fmt]), data[:20]
    assert len(data) > 1000


@needs_dot
@pytest.mark.parametrize("fmt", ["svg", "png", "pdf"])
def test_dot_program_renders(drawing, fmt):
    _check(drawing.pipe(fmt, backend="dot"), fmt)


@pytest.mark.parametrize("fmt", ["svg", "png", "pdf"])
def test_pygraphviz_renders_when_dot_is_not_on_path(drawing, no_dot, fmt):
    assert engine.available_backends() == ["pygraphviz"]
    _check(drawing.pipe(fmt), fmt)  # the automatic chain
    _check(drawing.pipe(fmt, backend="pygraphviz"), fmt)


def test_svg_mentions_the_graph_and_keeps_style_classes(drawing, no_dot):
    svg = drawing.pipe("svg", encoding="utf-8")
    assert "MeanBackward0" in svg and "AccumulateGrad" in svg
    assert 'class="node leaf"' in svg  # the DOT class ends up as CSS class


def test_render_writes_files_with_the_right_suffix(drawing, no_dot, tmp_path):
    png = drawing.render(tmp_path / "fig" / "reference", format="png")
    assert png.endswith("reference.png")
    _check(open(png, "rb").read(), "png")
    pdf = drawing.render(outfile=tmp_path / "reference.pdf")
    _check(open(pdf, "rb").read(), "pdf")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig", "reference.pdf"]


def test_jupyter_display_is_html_and_svg_from_our_chain(drawing, no_dot):
    bundle = drawing._repr_mimebundle_()
    assert list(bundle) == ["text/html", "image/svg+xml"]  # svg: where scripts do not run
    assert "<svg" in bundle["image/svg+xml"] and "<svg" in bundle["text/html"]
    assert "<svg" in drawing._repr_svg_()
    assert drawing._repr_mimebundle_(include=["image/png"])["image/png"].startswith(b"\x89PNG")


def test_no_engine_is_one_clear_error_and_source_still_works(drawing, no_dot, no_pygraphviz):
    assert engine.available_backends() == []
    assert "MeanBackward0" in drawing.source
    with pytest.raises(GraphvizUnavailable) as info:
        drawing.pipe("png")
    message = str(info.value)
    assert "pip install pygraphviz" in message and "apt-get install graphviz" in message
    assert ".source" in message
    assert isinstance(info.value, RuntimeError)
    with pytest.raises(GraphvizUnavailable):
        drawing.render("never", format="svg")
    bundle = drawing._repr_mimebundle_()  # Jupyter shows the hint, not the DOT text
    assert "image/svg+xml" not in bundle
    assert "pip install pygraphviz" in bundle["text/html"]
    assert "digraph" not in bundle["text/plain"]


def test_a_forced_missing_engine_does_not_fall_back(drawing, no_dot):
    with pytest.raises(GraphvizUnavailable, match="not on PATH"):
        drawing.pipe("svg", backend="dot")


def test_unsupported_format_is_a_value_error_before_any_engine_runs(drawing):
    with pytest.raises(ValueError, match="unsupported output format 'bmpx'"):
        drawing.pipe("bmpx")
    with pytest.raises(ValueError, match="unknown backend"):
        drawing.pipe("svg", backend="matplotlib")


def test_a_broken_dot_binary_falls_back_to_pygraphviz(drawing, tmp_path, monkeypatch):
    fake = tmp_path / "dot"
    fake.write_bytes(b"\x7fELF not really a program")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    _check(drawing.pipe("svg"), "svg")


def test_the_subprocess_path_with_a_stand_in_dot_program(drawing, tmp_path, monkeypatch):
    """Without a system Graphviz, a `dot` script that lays out with pygraphviz stands in:
    it exercises the subprocess route (arguments, stdin, stdout) end to end."""
    import sys

    fake = tmp_path / "dot"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import sys, pygraphviz\n"
        "fmt = sys.argv[1][2:]\n"
        "graph = pygraphviz.AGraph(string=sys.stdin.read())\n"
        "sys.stdout.buffer.write(graph.draw(format=fmt, prog='dot'))\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert engine.available_backends()[0] == "dot"
    for fmt in ("svg", "png", "pdf"):
        _check(drawing.pipe(fmt, backend="dot"), fmt)


def test_a_failing_dot_is_reported_when_nothing_else_works(
    drawing, tmp_path, monkeypatch, no_pygraphviz
):
    fake = tmp_path / "dot"
    fake.write_text("#!/bin/sh\necho 'Format: \"png\" not recognized' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(engine.RenderError, match="not recognized"):
        drawing.pipe("png")
