"""Export a static graph to ONNX: ``to_onnx(graph, inputs, outputs) -> onnx.ModelProto``.

Only the nodes the outputs need are exported.  Placeholders become graph inputs (a
``None`` size becomes a symbolic dimension ``N0``, ``N1``, ...), Variables and
Constants become initializers, and each operation is spelled in standard ONNX
operators by its entry in :data:`naivegraph.export.onnx_map.ONNX_MAP`.  The model runs in
ONNX Runtime with naivegraph's numbers: the mappings reproduce the numpy forwards,
dtypes included (a Python float constant takes the dtype of the other operand, as in
numpy, because every operand is cast to the node's inferred dtype).

``onnx`` is an optional dependency (the ``export`` extra, ``pip install '.[export]'``): it is
imported when :func:`to_onnx` runs, never when naivegraph is.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..static.executor import CompiledFunction, topological_order
from ..static.graph import Graph
from ..static.nodes import Constant, Node, Operation, Placeholder, Variable
from ..static.trace import Traced
from .onnx_map import ONNX_MAP, NotExportable

DEFAULT_OPSET = 18


class _Builder:
    """What emitters see: ONNX operators added by name, with numpy dtypes tracked."""

    def __init__(self, onnx: Any, prefix: str = "") -> None:
        self._onnx = onnx
        self.nodes: list = []
        self.initializers: list = []
        self._dtypes: dict[str, np.dtype] = {}
        self._constants: dict[str, np.ndarray] = {}
        self._const_names: dict[tuple, str] = {}
        self._used: set[str] = set()
        self.prefix = prefix  # names of the operators of the node being exported

    # ------------------------------------------------------------------ names
    def fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self._used:
            name, k = f"{base}_{k}", k + 1
        self._used.add(name)
        return name

    def reserve(self, name: str) -> None:
        self._used.add(name)

    def record(self, name: str, dtype: Any) -> None:
        if dtype is not None:
            self._dtypes[name] = np.dtype(dtype)

    def rename_last(self, name: str, new: str, since: int) -> str:
        """Call ``name`` ``new`` if the last operator, added after the first ``since``, made
        it (then no other operator reads it yet)."""
        if len(self.nodes) <= since or list(self.nodes[-1].output) != [name]:
            return name
        self.nodes[-1].output[0] = new
        self.nodes[-1].name = new
        if name in self._dtypes:
            self._dtypes[new] = self._dtypes[name]
        return new

    def dtype_of(self, name: str) -> np.dtype | None:
        return self._dtypes.get(name)

    # ------------------------------------------------------------------ what emitters call
    def op(self, op_type: str, inputs: Sequence[str], dtype: Any = None, outputs: int = 1, **attrs):
        helper, numpy_helper = self._onnx.helper, self._onnx.numpy_helper
        names = [self.fresh(f"{self.prefix}/{op_type}") for _ in range(outputs)]
        for key, value in attrs.items():
            if isinstance(value, np.ndarray):
                attrs[key] = numpy_helper.from_array(value)
        self.nodes.append(helper.make_node(op_type, list(inputs), names, name=names[0], **attrs))
        for name in names:
            self.record(name, dtype)
        return names[0] if outputs == 1 else names

    def const(self, value: Any, dtype: Any, name: str | None = None) -> str:
        array = np.asarray(value).astype(dtype)
        key = (array.dtype.str, array.shape, array.tobytes())
        if name is None and array.size <= 16 and key in self._const_names:
            return self._const_names[key]
        _check_dtype(array.dtype, "a constant")
        final = self.fresh(f"{self.prefix}/const") if name is None else name
        self.initializers.append(self._onnx.numpy_helper.from_array(array, final))
        self.record(final, array.dtype)
        self._constants[final] = array
        if array.size <= 16 and name is None:
            self._const_names[key] = final  # shared by later nodes; a Variable never is
        return final

    def ints(self, values: Sequence[int]) -> str:
        return self.const(np.asarray(list(values), dtype=np.int64).reshape(-1), np.int64)

    def cast(self, name: str, dtype: Any) -> str:
        dtype = np.dtype(dtype)
        if self.dtype_of(name) == dtype:
            return name
        if name in self._constants:  # a constant is converted here, as numpy would
            return self.const(self._constants[name].astype(dtype), dtype)
        _check_dtype(dtype, "a cast")
        to = self._onnx.helper.np_dtype_to_tensor_dtype(dtype)
        return self.op("Cast", [name], dtype=dtype, to=to)


def _check_dtype(dtype: Any, what: str) -> None:
    if np.dtype(dtype).kind not in "biuf":
        raise NotImplementedError(
            f"{what} of dtype {np.dtype(dtype)} cannot be exported: ONNX Runtime has no "
            f"arithmetic for it"
        )


def _resolve(graph: Graph, items: Sequence[Any]) -> list[Node]:
    if isinstance(items, (str, Node)):
        items = [items]
    return [graph.resolve(item) for item in items]


def _unmapped(order: Sequence[Node]) -> None:
    """NotImplementedError naming every op without an ONNX form and the nodes using it."""
    missing: dict[str, list[str]] = {}
    reasons: dict[str, str] = {}
    for node in order:
        if not isinstance(node, Operation):
            continue
        entry = ONNX_MAP.get(node.op.name)
        if entry is None or isinstance(entry, NotExportable):
            missing.setdefault(node.op.name, []).append(node.name)
            if entry is not None:
                reasons[node.op.name] = entry.reason
            elif node.op.name.startswith("fused["):
                reasons[node.op.name] = (
                    "a fused chain made by the optimiser; export the graph itself or a "
                    "function compiled with optimize=False"
                )
    if missing:
        lines = []
        for op, users in missing.items():
            listed = ", ".join(repr(u) for u in users[:5]) + (" ..." if len(users) > 5 else "")
            why = f": {reasons[op]}" if op in reasons else ": no ONNX mapping"
            lines.append(f"op {op!r} (used by {listed}){why}")
        raise NotImplementedError("cannot export to ONNX:\n  " + "\n  ".join(lines))


def output_name(node: Node) -> str:
    """The name of an exported output: the node's name when it was given one (``loss``),
    ``grad_<x>`` for the gradient ``ns.gradients`` returned for ``x``, the internal name
    otherwise (``exp_1``).

    >>> import naivegraph.static as ns
    >>> with ns.Graph() as g:
    ...     w = ns.Variable(2.0, name="w1")
    ...     loss = w * w
    ...     (grad,) = ns.gradients(loss, [w])
    ...     g.rename(loss, "loss")
    >>> output_name(loss), output_name(grad), output_name(ns.exp(w))
    ('loss', 'grad_w1', 'exp_1')
    """
    return f"grad_{node.gradient_of}" if node.gradient_of is not None else node.name


def _complete_output_shapes(onnx: Any, model: Any, output_nodes: dict[str, Node]) -> None:
    """ONNX wants a shape (a rank at least) on every graph output: where naivegraph does
    not know one, take the one ONNX's shape inference finds."""
    unknown = [o for o in model.graph.output if not o.type.tensor_type.HasField("shape")]
    if not unknown:
        return
    inferred = onnx.shape_inference.infer_shapes(model)
    found = {v.name: v for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
    for output in unknown:
        info = found.get(output.name)
        if info is None or not info.type.tensor_type.HasField("shape"):
            node = output_nodes[output.name]
            raise ValueError(
                f"the rank of output {node.name!r} is known neither to naivegraph nor to ONNX's "
                f"shape inference; give the placeholders it depends on shapes"
            )
        output.type.tensor_type.shape.CopyFrom(info.type.tensor_type.shape)


def _unfused(compiled: CompiledFunction, graph: Graph, inputs: Any, outputs: Any) -> tuple:
    """A function compiled with optimisation runs fused chains, which have no ONNX form:
    export the graph it was compiled from instead (same values; the optimiser's report
    maps the function's nodes back to it)."""
    report = compiled.report
    if report is None or not any(n.op_name.startswith("fused[") for n in graph.nodes):
        return graph, inputs, outputs
    back = {new: old for old, new in report.mapping.items()}

    def source(items: Any) -> list:
        items = [items] if isinstance(items, (str, Node)) else list(items)
        nodes = [graph.resolve(item) for item in items]
        return [back.get(n, n) for n in nodes]

    return report.source, source(inputs), source(outputs)


def to_onnx(
    graph_or_compiled: Graph | CompiledFunction | Traced,
    inputs: Sequence[Any] | None = None,
    outputs: Sequence[Any] | None = None,
    path: Any = None,
    opset: int = DEFAULT_OPSET,
):
    """The part of a static graph that ``outputs`` need, as an ``onnx.ModelProto``.

    ``inputs``: placeholders (nodes or names), the model's inputs in that order;
    ``outputs``: nodes or names.  A :class:`CompiledFunction`, or the result of
    ``ns.trace(f, *examples)`` (a dynamic-mode function, as PyTorch exports by tracing),
    may be given instead of a graph: its inputs and outputs are the defaults.
    ``path``: where to save the model as well.  An op without an ONNX form raises
    NotImplementedError naming it and the nodes that use it.

    >>> import numpy as np, naivegraph.static as ns
    >>> with ns.Graph() as g:
    ...     x = ns.placeholder("x", shape=(None, 2))
    ...     y = ns.sum(x * 2.0)
    >>> model = to_onnx(g, [x], [y])  # doctest: +SKIP
    """
    try:
        import onnx
    except ImportError:
        raise ImportError(
            "to_onnx needs the onnx package: pip install onnx onnxruntime, or "
            "pip install '.[export]' in the naivegraph folder"
        ) from None

    if isinstance(graph_or_compiled, Traced):  # dynamic-mode code, exported through tracing
        traced = graph_or_compiled
        graph_or_compiled = traced.graph
        inputs = traced.inputs if inputs is None else inputs
        outputs = traced.outputs if outputs is None else outputs
    if isinstance(graph_or_compiled, CompiledFunction):
        graph = graph_or_compiled.graph
        if inputs is None:
            inputs = [p for p in graph_or_compiled.inputs if p is not None]
        if outputs is None:
            outputs = graph_or_compiled.outputs
        graph, inputs, outputs = _unfused(graph_or_compiled, graph, inputs, outputs)
    elif isinstance(graph_or_compiled, Graph):
        graph = graph_or_compiled
    else:
        raise TypeError(
            f"to_onnx exports a static Graph or a CompiledFunction, got "
            f"{type(graph_or_compiled).__name__}"
        )
    if inputs is None or outputs is None:
        raise TypeError("to_onnx(graph, inputs, outputs): say which placeholders and nodes")
    input_nodes = _resolve(graph, inputs)
    output_nodes = _resolve(graph, outputs)
    if not output_nodes:
        raise ValueError("to_onnx needs at least one output")
    for node in input_nodes:
        if not isinstance(node, Placeholder):
            raise TypeError(f"the inputs of an ONNX model are placeholders, not {node.name!r}")
    if len(set(input_nodes)) != len(input_nodes):
        raise ValueError("to_onnx: a placeholder is listed twice in inputs")
    order = topological_order(graph, output_nodes)
    fed = set(input_nodes)
    missing = [n.name for n in order if isinstance(n, Placeholder) and n not in fed]
    if missing:
        raise ValueError(
            f"the outputs need placeholder(s) {', '.join(map(repr, missing))}: add them to inputs"
        )
    _unmapped(order)

    helper = onnx.helper
    b = _Builder(onnx)
    names: dict[Node, str] = {}
    for node in order:
        b.reserve(node.name)

    graph_inputs, symbolic = [], 0
    for node in input_nodes:
        _check_dtype(node.dtype, f"placeholder {node.name!r}")
        if node.shape is None:
            raise ValueError(
                f"placeholder {node.name!r} has no shape; an ONNX input needs its rank at "
                f"least: declare it, with None for the sizes known only at run time"
            )
        dims: list[int | str] = []
        for d in node.shape:
            if d is None:
                dims.append(f"N{symbolic}")
                symbolic += 1
            else:
                dims.append(int(d))
        elem = helper.np_dtype_to_tensor_dtype(node.dtype)
        graph_inputs.append(helper.make_tensor_value_info(node.name, elem, dims))
        b.reserve(node.name)
        b.record(node.name, node.dtype)
        names[node] = node.name

    for node in order:
        if node in names:
            continue
        if isinstance(node, (Variable, Constant)):
            # a Python number keeps its numpy dtype here; emitters cast it, as numpy does
            names[node] = b.const(np.asarray(node.value), node.dtype, name=node.name)
            continue
        b.prefix, since = node.name, len(b.nodes)
        emitter = ONNX_MAP[node.op.name]
        out = emitter(b, node, [names[i] for i in node.inputs])  # type: ignore[operator]
        if node.dtype is not None:
            out = b.cast(out, node.dtype)
        names[node] = b.rename_last(out, node.name, since)

    graph_outputs, seen, exported = [], set(), {}
    for node in output_nodes:
        name = names[node]
        wanted = output_name(node)
        if name in seen or name in b._constants or isinstance(node, Placeholder):
            b.prefix = node.name
            name = b.op("Identity", [name], dtype=node.dtype)
        if wanted != node.name:  # an Identity gives the output the name it is known by
            b.nodes.append(helper.make_node("Identity", [name], [b.fresh(wanted)]))
            name = b.nodes[-1].output[0]
            b.record(name, node.dtype)
        seen.add(name)
        exported[name] = node
        _check_dtype(node.dtype, f"output {node.name!r}")
        elem = helper.np_dtype_to_tensor_dtype(node.dtype)
        sizes = None if node.shape is None else [None if d is None else int(d) for d in node.shape]
        graph_outputs.append(helper.make_tensor_value_info(name, elem, sizes))

    # a constant cast to another dtype leaves its original unused: drop those
    used = {i for n in b.nodes for i in n.input} | {o.name for o in graph_outputs}
    initializers = [t for t in b.initializers if t.name in used]
    body = helper.make_graph(
        b.nodes, graph.name or "naivegraph", graph_inputs, graph_outputs, initializers
    )
    opsets = [helper.make_opsetid("", opset)]
    model = helper.make_model(body, opset_imports=opsets, producer_name="naivegraph")
    model.ir_version = helper.find_min_ir_version_for(opsets)
    _complete_output_shapes(onnx, model, exported)
    if path is not None:
        onnx.save_model(model, str(path))
    return model
