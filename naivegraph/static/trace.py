"""``ns.trace``: turn a function written for dynamic mode into static graphs, like a jit.

Tracing calls the function once with placeholder nodes in place of its arguments.
Every op it performs (``x * w``, ``ng.exp(x)``, ...) dispatches through the op table
on the argument's type, so with static nodes it *records* instead of computing.
What tracing cannot see is Python control flow on data: ``if x.sum() > 0:`` needs a
value that does not exist yet, so it raises an error naming that line.

A graph has fixed shapes and dtypes, so the traced object keeps one graph per input
signature (the shape and dtype of each argument): a call with a signature it has not
seen traces the function again into a new graph and keeps it; a known signature
reuses its graph, compiled once.

>>> import numpy as np, naivegraph.static as ns
>>> def f(x, y):
...     return (x * y).sum(), x.exp()
>>> traced = ns.trace(f, np.ones(3), np.full(3, 2.0))
>>> [p.name for p in traced.inputs]
['x', 'y']
>>> total, e = traced(np.array([1.0, 2.0, 3.0]), np.ones(3))
>>> float(total)
6.0
>>> total, e = traced(np.ones(5), np.ones(5))  # a new shape: a second graph
>>> float(total), traced.cache_size
(5.0, 2)
"""

from __future__ import annotations

import inspect
from types import MappingProxyType
from typing import Any, Callable, Mapping

import numpy as np

from ..ops.core import with_default_float
from .executor import CompiledFunction
from .graph import Graph, tracing
from .nodes import Constant, Node, _to_array, placeholder

# One (shape, dtype) per argument: what a graph is specialised to.
Signature = tuple[tuple[tuple[int, ...], np.dtype], ...]


def _parameter_names(fn: Callable, count: int) -> list[str]:
    try:
        params = [
            p.name
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    names = params[:count]
    return names + [f"input_{i}" for i in range(len(names), count)]


def _as_arrays(values: tuple[Any, ...]) -> list[np.ndarray]:
    """Arrays from arrays, tensors or numbers (a Python number: a 0-d array of the
    default float dtype or int64, as ``ng.tensor`` makes it)."""
    return [v if type(v) is np.ndarray else _python_to_array(v) for v in values]


def _python_to_array(value: Any) -> np.ndarray:
    array = np.asarray(_to_array(value))
    return with_default_float(array) if type(value) in (float, complex, list, tuple) else array


def _signature(arrays: list[np.ndarray]) -> Signature:
    return tuple((a.shape, a.dtype) for a in arrays)


def _trace_graph(
    fn: Callable, arrays: list[np.ndarray], graph_name: str
) -> tuple[Graph, list[Node], list[Node], bool]:
    """Run ``fn`` once on placeholders shaped like ``arrays``: (graph, inputs, outputs, single)."""
    graph = Graph(name=graph_name)
    names = _parameter_names(fn, len(arrays))
    with graph:
        inputs: list[Node] = [
            placeholder(name, shape=array.shape, dtype=array.dtype)
            for name, array in zip(names, arrays)
        ]
        with tracing(f"{getattr(fn, '__qualname__', fn)!s}"):
            result = fn(*inputs)
        single = not isinstance(result, (tuple, list))
        results = [result] if single else list(result)
        outputs = []
        for r in results:
            if isinstance(r, Node):
                outputs.append(r)
            else:  # a value that does not depend on the inputs
                c = Constant(_to_array(r))
                graph._register(c, None, "const")
                outputs.append(c)
    return graph, inputs, outputs, single


class _Entry:
    """One cached specialisation: a graph, its placeholders and outputs, compiled lazily."""

    __slots__ = ("graph", "inputs", "outputs", "single", "compiled")

    def __init__(self, graph: Graph, inputs: list[Node], outputs: list[Node], single: bool):
        self.graph, self.inputs, self.outputs, self.single = graph, inputs, outputs, single
        self.compiled: CompiledFunction | None = None

    def run(self, arrays: list[np.ndarray]) -> Any:
        if self.compiled is None:
            self.compiled = self.graph.compile(self.inputs, self.outputs, optimize=True)
        results = self.compiled(*arrays)
        return results[0] if self.single else tuple(results)


class Traced:
    """A traced function; call it like ``fn``.

    ``graph``, ``inputs`` and ``outputs`` are the graph traced for the example inputs
    and its placeholders and outputs.  ``graphs`` maps every signature traced so far
    (a tuple of ``(shape, dtype)`` per argument) to its graph, in the order traced;
    ``cache_size`` is how many there are.
    """

    def __init__(
        self, fn: Callable, graph: Graph, inputs: list[Node], outputs: list[Node], single: bool
    ) -> None:
        self.fn, self.graph, self.inputs, self.outputs = fn, graph, inputs, outputs
        self._name = getattr(fn, "__name__", "function")
        self._arity = len(inputs)
        signature = tuple((tuple(p.shape), np.dtype(p.dtype)) for p in inputs)
        self._entries: dict[Signature, _Entry] = {signature: _Entry(graph, inputs, outputs, single)}
        self._graphs: dict[Signature, Graph] = {signature: graph}

    @property
    def graphs(self) -> Mapping[Signature, Graph]:
        """Signature -> graph for every signature traced so far, in the order traced."""
        return MappingProxyType(self._graphs)

    @property
    def cache_size(self) -> int:
        """How many graphs (one per input signature) this traced function holds."""
        return len(self._entries)

    def __call__(self, *values: Any) -> Any:
        """Run the graph for these inputs' shapes and dtypes, tracing one if it is new."""
        if len(values) != self._arity:
            names = ", ".join(p.name for p in self.inputs)
            raise TypeError(
                f"traced {self._name} takes {self._arity} argument(s) ({names}) "
                f"but got {len(values)}"
            )
        arrays = _as_arrays(values)
        signature = _signature(arrays)
        entry = self._entries.get(signature)
        if entry is None:
            graph_name = f"trace_{self._name}_{len(self._entries) + 1}"
            entry = _Entry(*_trace_graph(self.fn, arrays, graph_name))
            self._entries[signature] = entry
            self._graphs[signature] = entry.graph
        return entry.run(arrays)

    def __repr__(self) -> str:
        count = self.cache_size
        nodes = len(self.graph.nodes)
        if count == 1:
            return f"<Traced {self._name}: 1 graph, {nodes} nodes>"
        return f"<Traced {self._name}: {count} graphs, {nodes} nodes in the first>"


def trace(fn: Callable, *example_inputs: Any) -> Traced:
    """Build a static graph by running ``fn`` once on placeholders shaped like the examples.

    Examples may be numpy arrays, numbers or dynamic tensors; they fix the first
    graph's shapes and dtypes.  Calling the result with other shapes or dtypes traces
    ``fn`` again, once per new signature.  ``fn`` may return one value or a tuple/list.
    """
    name = getattr(fn, "__name__", "function")
    return Traced(fn, *_trace_graph(fn, _as_arrays(example_inputs), f"trace_{name}"))
