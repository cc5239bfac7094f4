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

import numpy as np

from ..ops.core import Meta, OpDef
from ..ops.names import SCALAR_SHAPE

_handle_ids = itertools.count()

#: stamps every node with its creation order (``node._seq``), one call per node: a
#: walkthrough replays the forward pass in the order the user's code ran it
next_seq = itertools.count().__next__

# The Tensor class sits above this module (a tensor records nodes), yet under
# create_graph, for hooks and for ``.grad`` the nodes and the engine make tensors.
# tensor.py registers its class here when it is imported, so imports go one way.
tensor_class: type = type(None)


def register_tensor_class(cls: type) -> None:
    global tensor_class
    tensor_class = cls


def is_tensor(value) -> bool:
    return isinstance(value, tensor_class)


def as_tensor(value):
    """``value`` as a tensor: a tensor is kept, an array is wrapped (no history)."""
    return value if isinstance(value, tensor_class) else tensor_class._make(value, False, None, 0)


SECOND_BACKWARD = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


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
    """A tensor a custom Function saved for backward, with its version at that time."""

    __slots__ = ("tensor", "version")

    def __init__(self, tensor) -> None:
        self.tensor = tensor
        self.version = tensor._saved_version

    def unpack(self):
        current = self.tensor._version
        if current != self.version:
            raise _modified_in_place(self.tensor._data, _origin(self.tensor), current, self.version)
        return self.tensor


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

    __slots__ = ("next_functions", "_hooks", "_released", "_seq", "_metadata", "__weakref__")

    def __init__(self, next_functions: tuple = ()) -> None:
        self.next_functions = next_functions
        self._hooks = None
        self._released = False
        self._seq = next_seq()

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

    def _forget(self, output_nr: int, tensor) -> None:
        """Stop retaining ``tensor``'s gradient here (its history moved to another node)."""
        retained = self._hooks.retained if self._hooks is not None else None
        if retained and retained.get(output_nr, lambda: None)() is tensor:
            del retained[output_nr]

    # -- backward -------------------------------------------------------------------
    @property
    def freed(self) -> bool:
        """True once a backward pass without ``retain_graph`` released this node."""
        return self._released

    def release(self) -> None:
        self._released = True

    @property
    def input_edges(self) -> tuple:
        """One edge per input of the op (``next_functions`` may leave some out)."""
        return self.next_functions

    def apply(self, grad_outputs: list, create_graph: bool) -> list:  # pragma: no cover
        raise NotImplementedError


#: a node class's name -> its torch attributes ``_saved_self``, ``_raw_saved_self`` and
#: the like, as properties that read them on access (nothing is stored per op); set by
#: :mod:`naivegraph.dynamic.saved`, which sits above this module and also gives them to
#: the classes made before it was imported
saved_attributes: Callable[[str], dict] = lambda name: {}


class OpNode(Node):
    """The backward of one op-table primitive; subclassed per PyTorch name.

    ``saved`` holds, per input, exactly what the VJP rule receives in a plain backward:
    the array of a saved input, a :class:`Meta` for an input the rule does not read, or
    the constant itself; ``saved_out`` likewise for the output.  ``sources`` says where
    each saved array came from, ``(position, owner, version)`` with position ``"out"``
    for the output, so the version check and ``create_graph`` can find the tensor.
    """

    __slots__ = (
        "op",
        "attrs",
        "saved",
        "saved_out",
        "sources",
        "needs",
        "_constants",
        "output_ref",
    )

    def __init__(
        self,
        op: OpDef,
        attrs: dict,
        next_functions: tuple,
        saved: list,
        saved_out,
        sources: tuple,
        needs: tuple,
        constants: dict | None,
        output_ref,
    ) -> None:
        self.next_functions = next_functions
        self._hooks = None
        self._released = False
        self._seq = next_seq()
        self.op = op
        self.attrs = attrs
        self.saved = saved
        self.saved_out = saved_out
        self.sources = sources  # owner: the input tensor, or the output's version counter
        self.needs = needs  # per input: does a gradient flow to it
        self._constants = constants  # input index -> weakref, inputs not requiring grad
        self.output_ref = output_ref  # weakref to the output tensor, for drawings

    @property
    def output_meta(self) -> Meta:
        """Shape and dtype of the output (kept after the output itself is gone)."""
        out = self.saved_out
        return out if isinstance(out, Meta) else meta_of(out)

    @property
    def shapes(self) -> tuple:
        """Shape of each input (``SCALAR_SHAPE`` for a Python number)."""
        return tuple(shape_of(s) for s in self.saved)

    @property
    def inputs_meta(self) -> tuple:
        """Forward side of each input, for drawings: a weakref to a tensor that does not
        require grad, a plain constant, or None (follow ``next_functions`` instead)."""
        constants = self._constants or {}
        tensors = {position for position, _, _ in self.sources}
        return tuple(
            constants.get(
                i, None if edge[0] is not None or i in tensors or isinstance(s, Meta) else s
            )
            for i, (edge, s) in enumerate(zip(self.input_edges, self.saved))
        )

    @property
    def saved_tensors_meta(self) -> list[tuple[str, tuple]]:
        """(role, shape) of what this node keeps for backward, for drawings."""
        return [
            (
                "result" if position == "out" else f"input {position}",
                tuple(self.saved_array(position).shape),
            )
            for position, _, _ in self.sources
        ]

    def saved_array(self, position):
        """The array kept for input ``position`` (or ``"out"``); a Meta once freed."""
        return self.saved_out if position == "out" else self.saved[position]

    def saved_source(self, position):
        """The tensor a saved input came from (an output is not held: that is a cycle)."""
        for where, owner, _ in self.sources:
            if where == position and where != "out":
                return owner
        return None

    def release(self) -> None:
        self._released = True
        for position, _, _ in self.sources:
            if position == "out":
                self.saved_out = meta_of(self.saved_out)
            else:
                self.saved[position] = meta_of(self.saved[position])
        self.sources = ()

    def apply(self, grad_outputs: list, create_graph: bool) -> list:
        if self._released and self.op.saves:
            raise RuntimeError(SECOND_BACKWARD)
        inputs, out = self.saved, self.saved_out
        if self.sources:
            self._check_versions()
            if create_graph:  # the rule must see tensors, to record its own graph
                inputs, out = self._saved_as_tensors()
            else:
                inputs = self._current_inputs()
        return self.grads_per_edge(
            self.op.pullback(grad_outputs[0], inputs, out, self.attrs, self.needs)
        )

    def grads_per_edge(self, grads: list) -> list:
        """The rule's gradients (one per input) for ``next_functions`` (one per edge)."""
        positions = self.op.edge_inputs
        return grads if positions is None else [grads[i] for i in positions]

    @property
    def input_edges(self) -> tuple:
        """One edge per input, ``(None, 0)`` for an input no gradient can reach."""
        positions = self.op.edge_inputs
        if positions is None:
            return self.next_functions
        edges = dict(zip(positions, self.next_functions))
        return tuple(edges.get(i, (None, 0)) for i in range(len(self.saved)))

    def _check_versions(self) -> None:
        for position, owner, version in self.sources:
            current = owner.value if position == "out" else owner._version
            if current != version:
                origin = ("the output 0 of " + self.name()) if position == "out" else _origin(owner)
                raise _modified_in_place(self.saved_array(position), origin, current, version)

    def _current_inputs(self) -> list:
        """The saved inputs, read through their tensors: ``x.data = new`` after the op
        replaced ``x``'s storage, and PyTorch's backward then reads the new one."""
        inputs = self.saved
        for position, owner, _ in self.sources:
            if position != "out" and owner._data is not inputs[position]:
                if owner._data.shape != inputs[position].shape:
                    raise RuntimeError(data_shape_changed(inputs[position].shape, owner.shape))
                if inputs is self.saved:
                    inputs = list(inputs)
                inputs[position] = owner._data
        return inputs

    def _saved_as_tensors(self) -> tuple[list, object]:
        inputs, out = list(self.saved), self.saved_out
        for position, owner, _ in self.sources:
            if position == "out":  # rebuilt, attached to the node that made it
                out = tensor_class._make(self.saved_out, True, self, 0)
            else:
                inputs[position] = owner
        return inputs, out


def data_shape_changed(was: tuple, now: tuple) -> str:
    return (
        f"a tensor used in this graph had shape {tuple(was)} and now has shape "
        f"{tuple(now)}: its .data was replaced by one of another shape after the graph was "
        "built. Replace .data before using the tensor, or build the graph again."
    )


def _modified_in_place(data, origin: str, current: int, version: int) -> RuntimeError:
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [tensor of shape {tuple(data.shape)}, dtype {data.dtype}], which "
        f"is {origin}, is at version {current}; expected version {version} instead. Hint: it "
        "was changed in place after an op saved it for backward. Use an out-of-place op "
        "(b = b * 2, not b *= 2 or b[0] = ...) or .clone() it before changing it."
    )


def shape_of(value) -> tuple:
    """The shape of an input as a rule sees it; a Python number has ``SCALAR_SHAPE``."""
    return value.shape if isinstance(value, (np.ndarray, Meta)) else SCALAR_SHAPE


#: (shape, dtype) -> its one Meta: a node is made per op, and Metas are never changed
_metas: dict[tuple, Meta] = {}


def meta_of(array) -> Meta:
    """The shape and dtype of ``array``, kept where the array itself is not needed."""
    key = (array.shape, array.dtype)
    found = _metas.get(key)
    if found is None:
        if len(_metas) > 4096:  # a bound, for programs that see endless new shapes
            _metas.clear()
        found = _metas[key] = Meta(array.shape, array.dtype)
    return found


_node_classes: dict[str, type] = {}


def node_class(name: str) -> type:
    """The ``OpNode`` subclass called ``name`` (so ``type(grad_fn).__name__`` matches)."""
    cls = _node_classes.get(name)
    if cls is None:
        # torch's saved names as properties of the class, not a __getattr__ on every
        # node: CPython then specialises the reads of a node's own fields
        cls = type(name, (OpNode,), {"__slots__": (), **saved_attributes(name)})
        _node_classes[name] = cls
    return cls


#: op -> its node class, for ops whose PyTorch name does not depend on the call
class_of_op: dict[OpDef, type] = {}


def find_node_class(op: OpDef, attrs: dict, saved: list) -> type:
    """The node class for one call of ``op``, named as PyTorch names it."""
    cls = class_of_op.get(op)
    if cls is None:
        cls = node_class(op.grad_fn_name(attrs, [shape_of(s) for s in saved]))
        if not callable(op.backward_name):  # the name does not depend on the call
            class_of_op[op] = cls
    return cls


class AccumulateGrad(Node):
    """The node behind a leaf that requires grad: adds the incoming gradient to ``.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable) -> None:
        Node.__init__(self, ())
        self.variable = variable

    def apply(self, grad_outputs: list, create_graph: bool) -> list:
        return []  # the engine accumulates, after the whole pass succeeded


# ----------------------------------------------------------------------------------
# Views and in-place writes into them (PyTorch's view + rebase)
# ----------------------------------------------------------------------------------
OVERLAPPING_WRITE = (
    "unsupported operation: more than one element of the written-to tensor "
    "refers to a single memory location. Please clone() the tensor before "
    "performing the operation."
)


def has_internal_overlap(data: np.ndarray) -> bool:
    """Several elements in one memory location: an ``expand``-ed dimension."""
    return any(stride == 0 and size > 1 for stride, size in zip(data.strides, data.shape))


def memory_owner(data: np.ndarray) -> np.ndarray:
    """The array that owns ``data``'s memory (the end of its chain of numpy bases)."""
    while isinstance(data.base, np.ndarray):
        data = data.base
    return data


def writable(data: np.ndarray) -> np.ndarray:
    """A writable alias of a read-only numpy view (numpy's broadcast_to) of writable memory."""
    if data.flags.writeable:
        return data
    owner = memory_owner(data)
    offset = data.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
    return np.ndarray(data.shape, data.dtype, buffer=owner, offset=offset, strides=data.strides)


# A view remembers its *chain*: the view ops, with their attrs and the metadata of
# their input, that take its base's array to its own.  Both nodes below replay it.


def memory_order(data: np.ndarray) -> tuple:
    """The axes of ``data`` from the slowest-changing in memory to the fastest."""
    return tuple(sorted(range(data.ndim), key=lambda axis: -abs(data.strides[axis])))


def copy_in_order(data: np.ndarray, order: tuple) -> np.ndarray:
    """A fresh copy of ``data`` laid out in memory in axis ``order``.

    A view chain replayed on it is then made of views exactly where it was on the base
    (``a.t().view(-1)`` of a column-major base is a view; of a C-ordered copy, a copy).
    """
    inverse = tuple(np.argsort(order))
    return np.array(np.transpose(data, order), order="C").transpose(inverse)


def replay_view(value, chain: tuple):
    """Apply a view chain to ``value`` (an array: a writable numpy view; a tensor: views)."""
    for op, attrs, _ in chain:
        value = op.dispatch(value, **attrs)
    return value


class AsStridedBackward0(Node):
    """The history of a view whose base was changed in place after the view was made.

    The view's own node is stale then (it points at the base's old history); PyTorch
    regenerates it as one node over the base's current history, and so do we.  Its
    backward runs the VJPs of the chain's view ops, last first.
    """

    __slots__ = ("chain",)

    def __init__(self, base_edge: tuple, chain: tuple) -> None:
        Node.__init__(self, (base_edge,))
        self.chain = chain

    def apply(self, grad_outputs: list, create_graph: bool) -> list:
        g = grad_outputs[0]
        for op, attrs, source in reversed(self.chain):
            g = op.pullback(g, [source], None, attrs, (True,))[0]
        return [g]


class CopySlices(Node):
    """The new history of a base after an in-place op wrote into one of its views.

    ``fn`` is the in-place op's own node, recorded on the view; its first input (the
    view's old value) is a window of the base's old value, so its gradient is written
    back into that window of the base's gradient, and the rest of the base's gradient
    passes through unchanged (the write did not touch it).  ``fn``'s other inputs get
    their gradients as usual.
    """

    __slots__ = ("chain", "fn", "order")

    def __init__(self, base_edge: tuple, chain: tuple, fn: Node, order: tuple) -> None:
        Node.__init__(self, (base_edge,) + tuple(fn.next_functions[1:]))
        self.chain = chain
        self.fn = fn
        self.order = order  # the base's memory layout, which the chain's views rely on

    def apply(self, grad_outputs: list, create_graph: bool) -> list:
        g = grad_outputs[0]
        if create_graph:
            # the backward is recorded: work on tensors
            whole = g.clone() if isinstance(g, tensor_class) else as_tensor(np.array(g))
            whole._data = copy_in_order(whole._data, self.order)  # a fresh tensor: safe
        else:
            whole = copy_in_order(np.asarray(g), self.order)
        window = replay_view(whole, self.chain)
        if has_internal_overlap(window._data if create_graph else window):
            raise RuntimeError(OVERLAPPING_WRITE)  # the write went into an expanded view
        grads = self.fn.apply([window.clone() if create_graph else window.copy()], create_graph)
        if self.next_functions[0][0] is None:
            return [None] + list(grads[1:])
        part = grads[0] if grads[0] is not None else 0.0  # e.g. a rule with no partial
        if create_graph:
            window.copy_(part)
        else:
            np.copyto(writable(window), part)
        return [whole] + list(grads[1:])

    @property
    def freed(self) -> bool:
        return self.fn.freed

    def release(self) -> None:
        self._released = True
        self.fn.release()
