"""Saving and loading static graphs: ``g.save(path)`` and ``ns.load(path)``, without pickle.

A graph file is one ``.npz`` archive: an entry ``graph.json`` describes every node
(kind, name, op and attributes, inputs by position, shapes with ``None`` for sizes
fed at run time, dtypes) and the other entries hold the arrays (Variables' values,
constants, array attributes).  Loading reads it with ``allow_pickle=False`` and
rebuilds each operation through shape inference, so a file can never run code, and
a file whose parts disagree (edited by hand, truncated, from a newer naivegraph) is
refused with an error that names what is wrong.

Branches of ``ns.cond`` and bodies of ``ns.while_loop`` are graphs of their own: they
are saved inside the node that runs them, with the outer nodes they capture.

>>> import os, tempfile, numpy as np, naivegraph.static as ns
>>> with ns.Graph() as g:
...     x = ns.placeholder("x", shape=(None,))
...     w = ns.Variable(3.0, name="w")
...     y = ns.sum(x * w)
>>> path = os.path.join(tempfile.mkdtemp(), "model.ngraph")
>>> g.save(path)
>>> loaded = ns.load(path)
>>> float(loaded.run("sum_1", x=np.array([1.0, 2.0])))
9.0
"""

from __future__ import annotations

import json
import os
import zipfile
from typing import Any

import numpy as np

from ..ops import OPS, OpDef
from . import control_flow
from .graph import Graph
from .nodes import Constant, Node, Operation, Placeholder, Variable, _is_weak_scalar, infer

FORMAT = "naivegraph-graph"
VERSION = 1
_DESCRIPTION = "graph.json"

# Ops a file may name: the op table and the control-flow ops of static mode.
_OPS: dict[str, OpDef] = {
    **OPS,
    **{op.name: op for op in (control_flow.COND, control_flow.WHILE, control_flow.WHILE_GRAD)},
    control_flow.ITEM.name: control_flow.ITEM,
    "item": control_flow.ITEM,  # its name in files saved before it was called "result"
}


class GraphFileError(ValueError):
    """A graph file that cannot be loaded: what is wrong, and where."""


# ============================================================================ saving
def save(graph: Graph, path: str | os.PathLike) -> None:
    """Write ``graph`` to ``path`` (see the module docstring for the format)."""
    arrays: dict[str, np.ndarray] = {}
    description = {"format": FORMAT, "version": VERSION, **_describe_graph(graph, arrays)}
    entries: dict[str, Any] = {_DESCRIPTION: np.array(json.dumps(description)), **arrays}
    with open(path, "wb") as file:  # a file object: numpy adds no ".npz" to the name
        np.savez_compressed(file, **entries)


def _describe_graph(graph: Graph, arrays: dict) -> dict:
    position = {node: i for i, node in enumerate(graph.nodes)}
    nodes = [_describe_node(node, position, arrays) for node in graph.nodes]
    return {"name": graph.name, "nodes": nodes}


def _describe_node(node: Node, position: dict, arrays: dict) -> dict:
    entry: dict[str, Any] = {
        "name": node.name,
        "kind": node.kind,
        "shape": None if node.shape is None else list(node.shape),
        "dtype": None if node.dtype is None else node.dtype.name,
    }
    if isinstance(node, Variable):
        entry["value"] = _store(arrays, node.value)
        entry["trainable"] = node.trainable
    elif isinstance(node, Constant):
        entry["value"] = _encode(node.value, arrays)
    elif isinstance(node, Operation):
        if node.op.name not in _OPS or _OPS[node.op.name] is not node.op:
            raise ValueError(
                f"node {node.name!r} runs {node.op.name!r}, an op made by an optimisation "
                f"pass; save the graph before optimising it (optimise again after loading)"
            )
        entry["op"] = node.op.name
        entry["inputs"] = [position[i] for i in node.inputs]
        entry["attrs"] = {k: _encode(v, arrays, position) for k, v in node.attrs.items()}
        entry["is_gradient"] = node.is_gradient
        if node.gradient_of is not None:
            entry["gradient_of"] = node.gradient_of
    entry["retains_grad"] = node.retains_grad
    return entry


def _store(arrays: dict, value: Any) -> dict:
    key = f"array_{len(arrays)}"
    arrays[key] = np.asarray(value)
    return {"array": key}


def _encode(value: Any, arrays: dict, position: dict | None = None) -> Any:
    """``value`` (an attribute or constant) as JSON, arrays moved to ``arrays``."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)) and _is_weak_scalar(value):
        return value
    if isinstance(value, complex):
        return {"complex": [value.real, value.imag]}
    if isinstance(value, np.generic):
        return {"scalar": value.item(), "dtype": value.dtype.name}
    if isinstance(value, np.ndarray):
        return _store(arrays, value)
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return {"dtype": np.dtype(value).name}
    if isinstance(value, tuple):
        return {"tuple": [_encode(v, arrays, position) for v in value]}
    if isinstance(value, list):
        return {"list": [_encode(v, arrays, position) for v in value]}
    if isinstance(value, slice):
        return {"slice": [_encode(p, arrays) for p in (value.start, value.stop, value.step)]}
    if value is Ellipsis:
        return {"ellipsis": True}
    if isinstance(value, control_flow.Function):
        return {"function": _describe_function(value, arrays, position)}
    if isinstance(value, control_flow.Loop):
        return {
            "loop": {
                "condition": _describe_function(value.condition, arrays, position),
                "body": _describe_function(value.body, arrays, position),
                "count": value.count,
                "limit": value.limit,
            }
        }
    raise TypeError(f"cannot save a value of type {type(value).__name__}: {value!r}")


def _describe_function(function: control_flow.Function, arrays: dict, outer: dict | None) -> dict:
    inner = function.graph
    position = {node: i for i, node in enumerate(inner.nodes)}
    assert outer is not None
    return {
        "graph": _describe_graph(inner, arrays),
        "captures": [[outer[o], position[p]] for o, p in inner.captures.items()],
        "inputs": [None if p is None else position[p] for p in function.inputs],
        "outputs": [position[o] for o in function.outputs],
    }


# ============================================================================ loading
def load(path: str | os.PathLike) -> Graph:
    """Read a graph written by ``Graph.save``; refuse a file that cannot be one.

    Raises :class:`GraphFileError` (a ValueError) naming what is wrong: not a graph
    file, a newer format version, a missing entry, an unknown op, or parts that
    disagree (an array of another shape than its node says).
    """
    try:
        archive = np.load(path, allow_pickle=False)
    except (zipfile.BadZipFile, ValueError, EOFError) as error:  # EOFError: an empty file
        raise GraphFileError(  # (numpy would offer to unpickle: no)
            f"{path} is not a naivegraph graph file (not an npz archive of arrays)"
        ) from error
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise GraphFileError(f"{path} is not a naivegraph graph file (a single .npy array)")
    with archive:
        arrays = {key: _entry(archive, key, path) for key in archive.files}
    if _DESCRIPTION not in arrays:
        raise GraphFileError(f"{path} is not a naivegraph graph file: it has no {_DESCRIPTION}")
    try:
        description = json.loads(str(arrays.pop(_DESCRIPTION)))
    except (json.JSONDecodeError, RecursionError) as error:
        raise GraphFileError(f"{path}: {_DESCRIPTION} is not valid JSON ({error})") from None
    if not isinstance(description, dict) or description.get("format") != FORMAT:
        raise GraphFileError(f"{path} is not a naivegraph graph file (format is not {FORMAT!r})")
    version = description.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise GraphFileError(
            f"{path} has format version {version!r}, but this naivegraph reads versions up "
            f"to {VERSION}; upgrade naivegraph to load it"
        )
    try:
        return _Reader(arrays, str(path)).graph(description, outer=None, captures=[])
    except GraphFileError:
        raise
    except (TypeError, ValueError, AttributeError, KeyError, IndexError, RecursionError) as error:
        # a description of the wrong structure somewhere the checks did not foresee
        raise GraphFileError(
            f"{path}: the description is damaged ({type(error).__name__}: {error})"
        ) from None


def _entry(archive: Any, key: str, path: Any) -> np.ndarray:
    """One array of the archive; an object array (pickled Python objects) is refused."""
    try:
        return archive[key]
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as error:
        raise GraphFileError(
            f"{path}: entry {key!r} cannot be read as a numeric array ({error}); a graph "
            "file holds no pickled objects"
        ) from None


class _Reader:
    """Rebuilds graphs from their description, checking every part on the way."""

    def __init__(self, arrays: dict, path: str) -> None:
        self.arrays, self.path = arrays, path

    def fail(self, where: str, what: str) -> GraphFileError:
        return GraphFileError(f"{self.path}: {where}: {what}")

    def field(self, entry: dict, key: str, where: str) -> Any:
        if not isinstance(entry, dict) or key not in entry:
            raise self.fail(where, f"missing {key!r}")
        return entry[key]

    def graph(self, description: dict, outer: list[Node] | None, captures: list) -> Graph:
        graph = Graph(name=str(self.field(description, "name", "the graph")))
        nodes: list[Node] = []
        captured = {}
        if outer is not None:
            captured = {inner: outer[o] for o, inner in captures}
        for i, entry in enumerate(self.field(description, "nodes", "the graph")):
            where = f"node {i} ({entry.get('name', '?') if isinstance(entry, dict) else '?'})"
            node = self.node(entry, nodes, where)
            name = str(self.field(entry, "name", where))
            if graph._node_named(name) is not None:
                raise self.fail(where, f"a second node named {name!r} (names are unique)")
            graph._register(node, name, node.kind)
            node.retains_grad = bool(entry.get("retains_grad", False))
            node.is_gradient = bool(entry.get("is_gradient", False))
            if isinstance(entry.get("gradient_of"), str):
                node.gradient_of = entry["gradient_of"]
            self.check_meta(node, entry, where)
            nodes.append(node)
            if i in captured:
                graph.captures[captured[i]] = node
        graph.outer = None if outer is None else outer[0].graph
        return graph

    def node(self, entry: dict, nodes: list[Node], where: str) -> Node:
        kind = self.field(entry, "kind", where)
        if kind == "placeholder":
            shape = self.field(entry, "shape", where)
            dtype = self.dtype(self.field(entry, "dtype", where), where)
            return Placeholder("placeholder", (), None if shape is None else tuple(shape), dtype)
        if kind == "variable":
            value = np.array(self.decode(self.field(entry, "value", where), where, nodes))
            # Built field by field: Variable() would join the default graph at once.
            variable = Variable.__new__(Variable)
            Node.__init__(variable, "variable", (), value.shape, value.dtype)
            variable.trainable = bool(entry.get("trainable", True))
            variable._state = [value]
            return variable
        if kind == "constant":
            return Constant(self.decode(self.field(entry, "value", where), where, nodes))
        if kind == "operation":
            return self.operation(entry, nodes, where)
        raise self.fail(where, f"unknown node kind {kind!r}")

    def operation(self, entry: dict, nodes: list[Node], where: str) -> Operation:
        name = self.field(entry, "op", where)
        op = _OPS.get(name)
        if op is None:
            raise self.fail(where, f"unknown op {name!r}: this naivegraph has no such op")
        indices = self.field(entry, "inputs", where)
        if not all(isinstance(i, int) and 0 <= i < len(nodes) for i in indices):
            raise self.fail(where, f"inputs {indices} must be positions of earlier nodes")
        inputs = [nodes[i] for i in indices]
        described = self.field(entry, "attrs", where)
        if not isinstance(described, dict):
            raise self.fail(where, f"attrs must be a mapping, not {type(described).__name__}")
        attrs = {
            k: self.decode(v, f"{where}, attribute {k!r}", nodes) for k, v in described.items()
        }
        try:
            shape, dtype = infer(op, inputs, attrs)
        except Exception as error:
            raise self.fail(where, f"cannot be rebuilt ({error})") from None
        return Operation(op, inputs, shape, dtype, attrs)

    def check_meta(self, node: Node, entry: dict, where: str) -> None:
        """The shape and dtype the file states must be what its parts give."""
        shape = entry.get("shape")
        want = None if shape is None else tuple(shape)
        if want != node.shape:
            raise self.fail(where, f"the file says shape {want}, but its parts give {node.shape}")
        dtype = entry.get("dtype")
        have = None if node.dtype is None else node.dtype.name
        if dtype != have:
            raise self.fail(where, f"the file says dtype {dtype}, but its parts give {have}")

    def dtype(self, name: Any, where: str) -> np.dtype:
        try:
            return np.dtype(name)
        except TypeError:
            raise self.fail(where, f"unknown dtype {name!r}") from None

    def decode(self, value: Any, where: str, nodes: list[Node]) -> Any:
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if isinstance(value, list):
            raise self.fail(where, "a bare list (lists are saved tagged)")
        if not isinstance(value, dict) or len(value) not in (1, 2):
            raise self.fail(where, f"cannot read the value {value!r}")
        tag = next(iter(value))
        if tag == "array":
            key = value["array"]
            if key not in self.arrays:
                raise self.fail(where, f"missing array {key!r}")
            return self.arrays[key]
        if tag == "tuple":
            return tuple(self.decode(v, where, nodes) for v in value["tuple"])
        if tag == "list":
            return [self.decode(v, where, nodes) for v in value["list"]]
        if tag == "slice":
            return slice(*(self.decode(v, where, nodes) for v in value["slice"]))
        if tag == "ellipsis":
            return Ellipsis
        if tag == "complex":
            return complex(*value["complex"])
        if tag == "scalar":
            return self.dtype(value.get("dtype"), where).type(value["scalar"])
        if tag == "dtype":
            return self.dtype(value["dtype"], where)
        if tag == "function":
            return self.function(value["function"], where, nodes)
        if tag == "loop":
            loop = value["loop"]
            return control_flow.Loop(
                self.function(self.field(loop, "condition", where), where, nodes),
                self.function(self.field(loop, "body", where), where, nodes),
                int(self.field(loop, "count", where)),
                loop.get("limit"),
            )
        raise self.fail(where, f"unknown value tag {tag!r}")

    def function(self, description: dict, where: str, outer: list[Node]) -> control_flow.Function:
        captures = self.field(description, "captures", where)
        graph = self.graph(self.field(description, "graph", where), outer, captures)
        nodes = graph.nodes
        inputs = [None if i is None else nodes[i] for i in self.field(description, "inputs", where)]
        outputs = [nodes[i] for i in self.field(description, "outputs", where)]
        return control_flow.Function(graph, inputs, outputs)
