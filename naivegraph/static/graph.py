"""The static ``Graph``: a container of nodes that is built first and run later.

A graph records nodes in creation order.  Because a node can only use nodes that
already exist, creation order is always a valid topological order: the executor,
the gradient sweep and every optimisation pass rely on that and never sort.

>>> import numpy as np
>>> import naivegraph.static as ns
>>> g = ns.Graph()
>>> with g:
...     a = ns.Variable(1.0, name="a")
...     b = ns.Variable(2.0, name="b")
...     c = a + b
>>> c.value is None          # building computes nothing
True
>>> g.forward()
>>> float(c.value)
3.0
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import linecache
import os
import sys
import threading
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Sequence

if TYPE_CHECKING:  # pragma: no cover  (annotations only: nothing is imported at run time)
    from .executor import CompiledFunction
    from .nodes import Node

_graph_ids = itertools.count(1)


@dataclass
class RunState:
    """What the last ``forward`` of a graph leaves for the ``backward`` that follows it.

    ``shapes``: node -> the shape its value had, for each value the run freed (a
    mapping: the fast layer keeps it compactly); ``variables``: Variable -> the array it
    held during that run (``assign`` replaces a Variable's array: a later backward still
    uses the values of the run it follows, as TensorFlow 1 does).
    """

    shapes: Mapping = field(default_factory=dict)
    variables: dict = field(default_factory=dict)


class Graph:
    """A static computational graph: build nodes inside ``with graph:``, then run it.

    ``forward``, ``backward`` and ``compile`` accept ``check_numerics=True``: the run
    stops at the first value or gradient holding NaN or inf and the
    ``FloatingPointError`` names the node, its op and the line of your code that
    built it (each node records it in ``built_at``).  Graphs must be exited in the
    reverse order they were entered; anything else raises and changes nothing.

    Attributes:
        nodes: every node, in creation (= topological) order.
        lineage: for a graph made by an optimisation pass, where it came from
            (``source`` graph, ``mapping`` old node -> new node, ``changes``).
    """

    def __init__(self, name: str | None = None) -> None:
        self.id = next(_graph_ids)
        self.name = name or f"graph_{self.id}"
        self.nodes: list[Node] = []
        # Names: a node named automatically ("neg_3") keeps only its number, and is
        # found by name in ``_numbered``; every other name is a key of ``_by_name``.
        self._by_name: dict[str, Node] = {}  # nodes named by the user, a pass, a file
        self._numbered: dict[str, list[Node]] = {}  # "neg" -> nodes neg_<k>, k rising
        self._reserved: set[str] = set()  # names a pass will reuse when it copies nodes
        self._counters: dict[str, int] = {}
        self._gradient_depth = 0  # > 0 while ns.gradients is adding nodes
        self.lineage: Any = None  # a Lineage (passes.py) for a graph made by a pass
        self.last_run = RunState()
        # A branch of ns.cond or the body of ns.while_loop is a graph of its own inside
        # ``outer``: a node of an enclosing graph used there arrives as a placeholder.
        self.outer: Graph | None = None
        self.captures: dict[Node, Node] = {}  # enclosing graph's node -> its placeholder here
        self.version = 0  # changes whenever nodes are added or removed
        self.run_plans: dict = {}  # g.run's plans, per (fetches, fed placeholders)

    # ------------------------------------------------------------------ context
    def __enter__(self) -> "Graph":
        _stack().append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        """Leave the graph; refused (stack unchanged) unless it is the innermost one."""
        stack = _stack()
        if not stack or stack[-1] is not self:
            raise RuntimeError(_exit_order_message(self, stack))
        stack.pop()

    def as_default(self) -> "Graph":
        """Same as using the graph itself as a context manager (TensorFlow 1 spelling)."""
        return self

    # ------------------------------------------------------------------ registry
    def _node_named(self, name: str) -> "Node | None":
        """The node called ``name``, or None."""
        node = self._by_name.get(name)
        if node is not None:
            return node
        base, _, number = name.rpartition("_")
        numbered = self._numbered.get(base)
        if not numbered or not (number.isascii() and number.isdigit()) or number[0] == "0":
            return None
        count = int(number)
        k = bisect.bisect_left(numbered, count, key=_number_of)
        return numbered[k] if k < len(numbered) and numbered[k]._name == count else None

    def _taken(self, name: str) -> bool:
        return name in self._reserved or self._node_named(name) is not None

    def _next_count(self, base: str) -> int:
        """The next number of ``base``: ``<base>_<number>`` is no node's name yet.  The
        numbers of automatic names only rise, so only a name given can be in the way."""
        count = self._counters.get(base, 0) + 1
        given, reserved = self._by_name, self._reserved
        if given or reserved:
            while f"{base}_{count}" in given or f"{base}_{count}" in reserved:
                count += 1
        self._counters[base] = count
        return count

    def _unique_name(self, base: str) -> str:
        return f"{base}_{self._next_count(base)}"

    def _register(self, node: "Node", name: str | None, base: str) -> None:
        """Give ``node`` its unique name and append it.  Called only once the node is valid."""
        if name is None and base == node.name_base:  # named on demand: the number only
            count = self._next_count(base)
            node.name = count
            numbered = self._numbered.get(base)
            if numbered is None:
                numbered = self._numbered[base] = []
            numbered.append(node)
        else:
            if name is None:
                name = self._unique_name(base)
            elif self._node_named(name) is not None:
                if self is getattr(_local, "default", None):
                    raise ValueError(
                        f"a node named {name!r} already exists in {self.name}: it was built "
                        f"outside any `with graph:` block, by this code run earlier (a cell "
                        f"run twice) or by other code; build the nodes inside `with` your "
                        f"graph, or start the default graph afresh with "
                        f"ns.reset_default_graph()"
                    )
                raise ValueError(
                    f"a node named {name!r} already exists in {self.name}; names identify "
                    f"placeholders when feeding, so pick another name (or omit it for an "
                    f"automatic one)"
                )
            node.name = name
            self._by_name[name] = node
        node.graph = self
        node.built_at = build_site()
        if self._gradient_depth:
            node.is_gradient = True
        self.nodes.append(node)
        self.version += 1

    def _forget_name(self, node: "Node") -> None:
        """Remove ``node``'s name from the registry (it is renamed or removed)."""
        count = node._name
        if type(count) is int:
            numbered = self._numbered[node.name_base]
            del numbered[bisect.bisect_left(numbered, count, key=_number_of)]
        else:
            del self._by_name[node.name]

    def rename(self, node: "Node", name: str) -> None:
        """Give ``node`` of this graph the name ``name``; refused (nothing changes) if taken."""
        if self._node_named(name) is not None:
            raise ValueError(f"a node named {name!r} already exists in {self.name}; pick another")
        self._forget_name(node)
        node.name = name
        node.gradient_of = None  # a name given wins over grad_<x> (see Node.gradient_of)
        self._by_name[name] = node

    def _rollback(self, size: int) -> None:
        """Remove nodes created after ``len(self.nodes) == size`` (an aborted composite build)."""
        for node in reversed(self.nodes[size:]):
            self._forget_name(node)
        del self.nodes[size:]
        self.version += 1

    def __getitem__(self, name: str) -> "Node":
        """The node called ``name``."""
        node = self._node_named(name) if isinstance(name, str) else None
        if node is None:
            raise KeyError(f"{self.name} has no node named {name!r}")
        return node

    def __contains__(self, node: object) -> bool:
        return getattr(node, "graph", None) is self

    def __len__(self) -> int:
        return len(self.nodes)

    def __repr__(self) -> str:
        return f"<Graph {self.name}: {len(self.nodes)} nodes>"

    def __str__(self) -> str:
        """The graph as text: one line per node in SSA form, like a jaxpr (see
        :mod:`naivegraph.static.listing`); ``return`` names the nodes nothing uses.

        >>> import numpy as np, naivegraph.static as ns
        >>> with ns.Graph("affine") as g:
        ...     x = ns.placeholder("x", shape=(None, 2), dtype=np.float64)
        ...     w = ns.Variable(np.ones((2, 3)), name="w")
        ...     y = ns.relu(x @ w)
        >>> print(g)
        graph affine:
          %x = placeholder          : (?, 2) float64
          %w = variable             : (2, 3) float64
          %matmul_1 = matmul %x %w  : (?, 3) float64
          %relu_1 = relu %matmul_1  : (?, 3) float64
          return %relu_1
        """
        from . import session  # runs graphs (it imports this module: imported here)

        return session.graph_listing(self)

    @property
    def placeholders(self) -> list["Node"]:
        return [n for n in self.nodes if n.kind == "placeholder"]

    @property
    def variables(self) -> list["Node"]:
        return [n for n in self.nodes if n.kind == "variable"]

    def consumers(self) -> dict["Node", list["Node"]]:
        """node -> the nodes that use it as an input (one entry per use)."""
        users: dict[Node, list[Node]] = {n: [] for n in self.nodes}
        for node in self.nodes:
            for inp in node.inputs:
                users[inp].append(node)
        return users

    def sinks(self) -> list["Node"]:
        """Nodes nothing else uses: the natural outputs of the graph."""
        used = {inp for node in self.nodes for inp in node.inputs}
        return [n for n in self.nodes if n not in used]

    def resolve(self, node_or_name: "Node | str") -> "Node":
        """A node of this graph given itself or its name; a clear error otherwise."""
        if isinstance(node_or_name, str):
            return self[node_or_name]
        if not _is_node(node_or_name):
            raise TypeError(
                f"expected a node of {self.name} or a node name, got {type(node_or_name).__name__}"
            )
        owner = node_or_name.graph
        if owner is not self:
            raise ValueError(_foreign_node_message(node_or_name, owner, self))
        return node_or_name

    # ------------------------------------------------------------------ running
    def forward(
        self,
        feeds: Mapping | None = None,
        fetches: Sequence | None = None,
        *,
        free_intermediates: bool | None = None,
        check_numerics: bool = False,
        **named_feeds: Any,
    ) -> list | None:
        """Run the graph: fill ``.value`` of the nodes that are computed and kept.

        ``feeds`` maps placeholders (nodes or names) to arrays; keyword arguments feed
        placeholders by name.  Without ``fetches`` every node is computed and, for
        inspection and drawing, every value is kept.  With ``fetches`` only what they
        need runs, and each intermediate is freed after its last use (memory planning)
        unless it is fetched or a later ``backward`` needs it; the fetched values are
        returned.  ``free_intermediates`` overrides that choice either way.

        With ``check_numerics=True`` the run stops at the first value (fed, stored or
        computed) that holds NaN or inf and raises ``FloatingPointError`` naming the
        node, its op and the line of your code that built it; the node values of the
        previous run are left as they were.

        >>> import numpy as np, naivegraph.static as ns
        >>> with ns.Graph() as g:
        ...     x = ns.placeholder("x", shape=(2,))
        ...     y = (x * 3.0).sum()
        >>> [float(v) for v in g.forward(x=np.array([1.0, 2.0]), fetches=[y])]
        [9.0]
        """
        from . import session

        return session.forward(
            self, feeds, named_feeds, fetches, free_intermediates, check_numerics
        )

    def backward(self, loss: "Node", grad: Any = None, check_numerics: bool = False) -> None:
        """Numeric reverse sweep after ``forward``: fill ``.grad`` of Variables and retained nodes.

        Each call replaces the previous gradients (a static graph has no accumulation,
        so there is nothing to zero between steps).  Gradients use the values of the
        run this backward follows: a Variable assigned since then is read as it was
        during that run.

        With ``check_numerics=True`` the sweep stops at the first gradient holding NaN
        or inf and raises ``FloatingPointError`` naming the node, the op whose backward
        produced it and the line of your code that built that op; every ``.grad`` is
        left as it was.

        >>> import numpy as np, naivegraph.static as ns
        >>> with ns.Graph() as g:
        ...     w = ns.Variable(0.0, name="w")
        ...     loss = ns.sqrt(w)
        >>> g.forward()
        >>> g.backward(loss, check_numerics=True)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        naivegraph.static.executor.NumericsError: check_numerics: the gradient of node 'w' ...
        """
        from . import session

        session.backward(self, self.resolve(loss), grad, check_numerics)

    def save(self, path: Any) -> None:
        """Write this graph to ``path``: JSON for the nodes, npz for the arrays, no pickle.

        ``ns.load(path)`` gives an equal graph (same names, placeholders with their
        ``None`` sizes, Variables' current values, gradient nodes, cond and loop
        bodies); see :mod:`naivegraph.static.saving`.
        """
        from . import session

        session.save(self, path)

    def run(self, fetches: Any, feed_dict: Mapping | None = None, **named_feeds: Any) -> Any:
        """The values of ``fetches``, like TensorFlow 1's ``Session.run``.

        ``fetches`` is a node (or its name), or a list/tuple of them: the result has the
        same structure.  ``feed_dict`` maps placeholders (nodes or names) to arrays;
        keyword arguments feed by name.  Only what the fetches need is computed.
        Fetched updates (assign nodes, an optimiser's step) are stored once the run
        succeeded: every read of a Variable in the run sees its value from before the
        run.  Node ``.value`` attributes are left alone (``forward`` sets them).

        >>> import numpy as np, naivegraph.static as ns
        >>> with ns.Graph() as g:
        ...     x = ns.placeholder("x", shape=(None,))
        ...     w = ns.Variable(1.0, name="w")
        ...     loss = ((x * w - 2.0) ** 2).mean()
        ...     update = w.assign(w + 0.5)
        >>> [float(v) for v in g.run([loss, update], {x: np.array([1.0, 3.0])})]
        [1.0, 1.5]
        >>> float(w.value)
        1.5
        """
        from . import session

        return session.run(self, fetches, feed_dict, named_feeds)

    def compile(
        self,
        inputs: Sequence,
        outputs: Sequence,
        optimize: bool = True,
        check_numerics: bool = False,
        updates: Any = (),
    ) -> "CompiledFunction":
        """A reusable callable ``f(*arrays) -> [output arrays]`` for the part ``outputs`` need.

        ``updates`` (Theano's): ``[(variable, new_value), ...]`` or a dict; every call
        stores each new value in its Variable once the call succeeded (all reads in
        the call see the values from before it).

        The execution plan (order, slots, when to free each value) is computed once
        here; every call is then a tight loop over numpy forwards.  With ``optimize``
        the plan runs on the graph returned by :func:`naivegraph.static.optimize`.
        ``check_numerics`` makes every call check each value as ``forward`` does
        (in an optimised graph a fused chain is checked as one node).

        >>> import numpy as np, naivegraph.static as ns
        >>> with ns.Graph() as g:
        ...     x = ns.placeholder("x", shape=())
        ...     y = x ** 2
        ...     dy, = ns.gradients(y, [x])
        >>> f = g.compile([x], [y, dy])
        >>> [float(v) for v in f(np.array(3.0))]
        [9.0, 6.0]
        """
        from . import session

        return session.compile(self, inputs, outputs, optimize, check_numerics, updates)


def _number_of(node: "Node") -> Any:
    """The number of a node named automatically (``3`` of ``neg_3``)."""
    return node._name


def _is_node(value: object) -> bool:
    return hasattr(value, "kind") and hasattr(value, "inputs") and hasattr(value, "graph")


def _foreign_node_message(node: "Node", owner: Any, graph: "Graph") -> str:
    """Why a node of ``owner`` cannot be used in ``graph``, and what to use instead: the
    graph's node of that name, or for a placeholder the graph's own placeholders."""
    name = node.name
    owner_name = getattr(owner, "name", None)
    if owner_name == graph.name:  # ns.optimize's result keeps its source's name
        where = f"another graph also named {graph.name} (ns.optimize returns a new graph)"
    else:
        where = f"{owner_name}, not to {graph.name}"
    own = [p.name for p in graph.nodes if p.kind == "placeholder"]
    if graph._node_named(name) is None and node.kind == "placeholder" and own:
        listed = ", ".join(repr(n) for n in own)
        return (
            f"node {name!r} belongs to {where}: nodes of two graphs cannot be mixed, and "
            f"{graph.name} has no node named {name!r}; {graph.name}'s "
            f"{'placeholders are' if len(own) > 1 else 'placeholder is'} {listed}: use "
            f"{graph.name}'s own placeholder, "
            f"{graph.name}[{own[0]!r}] or just the name {own[0]!r} (a name such as x may "
            "still hold a node an earlier cell built in another graph)"
        )
    if graph._node_named(name) is None:  # nothing of that name to point to
        return (
            f"node {name!r} belongs to {where}: nodes of two graphs cannot be mixed, and "
            f"{graph.name} has no node named {name!r}; build the node inside the `with` "
            f"block of {graph.name}, the graph you run"
        )
    return (
        f"node {name!r} belongs to {where}: nodes of two graphs cannot be mixed; use this "
        f"graph's own node, {graph.name}[{name!r}] or just the name {name!r}"
    )


# ---------------------------------------------------------------------- build sites
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_inside_package: dict[str, bool] = {}  # code filename -> is it part of naivegraph?


def build_site() -> tuple[str, int] | None:
    """(file, line) of the innermost frame outside naivegraph: the user's line that
    built a node.  One dict lookup per frame, so recording it for every node is cheap."""
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        inside = _inside_package.get(filename)
        if inside is None:
            inside = _inside_package[filename] = os.path.abspath(filename).startswith(_PACKAGE_DIR)
        if not inside:
            return filename, frame.f_lineno
        frame = frame.f_back
    return None


def describe_site(site: tuple[str, int] | None) -> str:
    """``file:line: source text`` of a build site (or a note that it is unknown)."""
    if site is None:
        return "built inside naivegraph"
    text = linecache.getline(site[0], site[1]).strip()
    return f"built at {site[0]}:{site[1]}" + (f": {text}" if text else "")


# ---------------------------------------------------------------------- default graph
_local = threading.local()


def _stack() -> list[Graph]:
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


def _exit_order_message(graph: Graph, stack: list[Graph]) -> str:
    if graph not in stack:
        return (
            f"{graph.name} is not open (it was never entered, or was already exited), so it "
            f"cannot be exited; use `with graph:` to enter and exit it in pairs"
        )
    inner = ", ".join(g.name for g in stack[stack.index(graph) + 1 :])
    return (
        f"{graph.name} was exited while {inner} (entered after it) is still open; graphs "
        f"must be exited in the reverse order they were entered, as nested `with` "
        f"blocks do. The default-graph stack is unchanged"
    )


def current_trace() -> str | None:
    """A description of the function being traced on this thread, if any."""
    return getattr(_local, "tracing", None)


@contextlib.contextmanager
def tracing(description: str) -> Iterator[None]:
    """Mark this thread as tracing ``description`` (errors then say so)."""
    previous = current_trace()
    _local.tracing = description
    try:
        yield
    finally:
        _local.tracing = previous


def get_default_graph() -> Graph:
    """The graph new nodes go to: the innermost ``with graph:``, else this thread's default."""
    stack = _stack()
    if stack:
        return stack[-1]
    if getattr(_local, "default", None) is None:
        _local.default = Graph(name="default_graph")
    return _local.default


def reset_default_graph() -> Graph:
    """Replace this thread's default graph with an empty one and return it."""
    if _stack():
        raise RuntimeError(
            "reset_default_graph() was called inside a `with graph:` block; leave the "
            "block first (nodes built there would otherwise point at a discarded graph)"
        )
    _local.default = Graph(name="default_graph")
    return _local.default


def graph_of(nodes: Iterable[Any]) -> Graph | None:
    """The single graph that the nodes among ``nodes`` belong to (None if there are none)."""
    found = None
    for node in nodes:
        graph = getattr(node, "graph", None)
        if graph is None or not hasattr(node, "inputs"):
            continue
        if found is None:
            found = node, graph
        elif graph is not found[1]:
            raise ValueError(
                f"nodes of two graphs cannot be mixed: {found[0].name!r} belongs to "
                f"{found[1].name} but {node.name!r} belongs to {graph.name}; build both "
                f"inside the same `with graph:` block"
            )
    return None if found is None else found[1]
