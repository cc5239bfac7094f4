"""``ns.trace``: turn a function written for dynamic mode into a static graph.

Tracing calls the function once with placeholder nodes in place of its arguments.
Every op it performs (``x * w``, ``ng.exp(x)``, ...) dispatches through the op table
on the argument's type, so with static nodes it *records* instead of computing.
What tracing cannot see is Python control flow on data: ``if x.sum() > 0:`` needs a
value that does not exist yet, so it raises an error naming that line.

>>> import numpy as np, naivegraph.static as ns
>>> def f(x, y):
...     return (x * y).sum(), x.exp()
>>> traced = ns.trace(f, np.ones(3), np.full(3, 2.0))
>>> [p.name for p in traced.inputs]
['x', 'y']
>>> total, e = traced(np.array([1.0, 2.0, 3.0]), np.ones(3))
>>> float(total)
6.0
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from .executor import CompiledFunction
from .graph import Graph, tracing
from .nodes import Constant, Node, _to_array, placeholder


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


class Traced:
    """A traced function: its ``graph``, placeholder ``inputs`` and ``outputs``; call it
    like ``fn``."""

    def __init__(
        self, fn: Callable, graph: Graph, inputs: list[Node], outputs: list[Node], single: bool
    ) -> None:
        self.fn, self.graph, self.inputs, self.outputs = fn, graph, inputs, outputs
        self._single = single
        self._compiled: CompiledFunction | None = None

    def __call__(self, *arrays: Any) -> Any:
        """Run the traced graph (compiled and optimised on first use) on new inputs."""
        if self._compiled is None:
            self._compiled = self.graph.compile(self.inputs, self.outputs, optimize=True)
        results = self._compiled(*arrays)
        return results[0] if self._single else tuple(results)

    def __repr__(self) -> str:
        return f"<Traced {getattr(self.fn, '__name__', 'function')}: {len(self.graph.nodes)} nodes>"


def trace(fn: Callable, *example_inputs: Any) -> Traced:
    """Build a static graph by running ``fn`` once on placeholders shaped like the examples.

    Examples may be numpy arrays, numbers or dynamic tensors; they fix the
    placeholders' shapes and dtypes.  ``fn`` may return one value or a tuple/list.
    """
    graph = Graph(name=f"trace_{getattr(fn, '__name__', 'function')}")
    names = _parameter_names(fn, len(example_inputs))
    with graph:
        inputs: list[Node] = []
        for name, example in zip(names, example_inputs):
            array = _to_array(example)
            array = np.asarray(array)
            inputs.append(placeholder(name, shape=array.shape, dtype=array.dtype))
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
    return Traced(fn, graph, inputs, outputs, single)
