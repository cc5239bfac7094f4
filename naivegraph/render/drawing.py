"""The drawing object: a ``graphviz.Digraph`` that renders through naivegraph's engines.

The one module of naivegraph that needs the ``graphviz`` package; it is imported when
the first drawing is made, so ``import naivegraph`` loads neither graphviz nor
pygraphviz.
"""

from __future__ import annotations

import html
import os
import re
from typing import Any, Iterable

import graphviz

from . import engine, interactive
from .dot import FONT


class Drawing(graphviz.Digraph):
    """A ``graphviz.Digraph`` that renders through naivegraph's engine chain.

    ``dot`` on PATH first, then pygraphviz in-process (see :mod:`naivegraph.render.engine`).
    Jupyter shows it as SVG; if no engine can run, the cell shows the installation hint
    instead of silently falling back to text.  ``.source`` always works.

    >>> d = Drawing()
    >>> d.node("n0", "a"); d.node("n1", "b"); d.edge("n0", "n1")
    >>> d.pipe("svg")[:5] in (b"<?xml", b"<svg ")
    True

    Outside Jupyter its repr says how to see it:

    >>> d  # doctest: +ELLIPSIS
    <naivegraph drawing: Jupyter shows it; elsewhere .save_html("graph.html") writes a page ...>
    """

    #: statistics filled by the builders: node counts, hidden count, timing
    stats: dict
    #: DOT name -> the details panel of that node in the interactive view
    details: dict
    #: the two clusters of a side-by-side drawing (``kind="both"``), stacked when too wide
    halves: tuple[str, str] | None

    def __init__(self, *args: Any, backend: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.backend = backend
        self.stats = {}
        self.details = {}
        self.item_ids: dict = {}
        self.halves = None

    def __repr__(self) -> str:
        return f"<naivegraph drawing: Jupyter shows it; elsewhere {', '.join(ways_to_see())}>"

    def _copy_kwargs(self, **kwargs: Any) -> dict:
        return super()._copy_kwargs(backend=self.backend, **kwargs)

    def pipe(
        self,
        format: str | None = None,
        *args: Any,
        backend: str | None = None,
        encoding: str | None = None,
        force: bool = False,
        **ignored: Any,
    ) -> bytes | str:
        """The drawing as ``format`` bytes (``str`` if ``encoding`` is given).

        A drawing too big to lay out in reasonable time raises
        :class:`~naivegraph.render.engine.LayoutTooLarge` before Graphviz starts (and one
        merely large warns); ``force=True`` lays it out anyway.  See
        :data:`~naivegraph.render.engine.REFUSE_COST` for the measured limits.
        """
        data = engine.pipe(
            self.source, format or self.format or "svg", backend or self.backend, force=force
        )
        return data.decode(encoding) if encoding else data

    def render(
        self,
        filename: str | os.PathLike | None = None,
        directory: str | None = None,
        view: bool = False,
        cleanup: bool = False,
        format: str | None = None,
        *args: Any,
        outfile: str | os.PathLike | None = None,
        backend: str | None = None,
        force: bool = False,
        quiet_view: bool = False,
        **ignored: Any,
    ) -> str:
        """Write the drawing to a file and return its path.

        ``render("fig/loss", format="png")`` writes ``fig/loss.png``;
        ``render(outfile="fig/loss.pdf")`` takes the format from the suffix.  Unlike
        ``graphviz.Digraph.render`` no DOT source file is written next to it (use
        ``.save()`` for that).  ``force=True`` lays out a drawing that :meth:`pipe`
        refuses as too big.  ``view=True`` (or ``.view()``) then opens the file in the
        system's viewer.
        """
        path = _output_path(filename, directory, format or self.format, outfile)
        fmt = (
            os.path.splitext(path)[1][1:]
            if format is None and outfile
            else (format or self.format or "svg")
        )
        data = self.pipe(fmt, backend=backend, force=force)
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)
        if view:
            graphviz.view(path, quiet=quiet_view)
        return path

    # -- interactive HTML ------------------------------------------------------------
    def to_html(self) -> str:
        """A standalone HTML page showing this drawing interactively: zoom, pan, and
        a details panel when a node is clicked.  Everything is inline (no request
        leaves the page).

        >>> d = Drawing(); d.node("n0", "a")
        >>> page = d.to_html()
        >>> page.startswith("<!DOCTYPE html>") and 'aria-label="zoom in"' in page
        True
        """
        return interactive.page(self.html_fragment(), self._label())

    def save_html(self, path: str | os.PathLike) -> str:
        """Write :meth:`to_html` to ``path`` and return the path."""
        return interactive.write_page(path, self.to_html())

    def html_fragment(self) -> str:
        """The interactive view as one ``<div>`` (what Jupyter shows as ``text/html``)."""
        return interactive.view_html(self.fitted_svg(), self.details, label=self._label())

    def fitted_svg(self) -> str:
        """The SVG, laid out with the halves of a ``kind="both"`` drawing one above the
        other when side by side they would be wider than a notebook's output area."""
        svg = self._svg()
        if self.halves is None:
            return svg
        width, _ = interactive.svg_size_px(svg)
        if width <= interactive.OUTPUT_WIDTH_PX:
            return svg
        return self.stacked().pipe("svg", encoding="utf-8")

    def stacked(self) -> "Drawing":
        """A copy with the second half laid out under the first (invisible edges from the
        first half's last nodes to the second half's first nodes)."""
        first, second = self.halves or (None, None)
        copy = self.copy()
        for tail, head in _joining_edges(self.body, f"cluster_{first}", f"cluster_{second}"):
            copy.body.append(f"\t{tail} -> {head} [style=invis weight=0]\n")
        return copy

    def _label(self) -> str:
        title = self.graph_attr.get("label")
        return f"naivegraph drawing: {title}" if title else "naivegraph drawing"

    # Jupyter: everything goes through self.pipe, i.e. our engine chain.
    def _repr_mimebundle_(
        self, include: Iterable[str] | None = None, exclude: Iterable[str] | None = None, **_: Any
    ) -> dict:
        """``text/html`` (the interactive view) and ``image/svg+xml`` (the plain drawing,
        shown where scripts do not run, e.g. an untrusted notebook)."""
        wanted = set(include) if include is not None else {"text/html", "image/svg+xml"}
        wanted -= set(exclude or ())
        try:
            bundle = {}
            if "text/html" in wanted:
                bundle["text/html"] = self.html_fragment()
            if "image/svg+xml" in wanted:
                bundle["image/svg+xml"] = self._repr_image_svg_xml()
            if "image/png" in wanted:
                bundle["image/png"] = self._repr_image_png()
            return bundle
        except (engine.GraphvizUnavailable, engine.LayoutTooLarge) as error:
            # Visible in the cell, never a silent switch to the DOT text.
            message = str(error)
            return {
                "text/plain": message,
                "text/html": '<pre style="color:#b71c1c">' + html.escape(message) + "</pre>",
            }

    def _repr_svg_(self) -> str:
        return self._repr_image_svg_xml()

    def _repr_image_svg_xml(self) -> str:
        return self._svg()

    def _svg(self) -> str:
        """The SVG, laid out once per DOT source: Jupyter's bundle asks for it twice
        (the view and the plain drawing), and a big layout takes seconds."""
        source = self.source
        cached = getattr(self, "_svg_cache", None)
        if cached is None or cached[0] != source:
            self._svg_cache = (source, self.pipe("svg", encoding="utf-8"))
        return self._svg_cache[1]

    def _repr_image_png(self) -> bytes:
        return self.pipe("png")

    def _repr_image_jpeg(self) -> bytes:
        return self.pipe("jpeg")


def ways_to_see() -> list[str]:
    """How a drawing is seen outside Jupyter: what its repr suggests, one way each."""
    return [
        '.save_html("graph.html") writes a page to open in a browser',
        '.render("graph", format="svg") writes graph.svg',
        ".view() opens it in a viewer",
    ]


_STATEMENT = re.compile(r"^\s*(n\d+)\s*(->\s*(n\d+))?")


def _joining_edges(body: list[str], first: str, second: str, limit: int = 64) -> list:
    """Pairs (a node of ``first`` no edge of ``first`` leaves, a node of ``second`` no
    edge of ``second`` enters): joined by an edge, ``second`` lies below ``first``."""
    cluster_of: dict[str, str] = {}
    edges = []
    current = None
    for line in body:
        text = line.strip()
        if text.startswith("subgraph "):
            current = text.split()[1]
        elif text == "}":
            current = None
        match = _STATEMENT.match(line)
        if match and match.group(3):
            edges.append((match.group(1), match.group(3)))
        elif match and current is not None:
            cluster_of[match.group(1)] = current
    members = {c: [n for n, k in cluster_of.items() if k == c] for c in (first, second)}
    leaving = {a for a, b in edges if cluster_of.get(a) == cluster_of.get(b) == first}
    entered = {b for a, b in edges if cluster_of.get(a) == cluster_of.get(b) == second}
    sinks = [n for n in members[first] if n not in leaving]
    sources = [n for n in members[second] if n not in entered]
    return [(a, b) for a in sinks for b in sources][:limit]


def _output_path(filename, directory, fmt, outfile) -> str:
    for option, value in (("filename", filename), ("directory", directory), ("outfile", outfile)):
        if value is not None and not isinstance(value, (str, os.PathLike)):
            raise TypeError(
                f"{option} must be a path (str or os.PathLike), not {type(value).__name__}"
            )
    if outfile is not None:
        return os.fspath(outfile)
    fmt = engine.check_format(fmt or "svg")
    if filename is None:
        filename = "naivegraph"
    path = os.fspath(filename)
    if directory is not None:
        path = os.path.join(os.fspath(directory), path)
    if not path.lower().endswith("." + fmt):
        path = f"{path}.{fmt}"
    return path


def new_drawing(
    title: str | None = None, rankdir: str = "TB", backend: str | None = None
) -> Drawing:
    """An empty drawing with the lab's fonts and spacing."""
    drawing = Drawing(name="naivegraph", backend=backend)
    drawing.attr(
        rankdir=rankdir,
        fontname=FONT,
        fontsize="12",
        nodesep="0.3",
        ranksep="0.35",
        labelloc="t",
        newrank="true",
    )
    if title:
        drawing.attr(label=title, fontsize="14")
    drawing.attr("node", fontname=FONT, fontsize="11", margin="0.12,0.05", height="0.3")
    drawing.attr("edge", fontname=FONT, fontsize="9", arrowsize="0.7")
    return drawing
