"""Backward-graph nodes: what ``tensor.grad_fn`` points to.

A node is created by every recorded op.  It keeps what the op's VJP rule needs
(saved tensors, checked against in-place changes), the edges to the nodes of its
inputs (``next_functions``), and just enough of the forward side (input/output
metadata) for the renderer to draw both graphs.  After a backward pass without
``retain_graph`` its saved tensors are released and the node is marked freed.
"""

from __future__ import annotations

import itertools
import weakref
from typing import Callable

from ..ops.core import Meta, OpDef

_handle_ids = itertools.count()

SECOND_BACKWARD = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")


class RemovableHandle:
    """Returned by ``register_hook``: ``handle.remove()`` unregisters the hook."""

    __slots__ = ("_hooks", "id")

    def __init__(self, hooks: dict) -> None:
        self._hooks = weakref.ref(hooks) if hasattr(hooks, "__weakref__") else (lambda: hooks)
        self.id = next(_handle_ids)

    def remove(self) -> None:
        hooks = self._hooks()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


class _HookDict(dict):
    """A dict that a handle can refer to weakly."""

    __slots__ = ("__weakref__",)


def add_hook(hooks: "_HookDict", fn: Callable) -> RemovableHandle:
    if not callable(fn):
        raise TypeError(f"a hook must be callable, got {type(fn).__name__}")
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


class SavedTensor:
    """A tensor kept for backward, with the version it had when it was saved."""

    __slots__ = ("data", "tensor", "counter", "version", "is_output")

    def __init__(self, tensor, is_output: bool = False) -> None:
        self.data = tensor._data
        self.is_output = is_output
        if is_output:
            # An output refers to the node that saves it: keep its version counter, not
            # the tensor itself (that would be a reference cycle).
            self.tensor = None
            self.counter = tensor._counter()
            self.version = self.counter.value
        else:
            # An input is kept anyway; its counter is read at check time, since a tensor
            # that was never changed in place has none yet (creating one per op costs).
            self.tensor = tensor
            self.counter = None
            self.version = tensor._version

    def _current_version(self) -> int:
        return self.counter.value if self.counter is not None else self.tensor._version

    def check(self, node: "Node") -> None:
        current = self._current_version()
        if current != self.version:
            shape = tuple(self.data.shape)
            origin = ("the output 0 of " + node.name()) if self.is_output else _origin(self.tensor)
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [tensor of shape {shape}, dtype {self.data.dtype}], which is "
                f"{origin}, is at version {current}; expected version {self.version} "
                "instead. Hint: it was changed in place after an op saved it for backward. Use "
                "an out-of-place op (b = b * 2, not b *= 2 or b[0] = ...) or .clone() it before "
                "changing it.")

    def unpack(self, node: "Node", create_graph: bool):
        self.check(node)
        if not create_graph:
            return self.data
        if self.tensor is not None:
            return self.tensor
        from .tensor import Tensor  # output: rebuild it, attached to the node that made it
        return Tensor._make(self.data, True, node, 0)


def _origin(tensor) -> str:
    if tensor is None or tensor.grad_fn is None:
        return "a leaf tensor"
    return f"output {tensor._output_nr} of {tensor.grad_fn.name()}"


class _Hooks:
    """Hooks attached to one node; most nodes have none, so this is created lazily."""

    __slots__ = ("pre", "post", "tensor", "retained")

    def __init__(self) -> None:
        self.pre = None  # register_prehook: fn(grad_outputs)
        self.post = None  # register_hook: fn(grad_inputs, grad_outputs)
        self.tensor = None  # hooks of the non-leaf tensors this node produced
        self.retained = None  # output_nr -> weakref of a tensor that retains its grad


class Node:
    """Base of every ``grad_fn``: edges, hooks, and the apply step of backward."""

    __slots__ = ("next_functions", "_hooks", "_released", "_metadata", "__weakref__")

    def __init__(self, next_functions: tuple = ()) -> None:
        self.next_functions = next_functions
        self._hooks = None
        self._released = False

    @property
    def metadata(self) -> dict:
        try:
            return self._metadata
        except AttributeError:
            self._metadata = {}
            return self._metadata

    def _hook_set(self) -> _Hooks:
        if self._hooks is None:
            self._hooks = _Hooks()
        return self._hooks

    def name(self) -> str:
        """PyTorch's class name for this backward function, e.g. ``MulBackward0``."""
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    num_outputs = 1

    # -- hooks ----------------------------------------------------------------------
    def register_hook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after this node computed its gradients;
        it may return a replacement tuple for ``grad_inputs``."""
        hooks = self._hook_set()
        if hooks.post is None:
            hooks.post = _HookDict()
        return add_hook(hooks.post, fn)

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before this node; it may return replacements."""
        hooks = self._hook_set()
        if hooks.pre is None:
            hooks.pre = _HookDict()
        return add_hook(hooks.pre, fn)

    def _add_tensor_hook(self, output_nr: int, fn: Callable) -> RemovableHandle:
        if not callable(fn):
            raise TypeError(f"a hook must be callable, got {type(fn).__name__}")
        hooks = self._hook_set()
        if hooks.tensor is None:
            hooks.tensor = _HookDict()
        handle = RemovableHandle(hooks.tensor)
        hooks.tensor[handle.id] = (output_nr, fn)
        return handle

    def _retain(self, output_nr: int, tensor) -> None:
        hooks = self._hook_set()
        if hooks.retained is None:
            hooks.retained = {}
        hooks.retained[output_nr] = weakref.ref(tensor)

    # -- backward -------------------------------------------------------------------
    @property
    def freed(self) -> bool:
        """True once a backward pass without ``retain_graph`` released this node."""
        return self._released

    def release(self) -> None:
        self._released = True

    def apply(self, grad_outputs: list, create_graph: bool) -> list:  # pragma: no cover
        raise NotImplementedError


class OpNode(Node):
    """The backward of one op-table primitive; subclassed per PyTorch name."""

    __slots__ = ("op", "attrs", "saved", "saved_out", "shapes", "_constants", "output_ref",
                 "output_meta")

    def __init__(self, op: OpDef, attrs: dict, next_functions: tuple, saved: list,
                 saved_out, shapes: tuple, constants: dict | None, output_ref,
                 output_meta: Meta) -> None:
        self.next_functions = next_functions
        self._hooks = None
        self._released = False
        self.op = op
        self.attrs = attrs
        self.saved = saved  # per input: SavedTensor, Meta (not kept), or a constant
        self.saved_out = saved_out
        self.shapes = shapes
        self._constants = constants  # input index -> weakref, inputs not requiring grad
        self.output_ref = output_ref  # weakref to the output tensor, for drawings
        self.output_meta = output_meta

    @property
    def inputs_meta(self) -> tuple:
        """Forward side of each input, for drawings: a weakref to a tensor that does not
        require grad, a plain constant, or None (follow ``next_functions`` instead)."""
        constants = self._constants or {}
        return tuple(constants.get(i, None if edge[0] is not None or isinstance(s, (SavedTensor, Meta))
                                   else s)
                     for i, (edge, s) in enumerate(zip(self.next_functions, self.saved)))

    @property
    def saved_tensors_meta(self) -> list[tuple[str, tuple]]:
        """(role, shape) of what this node keeps for backward, for drawings."""
        items = [(f"input {i}", tuple(s.data.shape)) for i, s in enumerate(self.saved)
                 if isinstance(s, SavedTensor)]
        if isinstance(self.saved_out, SavedTensor):
            items.append(("result", tuple(self.saved_out.data.shape)))
        return items

    def release(self) -> None:
        self._released = True
        if self.op.saves:
            self.saved = [meta_of(s.data) if type(s) is SavedTensor else s for s in self.saved]
            if type(self.saved_out) is SavedTensor:
                self.saved_out = meta_of(self.saved_out.data)

    def apply(self, grad_outputs: list, create_graph: bool) -> list:
        if self._released and self.op.saves:
            raise RuntimeError(SECOND_BACKWARD)
        inputs = [s.unpack(self, create_graph) if type(s) is SavedTensor else s
                  for s in self.saved]
        out = self.saved_out
        if type(out) is SavedTensor:
            out = out.unpack(self, create_graph)
        needs = [edge[0] is not None for edge in self.next_functions]
        return self.op.pullback(grad_outputs[0], inputs, out, self.attrs, needs, self.shapes)


_metas: dict[tuple, Meta] = {}


def meta_of(array) -> Meta:
    """A shared Meta for ``array``'s shape and dtype (cached: nodes are made per op)."""
    key = (array.shape, array.dtype)
    meta = _metas.get(key)
    if meta is None:
        if len(_metas) > 4096:
            _metas.clear()
        meta = _metas[key] = Meta(array.shape, array.dtype)
    return meta


_node_classes: dict[str, type] = {}


def node_class(name: str) -> type:
    """The ``OpNode`` subclass called ``name`` (so ``type(grad_fn).__name__`` matches)."""
    cls = _node_classes.get(name)
    if cls is None:
        cls = type(name, (OpNode,), {"__slots__": ()})
        _node_classes[name] = cls
    return cls


class AccumulateGrad(Node):
    """The node behind a leaf that requires grad: adds the incoming gradient to ``.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable) -> None:
        Node.__init__(self, ())
        self.variable = variable

    def apply(self, grad_outputs: list, create_graph: bool) -> list:
        return []  # the engine accumulates, after the whole pass succeeded
