"""Turn DOT source into SVG/PNG/PDF bytes without requiring a system install.

The chain, tried in order:

1. ``dot`` on PATH (the Graphviz program), run as a subprocess;
2. ``pygraphviz``, whose wheel bundles Graphviz and lays the graph out in-process.

If neither can run, :class:`GraphvizUnavailable` says how to get one.  The plain
``graphviz`` Python package is only used to *build* DOT: it can only render by calling
``dot``, and its Jupyter display silently shows text when ``dot`` is missing.

>>> data = pipe("digraph { a -> b }", "svg")
>>> data[:5] in (b"<?xml", b"<svg ")
True
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import warnings
from collections import defaultdict, deque
from typing import Callable, Iterator, NamedTuple

#: Output formats every engine of the chain can write (a deliberate, tested subset).
FORMATS = ("svg", "png", "pdf", "jpg", "jpeg", "gif", "ps", "eps", "json", "dot", "plain")

#: Names accepted by ``backend=``; ``None`` / ``"auto"`` means "first that works".
BACKENDS = ("dot", "pygraphviz")

INSTALL_HINT = (
    "Install one of them:\n"
    "  pip install pygraphviz      (its wheel bundles Graphviz: nothing else to install)\n"
    "  apt-get install graphviz    (or brew install graphviz; puts `dot` on PATH)\n"
    "The DOT text is still available as `.source`."
)


class GraphvizUnavailable(RuntimeError):
    """Neither the ``dot`` program nor ``pygraphviz`` could render a drawing."""


class RenderError(RuntimeError):
    """An engine was found but failed on this DOT source (a bug in the drawing)."""


class LayoutTooLarge(RenderError):
    """The drawing is so big that Graphviz would run for minutes: refused before layout."""


#: Layout cost (see :func:`layout_cost`) above which rendering warns, and above which it
#: refuses unless ``force=True``.  Measured with pygraphviz's ``dot`` on a busy 2-core
#: machine (SVG, legend off), drawings of dynamic graphs with ``max_nodes=None``:
#:
#: ==========================================  =====  =====  =======  ======  =======
#: graph                                       nodes  edges  skipped  cost    seconds
#: ==========================================  =====  =====  =======  ======  =======
#: chain of 500 ops                            1,503  1,502  0        3,005   0.3
#: chain of 1,000 ops                          3,003  3,002  0        6,005   0.8
#: chain of 3,300 ops                          9,903  9,902  0        19,805  21
#: 30 steps, the input re-added every 2nd      123    137    690      3,710   0.3
#: 60 steps, the input re-added every 2nd      243    272    2,730    14,165  11
#: ==========================================  =====  =====  =======  ======  =======
#:
#: Time grows faster than linearly, and an edge skipping many ranks (an input reused far
#: down the graph) costs more than a node, hence :data:`SKIP_WEIGHT`.  A chain of 20,000
#: ops (cost about 120,000) is refused at once instead of running for minutes.
WARN_COST = 5_000
REFUSE_COST = 15_000
SKIP_WEIGHT = 5

# One statement per line, as graphviz.Digraph writes DOT.
_EDGE = re.compile(r'^\s*("[^"]*"|[\w.]+)\s*->\s*("[^"]*"|[\w.]+)', re.M)
_NODE = re.compile(r'^\s*("[^"]*"|[\w.]+)\s*(?:\[|;?$)', re.M)
_KEYWORDS = {"node", "edge", "graph", "subgraph", "digraph", "strict", "}", "{"}


class LayoutCost(NamedTuple):
    """What laying out a DOT source costs: ``nodes + edges + SKIP_WEIGHT * virtual``.

    ``virtual`` counts the ranks edges skip: Graphviz routes a long edge through one
    extra point per skipped rank.
    """

    nodes: int
    edges: int
    virtual: int

    @property
    def total(self) -> int:
        return self.nodes + self.edges + SKIP_WEIGHT * self.virtual


def layout_cost(source: str) -> LayoutCost:
    """Estimate the work of laying out ``source`` from its nodes and edges, without Graphviz.

    >>> layout_cost("digraph {\\n a -> b\\n b -> c\\n a -> c\\n}")
    LayoutCost(nodes=3, edges=3, virtual=1)
    """
    edges = _EDGE.findall(source)
    nodes = {n for n in _NODE.findall(source) if n not in _KEYWORDS}
    nodes.update(name for edge in edges for name in edge)
    return LayoutCost(len(nodes), len(edges), _skipped_ranks(edges))


def _skipped_ranks(edges: list[tuple[str, str]]) -> int:
    """Ranks skipped by the edges, each node ranked by its longest path to a sink.

    Ranking from the sinks puts a constant or leaf just above its (first) consumer, as
    Graphviz's own ranking does, so only genuinely long edges count.
    """
    tails, outdegree = defaultdict(list), defaultdict(int)
    for tail, head in edges:
        tails[head].append(tail)
        outdegree[tail] += 1
        outdegree.setdefault(head, 0)
    height = dict.fromkeys(outdegree, 0)
    ready = deque(n for n, d in outdegree.items() if d == 0)
    while ready:  # nodes on a cycle are never ready and keep height 0: an estimate only
        head = ready.popleft()
        for tail in tails[head]:
            height[tail] = max(height[tail], height[head] + 1)
            outdegree[tail] -= 1
            if outdegree[tail] == 0:
                ready.append(tail)
    return sum(max(0, abs(height[t] - height[h]) - 1) for t, h in edges)


def check_layout_cost(source: str, force: bool = False) -> LayoutCost:
    """Refuse (or warn about) a layout that would take Graphviz long, before it starts.

    Above :data:`REFUSE_COST` this raises :class:`LayoutTooLarge` unless ``force`` is
    true; above :data:`WARN_COST` it warns (``UserWarning``).
    """
    if not isinstance(force, bool):
        raise TypeError(f"force must be True or False, not {force!r}")
    cost = layout_cost(source)
    size = (
        f"{cost.nodes:,} nodes and {cost.edges:,} edges (layout cost {cost.total:,}, "
        f"{cost.virtual:,} ranks skipped by long edges)"
    )
    if cost.total > REFUSE_COST and not force:
        raise LayoutTooLarge(
            f"refusing to lay out a drawing of {size}: above {REFUSE_COST:,}, Graphviz takes "
            "from tens of seconds to many minutes.  Draw it collapsed with "
            "ng.render(..., max_nodes=500) (or fewer), or lay it out anyway with "
            ".pipe(..., force=True) or .render(..., force=True)"
        )
    if cost.total > WARN_COST:
        warnings.warn(
            f"laying out a drawing of {size} may take a while (seconds to "
            "minutes); ng.render(..., max_nodes=500) draws it collapsed",
            UserWarning,
            stacklevel=4,
        )
    return cost


def check_format(fmt: str) -> str:
    """Validate an output format early, so no engine reports it confusingly.

    >>> check_format("PNG")
    'png'
    """
    if not isinstance(fmt, str) or fmt.lower() not in FORMATS:
        raise ValueError(f"unsupported output format {fmt!r}; use one of {', '.join(FORMATS)}")
    return fmt.lower()


def dot_program() -> str | None:
    """Path of the Graphviz ``dot`` program on PATH, or None."""
    return shutil.which("dot")


def _pipe_dot(source: str, fmt: str) -> bytes:
    program = dot_program()
    if program is None:
        raise GraphvizUnavailable("the Graphviz `dot` program is not on PATH")
    try:
        done = subprocess.run(
            [program, f"-T{fmt}"], input=source.encode("utf-8"), capture_output=True, timeout=120
        )
    except OSError as error:  # found but not runnable (broken install, wrong arch)
        raise GraphvizUnavailable(f"`{program}` could not run: {error}") from error
    if done.returncode != 0:
        raise RenderError(f"`dot -T{fmt}` failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def _pipe_pygraphviz(source: str, fmt: str) -> bytes:
    try:
        import pygraphviz
    except Exception as error:  # ImportError, or a wheel whose shared library fails to load
        raise GraphvizUnavailable(f"pygraphviz cannot be imported: {error}") from error
    with _captured_stderr() as messages:
        try:
            graph = pygraphviz.AGraph(string=source)
            return graph.draw(format=fmt, prog="dot")
        except Exception as error:
            detail = messages().strip()
            raise RenderError(
                f"pygraphviz failed to render {fmt}: {error}"
                + (f"\nGraphviz said: {detail}" if detail else "")
            ) from error


@contextlib.contextmanager
def _captured_stderr() -> Iterator[Callable[[], str]]:
    """Collect what in-process Graphviz writes to file descriptor 2.

    The wheel's fontconfig complains about the system's newer font configuration on
    every call ("unknown element reset-dirs"): harmless, but noise in a notebook.
    Messages are kept for the error raised when a render really fails.
    """
    try:
        saved = os.dup(2)
    except OSError:  # no usable stderr (some embedded interpreters): nothing to hide
        yield lambda: ""
        return
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield lambda: (sink.seek(0), sink.read().decode(errors="replace"))[1]
        finally:
            os.dup2(saved, 2)
            os.close(saved)


_ENGINES: dict[str, Callable[[str, str], bytes]] = {
    "dot": _pipe_dot,
    "pygraphviz": _pipe_pygraphviz,
}


def available_backends() -> list[str]:
    """The engines of the chain that can run here, in the order they are tried."""
    found = []
    if dot_program() is not None:
        found.append("dot")
    try:
        import pygraphviz  # noqa: F401

        found.append("pygraphviz")
    except Exception:
        pass
    return found


def pipe(source: str, fmt: str = "svg", backend: str | None = None, force: bool = False) -> bytes:
    """Render DOT ``source`` to ``fmt`` bytes with the first engine that works.

    ``backend`` forces one engine ("dot" or "pygraphviz"); a forced engine that is
    missing raises :class:`GraphvizUnavailable` instead of trying the other one.
    A drawing whose :func:`layout_cost` is above :data:`REFUSE_COST` raises
    :class:`LayoutTooLarge` before any engine starts, unless ``force=True``.
    """
    fmt = check_format(fmt)
    if backend in (None, "auto"):
        names = list(BACKENDS)
    elif backend in _ENGINES:
        names = [backend]
    else:
        raise ValueError(f"unknown backend {backend!r}; use one of {', '.join(BACKENDS)} or None")
    check_layout_cost(source, force)
    reasons, failures = [], []
    for name in names:
        try:
            return _ENGINES[name](source, fmt)
        except GraphvizUnavailable as missing:
            reasons.append(str(missing))
        except RenderError as failure:
            # e.g. a system `dot` built without the png plugin: the next engine may work
            failures.append(failure)
    if failures:
        raise failures[0]
    raise GraphvizUnavailable(
        "cannot render the drawing: no Graphviz engine is available ("
        + "; ".join(reasons)
        + ").\n"
        + INSTALL_HINT
    )
