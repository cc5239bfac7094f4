"""Drawings a learner can explore: an inline SVG with a little JavaScript, as HTML.

:func:`view_html` turns the SVG Graphviz laid out into one self-contained ``<div>``:
toolbar (zoom in / zoom out / reset), the SVG scaled to its container, a details panel
filled from a JSON payload when a node is clicked, and (for a walkthrough) the
Previous / Next bar.  Everything is inline (``view.js``, the CSS, the data): no request
leaves the page, so it works offline, in JupyterLab, Notebook 7, VS Code and in a
saved ``.html`` file.  :func:`page` wraps a view into a standalone HTML document.

Ids.  Each view gets a fresh id (``ngv-<counter>-<random>``); every id of its SVG is
prefixed with it, and each node's group is renamed ``<view id>-<DOT name>`` (``n0``,
``n1`` ...), the key of its details in the JSON.  Two views on a page share nothing.

>>> fragment = view_html('<svg width="80pt" height="40pt" viewBox="0 0 80 40">'
...     '<g id="node1" class="node"><title>n0</title></g></svg>', {"n0": {"title": "a",
...     "rows": []}}, label="tiny")
>>> fragment.count('-n0"'), 'aria-label="zoom in"' in fragment, "src=" in fragment
(1, True, False)
"""

from __future__ import annotations

import html
import itertools
import json
import os
import re
import secrets
from importlib import resources
from typing import Any, Sequence

#: a notebook's output area in JupyterLab / Notebook 7 at a laptop's width, in CSS px:
#: a ``kind="both"`` drawing wider than this stacks its halves
OUTPUT_WIDTH_PX = 848

#: CSS px per SVG pt (Graphviz writes sizes in points, 72 per inch; CSS has 96 px per inch)
PX_PER_PT = 96 / 72

_view_ids = itertools.count(1)


def script_text() -> str:
    """The JavaScript of every view (``view.js``, shipped as package data)."""
    text = resources.files(__package__).joinpath("view.js").read_text(encoding="utf-8")
    return text.replace("</", "<\\/")  # inline in a script element, which "</" would end


def new_view_id() -> str:
    """An id no other view on the page has, also across kernels and saved pages."""
    return f"ngv-{next(_view_ids)}-{secrets.token_hex(3)}"


# ----------------------------------------------------------------------------- the SVG
_PROLOG = re.compile(r"^.*?(?=<svg\b)", re.S)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_NODE_GROUP = re.compile(r'<g id="([^"]+)" class="(node[^"]*)">\s*<title>([^<]*)</title>')
_ID = re.compile(r'\bid="([^"]+)"')
_SIZE = re.compile(r'<svg\b[^>]*?\bwidth="([\d.]+)pt"[^>]*?\bheight="([\d.]+)pt"', re.S)


def svg_size_px(svg: str) -> tuple[float, float]:
    """Width and height of a Graphviz SVG in CSS pixels (0, 0 when not given in pt).

    >>> svg_size_px('<svg width="1020pt" height="300pt" viewBox="0 0 1020 300">')
    (1360.0, 400.0)
    """
    match = _SIZE.search(svg)
    if not match:
        return 0.0, 0.0
    return float(match.group(1)) * PX_PER_PT, float(match.group(2)) * PX_PER_PT


def inline_svg(svg: str, view_id: str) -> str:
    """Graphviz's SVG document as an element of a page: no XML prolog or comments, ids
    prefixed by ``view_id`` (node groups named after their DOT name), scaled to fit."""
    width, height = svg_size_px(svg)
    svg = _COMMENT.sub("", _PROLOG.sub("", svg, count=1)).strip()

    def node_id(match: re.Match) -> str:
        name = html.unescape(match.group(3))
        return (
            f'<g id="@@{view_id}-{name}" class="{match.group(2)}">\n<title>{match.group(3)}</title>'
        )

    svg = _NODE_GROUP.sub(node_id, svg)
    svg = _ID.sub(
        lambda m: (
            f'id="{m.group(1)[2:]}"'
            if m.group(1).startswith("@@")
            else f'id="{view_id}-{m.group(1)}"'
        ),
        svg,
    )
    style = f"max-width:{width:.0f}px;" if width else ""
    # never wider than its natural size (small drawings stay small) nor than its container:
    # the whole width is always visible, the height follows
    svg = re.sub(
        r'<svg\b([^>]*?)\swidth="[^"]*"\s+height="[^"]*"',
        lambda m: f'<svg{m.group(1)} width="100%" style="{style}" role="img"',
        svg,
        count=1,
    )
    return svg


# ----------------------------------------------------------------------------- the view
# The panel's table rules start with .ngv: they must outrank JupyterLab's rules for tables in
# outputs (cells right-aligned, padded), which would push each value far from its name.
_CSS = """
.ngv{font:13px/1.35 -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:#212121;
 max-width:100%;box-sizing:border-box;border:1px solid #e0e0e0;border-radius:6px;
 padding:6px;margin:4px 0;outline:none;position:relative;background:#fff}
.ngv:focus-visible,.ngv:focus-within{border-color:#90caf9;box-shadow:0 0 0 2px #e3f2fd}
.ngv-bar{display:flex;gap:4px;align-items:center;flex-wrap:wrap;margin-bottom:4px}
.ngv button{font:inherit;padding:2px 9px;border:1px solid #bdbdbd;border-radius:4px;
 background:#fafafa;cursor:pointer;color:#212121}
.ngv button:hover{background:#eeeeee}.ngv button:disabled{opacity:.4;cursor:default}
.ngv-hint{color:#757575;font-size:12px;margin-left:6px}
.ngv-stage{overflow:hidden;width:100%}
.ngv-walk .ngv-stage{max-height:max(260px,min(60vh,100vh - 360px));overflow-y:auto}
.ngv-stage svg{display:block;margin:0 auto;height:auto;touch-action:none;
 cursor:grab;user-select:none}
.ngv-stage svg.ngv-dragging{cursor:grabbing}
.ngv .ngv-clickable{cursor:pointer}
.ngv .ngv-hidden{visibility:hidden}
.ngv .ngv-selected polygon,.ngv .ngv-selected ellipse,.ngv .ngv-selected path{
 stroke:#1565c0;stroke-width:3px}
.ngv .ngv-active polygon,.ngv .ngv-active ellipse,.ngv .ngv-active path{
 stroke:#c62828;stroke-width:3.5px}
.ngv .ngv-freed{opacity:.45}
.ngv-head{position:sticky;top:0;z-index:3;background:#fff}
.ngv-panel{position:absolute;right:8px;top:40px;max-width:min(360px,70%);max-height:60vh;
 overflow:auto;background:#fffffff2;border:1px solid #90a4ae;border-radius:6px;padding:6px 8px;
 box-shadow:0 2px 8px #0002;z-index:2}
.ngv-panel-head{display:flex;justify-content:space-between;gap:8px;align-items:center}
.ngv-panel table{border-collapse:collapse;margin-top:4px}
.ngv .ngv-panel th{text-align:left;font-weight:600;color:#455a64;padding:1px 8px 1px 0;
 vertical-align:top;white-space:nowrap;line-height:1.35}
.ngv .ngv-panel td{font-family:Menlo,Consolas,monospace;font-size:12px;white-space:pre-wrap;
 word-break:break-word;text-align:left;padding:1px 0;vertical-align:top;line-height:1.35}
.ngv-steps{display:flex;gap:8px;align-items:center;margin:2px 0 4px}
.ngv-label{font-weight:600;min-width:7em;text-align:center}
.ngv-step-box{background:#f5f5f5;border-radius:4px;padding:4px 8px;margin-bottom:4px;
 min-height:3.2em}
.ngv-step-title{font-weight:600}
.ngv-step-text{font-family:Menlo,Consolas,monospace;font-size:12px;white-space:pre-wrap}
"""

_TOOLBAR = (
    '<div class="ngv-bar">'
    '<button type="button" aria-label="zoom in" title="zoom in (+)">+</button>'
    '<button type="button" aria-label="zoom out" title="zoom out (−)">−</button>'
    '<button type="button" aria-label="reset" title="reset (0)">reset</button>'
    '<span class="ngv-hint">{hint}</span></div>'
)

_STEPS = (
    '<div class="ngv-steps">'
    '<button type="button" aria-label="previous step" title="previous step (←)">◀ Previous</button>'
    '<span class="ngv-label" aria-live="polite">step 1 of {count}</span>'
    '<button type="button" aria-label="next step" title="next step (→)">Next ▶</button>'
    "</div>"
    '<div class="ngv-step-box"><div class="ngv-step-title"></div>'
    '<div class="ngv-step-text"></div></div>'
)


def _json_for_script(data: Any) -> str:
    """JSON that cannot end its ``<script>`` element early."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


def view_html(
    svg: str,
    nodes: dict,
    *,
    label: str = "naivegraph drawing",
    steps: Sequence[dict] | None = None,
    reveal_labels: bool = False,
    view_id: str | None = None,
) -> str:
    """One interactive view as an HTML fragment (a ``<div>`` with its style and script).

    ``nodes`` maps DOT node names to ``{"title": ..., "rows": [[key, value], ...]}``;
    ``steps`` (a walkthrough) are dicts with ``title``, ``lines`` and the DOT names to
    ``show`` (None: all), mark ``active`` / ``done`` / ``freed``; with ``reveal_labels``
    the label lines drawn in the gradient colour show only on the nodes listed in
    ``grads``, and those in the value colour only on the nodes in ``values``.
    """
    view_id = view_id or new_view_id()
    data: dict[str, Any] = {"nodes": nodes}
    if steps:
        data["steps"] = list(steps)
        data["revealLabels"] = reveal_labels
    hint = "drag to pan · click, then wheel to zoom · click a node for details"
    if steps:
        hint += " · ← → step"
    parts = [
        f'<div class="{"ngv ngv-walk" if steps else "ngv"}" id="{view_id}" tabindex="0" '
        'role="group" '
        f'aria-label="{html.escape(label)}">',
        f"<style>{_CSS}</style>",
        # the buttons and the step's text stay in sight while a tall drawing scrolls
        '<div class="ngv-head">',
        _TOOLBAR.format(hint=hint),
        _STEPS.format(count=len(steps)) if steps else "",
        "</div>",
        f'<div class="ngv-stage">{inline_svg(svg, view_id)}</div>',
        '<div class="ngv-panel" hidden></div>',
        f'<script type="application/json" class="ngv-data">{_json_for_script(data)}</script>',
        f"<script>{script_text()}\nwindow.naivegraphView.init({json.dumps(view_id)});</script>",
        "</div>",
    ]
    return "".join(parts)


def page(fragment: str, title: str = "naivegraph") -> str:
    """A standalone HTML document around one or more views."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title>"
        "<style>body{margin:16px;max-width:1100px}</style></head>\n"
        f"<body>\n{fragment}\n</body></html>\n"
    )


def write_page(path: str | os.PathLike, text: str) -> str:
    """Write ``text`` to ``path`` (UTF-8, folders made) and return the path."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


# ----------------------------------------------------------------------------- values
def summarize(value: Any, limit: int = 64) -> str:
    """A value as text for the details panel: whole when small, else shape and statistics.

    >>> import numpy as np
    >>> summarize(np.full((2, 2), 7.0))
    '[[7., 7.],\\n [7., 7.]]'
    >>> summarize(np.arange(1000.0))
    'shape (1000,): min 0, max 999, mean 499.5\\n[  0.,   1.,   2., ..., 997., 998., 999.]'
    """
    import numpy as np

    array = np.asarray(value)
    if array.size <= limit:
        return np.array2string(array, separator=", ", precision=6, max_line_width=72)
    head = f"shape {tuple(array.shape)}"
    if array.dtype.kind in "biuf" and array.size:
        low, high, mean = array.min(), array.max(), array.astype(np.float64).mean()
        head += f": min {low:.6g}, max {high:.6g}, mean {mean:.6g}"
    body = np.array2string(array, separator=", ", precision=4, threshold=6, edgeitems=3)
    return head + "\n" + body
