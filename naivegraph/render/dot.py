"""The drawing object, its styles, and the small graph model both modes draw into.

A drawing is made in three steps, so that huge graphs stay cheap:

1. a mode-specific traversal (``dynamic.py`` / ``static.py``) fills a :class:`Sketch`:
   items (future DOT nodes) in traversal order and edges between their indices; labels
   are *not* computed yet;
2. :func:`collapse` keeps at most ``max_nodes`` items and replaces the rest by one note
   node that says what was hidden;
3. :func:`emit` numbers the kept items ``n0, n1, ...`` (traversal order, so the ids
   are stable from one drawing of the same graph to the next), computes their labels
   and writes DOT into a :class:`~naivegraph.render.drawing.Drawing`.

Every node carries a ``class`` attribute naming its style (``leaf``, ``nograd``,
``freed`` ...): tests read it back from the DOT, and it ends up as a CSS class in SVG.
"""

from __future__ import annotations

import functools
import html
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable

import numpy as np

if TYPE_CHECKING:  # pragma: no cover  (annotations only: graphviz loads on first drawing)
    import graphviz

    from .drawing import Drawing

FONT = "Helvetica"

#: style key -> (DOT node attributes, legend text).  Colours follow the reference notes:
#: leaves are green; the rest is chosen so that each role reads differently in print too
#: (fill *and* border style differ, not only the hue).
STYLES: dict[str, tuple[dict[str, str], str]] = {
    "leaf": (
        dict(
            shape="box",
            style="rounded,filled",
            fillcolor="#a5d6a7",
            color="#2e7d32",
            penwidth="1.6",
        ),
        "leaf tensor that requires grad (gets .grad)",
    ),
    "nograd": (
        dict(
            shape="box",
            style="rounded,filled",
            fillcolor="#eeeeee",
            color="#9e9e9e",
            fontcolor="#616161",
        ),
        "does not require grad (input, constant)",
    ),
    "tensor": (
        dict(shape="box", style="rounded,filled", fillcolor="#ffffff", color="#424242"),
        "intermediate result (non-leaf)",
    ),
    "output": (
        dict(
            shape="box",
            style="rounded,filled,bold",
            fillcolor="#ffcc80",
            color="#e65100",
            penwidth="2",
        ),
        "output being drawn",
    ),
    "op": (
        dict(shape="ellipse", style="filled", fillcolor="#bbdefb", color="#1565c0"),
        "operation (forward)",
    ),
    "grad_fn": (
        dict(shape="box", style="filled", fillcolor="#c5cae9", color="#283593"),
        "grad_fn node: computes input gradients",
    ),
    "accumulate": (
        dict(shape="box", style="filled", fillcolor="#dcedc8", color="#2e7d32"),
        "AccumulateGrad: adds into the leaf's .grad",
    ),
    "saved": (
        dict(
            shape="box",
            style="dashed,filled",
            fillcolor="#fffde7",
            color="#8d6e63",
            fontcolor="#5d4037",
        ),
        "value saved for backward (dashed)",
    ),
    "gradient": (
        dict(
            shape="box",
            style="rounded,filled",
            fillcolor="#e1bee7",
            color="#6a1b9a",
            penwidth="1.4",
        ),
        "symbolic gradient node (built by ns.gradients)",
    ),
    "freed": (
        dict(style="dotted,filled", fillcolor="#fafafa", color="#9e9e9e", fontcolor="#9e9e9e"),
        "saved value freed by backward() (no retain_graph)",
    ),
    "active": (
        dict(
            shape="box", style="filled,bold", fillcolor="#ffcdd2", color="#c62828", penwidth="2.2"
        ),
        "gradient arriving now (animation)",
    ),
    "pending": (
        dict(shape="box", style="dashed", color="#bdbdbd", fontcolor="#9e9e9e"),
        "not reached yet (animation)",
    ),
    "note": (
        dict(shape="note", style="filled", fillcolor="#fff9c4", color="#f9a825"),
        "hidden part of a large graph",
    ),
}

#: edge kind -> (DOT edge attributes, legend text).
EDGES: dict[str, tuple[dict[str, str], str]] = {
    "data": (dict(color="#424242"), "value flows forward"),
    "grad": (dict(color="#c62828", penwidth="1.3"), "gradient flows backward"),
    "saved": (dict(color="#8d6e63", style="dashed", arrowhead="none"), "kept for backward"),
    "note": (dict(color="#f9a825", style="dotted"), "through hidden nodes"),
}


def style_attrs(style: str, freed: bool = False) -> dict[str, str]:
    """DOT attributes of a node of ``style`` (``freed`` greys it out, keeping its shape)."""
    attrs = dict(STYLES[style][0])
    if freed:
        attrs.update(STYLES["freed"][0])
    attrs["class"] = f"{style} freed" if freed else style
    return attrs


# ----------------------------------------------------------------------------- labels
class Colored(str):
    """A label line drawn in ``color`` (e.g. the gradient on a backward node)."""

    color: str

    def __new__(cls, text: str, color: str) -> "Colored":
        line = super().__new__(cls, text)
        line.color = color
        return line


#: labels repeat the same short texts (shapes, op names, "= 1") thousands of times in a
#: big drawing: each is escaped once
_escape = functools.lru_cache(maxsize=4096)(html.escape)


def html_label(title: str | None, *lines: str, title_color: str | None = None) -> str:
    """A Graphviz HTML-like label: bold title, then smaller detail lines (all escaped).

    >>> html_label("w1", "()", "2")
    '<<b>w1</b><br/><font point-size="10">()</font><br/><font point-size="10">2</font>>'
    >>> html_label(None, Colored("∂loss/∂w1 = 28", "#c62828"))
    '<<font point-size="10" color="#c62828">∂loss/∂w1 = 28</font>>'
    """
    parts = []
    if title:
        text = f"<b>{_escape(title)}</b>"
        if title_color:
            text = f'<font color="{title_color}">{text}</font>'
        parts.append(text)
    for line in lines:
        if line:
            color = f' color="{line.color}"' if isinstance(line, Colored) else ""
            parts.append(f'<font point-size="10"{color}>{_escape(line)}</font>')
    return "<" + "<br/>".join(parts or ["&nbsp;"]) + ">"


def format_shape(shape: Any) -> str:
    """``(2, 2)``, ``()`` for scalars, ``?`` when unknown; ``None`` axes print as ``?``.

    >>> format_shape((2, 2)), format_shape(()), format_shape((None, 3))
    ('(2, 2)', '()', '(?, 3)')
    """
    if shape is None:
        return "?"
    dims = ["?" if d is None else str(d) for d in shape]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def _number(v: Any) -> str:
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return f"{float(v):.4g}"


def format_value(value: Any, max_elements: int = 4) -> str | None:
    """Short text for a small value (a scalar or a tiny array); None when too big.

    >>> format_value(2.0), format_value(np.full((2, 2), 7.0)), format_value(np.ones(9))
    ('2', '[[7, 7], [7, 7]]', None)
    """
    if value is None:
        return None
    array = np.asarray(value)
    if array.dtype.kind not in "biufc" or array.size > max_elements:
        return None
    if array.ndim == 0:
        return _number(array.item())
    return np.array2string(
        array, separator=", ", max_line_width=10_000, formatter={"all": _number}
    ).replace("\n", "")


# ----------------------------------------------------------------------------- model
Describe = Callable[["Item"], "tuple[str, str]"]

#: describe function -> details function: ``details(item)`` gives the rows of the panel an
#: interactive view opens when the node is clicked (``{"title": ..., "rows": [...]}``).
#: The modules that describe items register their details next to them.
DETAILS: dict[Callable, Callable[["Item"], dict]] = {}

#: drawings with more shown nodes than this carry no details (each costs a value summary)
DETAILS_LIMIT = 3000


@dataclass(slots=True)
class Item:
    """A future DOT node: what it is (style), how to label it, and its collapse category."""

    style: str
    describe: Describe  # item -> (label, tooltip); called only for items that are drawn
    payload: Any
    category: str  # hidden items are summarised by category ("exp op", "tensor" ...)
    cluster: str | None = None
    freed: bool = False


@dataclass
class Sketch:
    """Items in traversal order plus edges ``(tail index, head index, kind, operand)``.

    ``operand`` is the input position an edge stands for, drawn as a small label where
    the order of operands matters (``a - b``), else None.
    """

    items: list[Item] = field(default_factory=list)
    edges: list[tuple[int, int, str, int | None]] = field(default_factory=list)
    clusters: dict[str, dict[str, str]] = field(default_factory=dict)
    #: extra legend rows ``(sample, colour, text)``, e.g. for gradient labels
    legend_rows: list[tuple[str, str, str]] = field(default_factory=list)
    _index: dict[Any, int] = field(default_factory=dict)

    def add(self, key: Any, make: Callable[[], Item]) -> tuple[int, bool]:
        """Index of the item for ``key``, creating it with ``make()`` the first time.

        Returns ``(index, created)``.  ``key`` identifies the drawn object *while the
        traversal holds it*; it never reaches the DOT output.
        """
        index = self._index.get(key)
        if index is not None:
            return index, False
        index = len(self.items)
        self.items.append(make())
        self._index[key] = index
        return index, True

    def edge(self, tail: int, head: int, kind: str = "data", operand: int | None = None) -> None:
        self.edges.append((tail, head, kind, operand))

    def __len__(self) -> int:
        return len(self.items)


@dataclass
class Collapsed:
    """What :func:`collapse` keeps: item indices in order, and the note (if any)."""

    kept: list[int]
    hidden: int = 0
    note: str | None = None


def collapse(sketch: Sketch, max_nodes: int | None) -> Collapsed:
    """Keep the first and last items of the traversal when there are too many.

    The traversal starts at the outputs and ends at the inputs, so keeping both ends
    shows where the graph starts and finishes; the middle (typically a long repeated
    chain, or one of many identical layers) is replaced by a note counting what it held.

    >>> s = Sketch()
    >>> for i in range(10):
    ...     _ = s.add(i, lambda: Item("op", None, None, "exp op"))
    >>> c = collapse(s, 4)
    >>> c.kept, c.note
    ([0, 1, 8, 9], '… 6 more nodes of the same kind hidden: 6 exp ops')
    """
    n = len(sketch.items)
    if max_nodes is None or n <= max_nodes:
        return Collapsed(list(range(n)))
    if max_nodes < 2:
        raise ValueError("max_nodes must be at least 2 (or None for no limit)")
    head = (max_nodes + 1) // 2
    tail = max_nodes - head
    kept = list(range(head)) + list(range(n - tail, n))
    counts = Counter(sketch.items[i].category for i in range(head, n - tail))
    hidden = n - max_nodes
    parts = [f"{count:,} {_plural(category, count)}" for category, count in counts.most_common(4)]
    if len(counts) > 4:
        parts.append("…")
    same = " of the same kind" if len(counts) == 1 else ""
    note = f"… {hidden:,} more nodes{same} hidden: " + ", ".join(parts)
    return Collapsed(kept, hidden, note)


def _plural(category: str, count: int) -> str:
    return category if count == 1 else category + "s"


def emit(
    sketch: Sketch, drawing: Drawing, max_nodes: int | None = 500, legend: bool = True
) -> Drawing:
    """Write ``sketch`` into ``drawing``: collapse, number, label, cluster, legend."""
    shown = collapse(sketch, max_nodes)
    new_id = {old: f"n{i}" for i, old in enumerate(shown.kept)}
    note_id = f"n{len(shown.kept)}" if shown.note else None
    by_cluster: dict[str | None, list[int]] = {}
    for old in shown.kept:
        by_cluster.setdefault(sketch.items[old].cluster, []).append(old)
    used_styles: set[str] = set()
    freed_seen = False

    style_text: dict[tuple[str, bool], str] = {}

    def write_nodes(target: graphviz.Digraph, indices: list[int]) -> None:
        # Lines are written straight into the body: graphviz's per-attribute quoting
        # costs ~80 µs a node, too slow for 100,000-node drawings.  Style attributes are
        # quoted once per style; labels are HTML-like (<...>) and need no quoting.
        nonlocal freed_seen
        body = target.body
        for old in indices:
            item = sketch.items[old]
            label, tooltip = item.describe(item)
            key = (item.style, item.freed)
            attrs = style_text.get(key)
            if attrs is None:
                attrs = style_text[key] = _attr_text(style_attrs(item.style, item.freed))
            tip = f" tooltip={_quote(tooltip)}" if tooltip else ""
            body.append(f"\t{new_id[old]} [label={label} {attrs}{tip}]\n")
            used_styles.add(item.style)
            freed_seen = freed_seen or item.freed

    drawing.item_ids = new_id  # sketch index -> DOT name, for walkthroughs
    drawing.details = _details(sketch, new_id) if len(new_id) <= DETAILS_LIMIT else {}
    write_nodes(drawing, by_cluster.pop(None, []))
    for name, indices in by_cluster.items():
        with drawing.subgraph(name=f"cluster_{name}") as sub:
            sub.attr(**sketch.clusters.get(name, {"label": name}))
            write_nodes(sub, indices)
    if note_id:
        drawing.node(note_id, html_label("graph collapsed", shown.note), **style_attrs("note"))
        used_styles.add("note")
    used_edges = _write_edges(sketch, drawing, new_id, note_id)
    if legend:
        if freed_seen:
            used_styles.add("freed")
        add_legend(drawing, used_styles, used_edges, sketch.legend_rows)
    drawing.stats.update(
        items=len(sketch.items), shown=len(shown.kept), hidden=shown.hidden, note=shown.note
    )
    return drawing


def _details(sketch: Sketch, new_id: dict[int, str]) -> dict[str, dict]:
    """The details panel of each drawn item that has one, by DOT name, taken now: the
    panel shows the objects as they were when drawn, as the labels do."""
    found = {}
    for old, name in new_id.items():
        item = sketch.items[old]
        describe = getattr(item.describe, "__wrapped__", item.describe)  # a step's extra lines
        details = DETAILS.get(describe)
        if details is not None:
            found[name] = details(item)
    return found


def _write_edges(
    sketch: Sketch, drawing: Drawing, new_id: dict[int, str], note_id: str | None
) -> set[str]:
    """Edges between kept items as they are; edges to hidden ones go through the note."""
    seen: set[tuple[str, str, str, int | None]] = set()
    used: set[str] = set()
    body = drawing.body
    edge_text = {kind: _attr_text(attrs) for kind, (attrs, _) in EDGES.items()}
    for tail, head, kind, operand in sketch.edges:
        a, b = new_id.get(tail), new_id.get(head)
        if a is None and b is None:
            continue
        if a is None or b is None:
            a, b, kind, operand = (a or note_id), (b or note_id), "note", None
        if (a, b, kind, operand) in seen:
            continue
        seen.add((a, b, kind, operand))
        text = edge_text[kind]
        if operand is not None:
            text += f" {_attr_text(OPERAND_LABEL)} label={operand}"
            used.add("operand")
        body.append(f"\t{a} -> {b} [{text}]\n")
        used.add(kind)
    return used


OPERAND_LABEL = dict(fontsize="9", fontcolor="#616161")


def operand_position(op: Any, position: int, count: int) -> int | None:
    """The label of input ``position`` of ``op`` (an OpDef) among ``count`` inputs:
    its position where the order of operands matters, else None."""
    if op is None or count < 2 or getattr(op, "commutative", False):
        return None
    return position


def _quote(text: str) -> str:
    """A DOT double-quoted string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _attr_text(attrs: dict[str, str]) -> str:
    """``key=value`` pairs in DOT syntax, values quoted unless they are plain words."""
    return " ".join(f"{k}={v if _PLAIN(v) else _quote(v)}" for k, v in sorted(attrs.items()))


_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z_0-9]*$|^-?\d+(\.\d+)?$").match


#: legend order: how a reader meets them, from the inputs to the gradients
_LEGEND_ORDER = (
    "leaf",
    "nograd",
    "tensor",
    "output",
    "op",
    "grad_fn",
    "accumulate",
    "saved",
    "gradient",
    "active",
    "pending",
    "freed",
    "note",
)


def add_legend(
    drawing: graphviz.Digraph,
    styles: Iterable[str],
    edges: Iterable[str] = (),
    rows_after: Iterable[tuple[str, str, str]] = (),
) -> None:
    """A ``cluster_legend`` with one sample row per style and edge kind in the drawing.

    It is a single HTML-table node, so it never pulls on the layout of the graph, and
    its samples do not count as graph nodes (their class is ``legend``).  ``rows_after``
    adds ``(sample, colour, text)`` rows for label conventions, after the edges.
    """
    edges_used = set(edges)
    styles = [s for s in _LEGEND_ORDER if s in set(styles)]
    edges = [e for e in EDGES if e in edges_used]
    rows_after = list(rows_after)
    if not styles and not edges and not rows_after:
        return
    rows = []
    for style in styles:
        attrs, text = STYLES[style]
        fill = attrs.get("fillcolor", "#ffffff")
        border = (
            "dotted" if style == "freed" else ("dashed" if "dashed" in attrs["style"] else "solid")
        )
        rows.append(
            f'<tr><td width="26" bgcolor="{fill}" color="{attrs.get("color", "#000000")}" '
            f'border="1" style="{border}"> </td><td align="left">{html.escape(text)}</td></tr>'
        )
    for kind in edges:
        attrs, text = EDGES[kind]
        arrow = (
            "┄┄┄"
            if attrs.get("arrowhead") == "none"
            else "┄┄▶"
            if attrs.get("style") in ("dashed", "dotted")
            else "──▶"
        )
        rows.append(
            f'<tr><td><font color="{attrs["color"]}">{arrow}</font></td>'
            f'<td align="left">{html.escape(text)}</td></tr>'
        )
    if "operand" in edges_used:
        rows.append(
            f'<tr><td><font color="{OPERAND_LABEL["fontcolor"]}">0 1</font></td>'
            '<td align="left">operand position (in a - b, a is 0)</td></tr>'
        )
    for sample, color, text in rows_after:
        rows.append(
            f'<tr><td><font color="{color}">{html.escape(sample)}</font></td>'
            f'<td align="left">{html.escape(text)}</td></tr>'
        )
    table = (
        '<<table border="0" cellborder="0" cellspacing="3" cellpadding="2">'
        + "".join(rows)
        + "</table>>"
    )
    with drawing.subgraph(name="cluster_legend") as sub:
        sub.attr(label="legend", style="rounded", color="#bdbdbd", fontsize="10", fontname=FONT)
        sub.node("legend", table, shape="plaintext", fontsize="9", **{"class": "legend"})
