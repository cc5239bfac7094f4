"""What backward keeps: ``grad_fn._saved_*`` and the hooks for saved tensors.

A node of the op table keeps its saved arrays in its own form (``OpNode.saved``,
``OpNode.saved_out``); torch's names for them (``_saved_self``, ``_saved_other``,
``_saved_result``, ``_saved_exponent`` ...) are computed here only when asked for, so
recording an op costs nothing more.

``saved_tensors_hooks(pack_hook, unpack_hook)`` changes where saved tensors live: while
it is active, every tensor an op (or a custom Function) saves is handed to
``pack_hook`` and only what it returns is kept; backward calls ``unpack_hook`` on that
to get the tensor back.  The nodes made under hooks switch to a subclass (same name)
whose ``apply`` unpacks first, so nodes made without hooks run exactly as before.

>>> import naivegraph as ng
>>> a = ng.tensor([1.0, 2.0], requires_grad=True)
>>> b = ng.tensor([3.0, 4.0], requires_grad=True)
>>> y = a * b
>>> y.grad_fn._saved_self is a, y.grad_fn._saved_other is b
(True, True)
"""

from __future__ import annotations

import functools
import weakref
from typing import Any, Callable

import numpy as np

from . import node as nodes

# ----------------------------------------------------------------------------------
# torch's attribute names, per grad_fn name
# ----------------------------------------------------------------------------------
# A tensor attribute names an input position or "out"; a value attribute reads the
# node's attrs (``("attr", key)``) or an input's shape (``("sizes", position)``).
_SELF_OTHER = {"self": 0, "other": 1}
_RESULT = {"result": "out"}
_SELF = {"self": 0}

SAVED_NAMES: dict[str, dict[str, Any]] = {
    "MulBackward0": _SELF_OTHER,
    "DivBackward0": _SELF_OTHER,
    "MaximumBackward0": _SELF_OTHER,
    "MinimumBackward0": _SELF_OTHER,
    "PowBackward0": {"self": 0, "exponent": ("attr", "exponent")},
    "PowBackward1": {"self": 0, "exponent": 1, "result": "out"},
    "PowBackward2": {"self": ("attr", "base"), "exponent": 0, "result": "out"},
    "ExpBackward0": _RESULT,
    "TanhBackward0": _RESULT,
    "SigmoidBackward0": _RESULT,
    "ReluBackward0": _RESULT,
    "SqrtBackward0": _RESULT,
    "ReciprocalBackward0": _RESULT,
    "TanBackward0": _RESULT,
    "LogBackward0": _SELF,
    "SinBackward0": _SELF,
    "CosBackward0": _SELF,
    "AbsBackward0": _SELF,
    "MaxBackward1": {"self": 0, "result": "out"},
    "MinBackward1": {"self": 0, "result": "out"},
    "ClampBackward1": {"self": 0, "min": ("attr", "min"), "max": ("attr", "max")},
    "WhereBackward0": {"condition": 0},
    "SoftmaxBackward0": {"dim": ("attr", "dim"), "result": "out"},
    "LogSoftmaxBackward0": {"dim": ("attr", "dim"), "result": "out"},
    "MmBackward0": {"self": 0, "mat2": 1, "self_sym_sizes": ("sizes", 0)},
    "DotBackward0": {"self": 0, "tensor": 1},
    "MvBackward0": {"self": 0, "vec": 1},
    "AddBackward0": {"alpha": ("constant", 1)},
    "SubBackward0": {"alpha": ("constant", 1)},
    "SumBackward0": {"self_sym_sizes": ("sizes", 0)},
    "MeanBackward0": {"self_sym_sizes": ("sizes", 0)},
    "ViewBackward0": {"self_sym_sizes": ("sizes", 0)},
    "ExpandBackward0": {"self_sym_sizes": ("sizes", 0)},
}

RAW_PREFIX = "_raw_saved_"
PREFIX = "_saved_"


def attribute(node: nodes.OpNode, name: str) -> Any:
    """``node._saved_<x>`` or ``node._raw_saved_<x>``, as torch names them."""
    raw = name.startswith(RAW_PREFIX)
    key = name[len(RAW_PREFIX) :] if raw else name[len(PREFIX) :]
    where = SAVED_NAMES.get(node.name(), {}).get(key)
    if where is None or (raw and not _is_position(where)):
        raise AttributeError(f"'{node.name()}' object has no attribute '{name}'")
    if raw:
        return RawSavedTensor(node, where)
    if not _is_position(where):
        return _value(node, where)
    return _saved_tensor(node, where)


def _is_position(where: Any) -> bool:
    return where == "out" or isinstance(where, int)


def _value(node: nodes.OpNode, where: tuple) -> Any:
    kind, key = where
    if kind == "attr":
        return node.attrs.get(key)
    if kind == "sizes":
        return tuple(nodes.shape_of(node.saved[key]))
    return key  # a constant torch records, e.g. add's alpha


def _was_saved(node: nodes.OpNode, position) -> bool:
    """Whether this call of the op kept ``position`` (``x * 3`` keeps no copy of x)."""
    return position in node.op.saves_for(node.needs)


def _saved_tensor(node: nodes.OpNode, position) -> Any:
    """The tensor backward uses at ``position``; None if the op did not keep it."""
    if not _was_saved(node, position):
        return None
    if node._released:
        raise RuntimeError(nodes.SECOND_BACKWARD)
    packed = _packed.get(node)
    if packed is not None and position in packed:
        return packed[position].unpack()
    if position == "out":  # rebuilt on access: the node does not hold its output
        return nodes.tensor_class._make(node.saved_out, True, node, 0)
    source = node.saved_source(position)
    if source is not None:
        return source
    value = node.saved[position]  # a Python number operand, as torch wraps it
    dtype = np.float64 if isinstance(value, float) else None
    return nodes.as_tensor(np.asarray(value, dtype=dtype))


# ----------------------------------------------------------------------------------
# Hooks for saved tensors
# ----------------------------------------------------------------------------------
#: (pack_hook, unpack_hook) pairs of the active ``saved_tensors_hooks``, innermost last
hook_stack: list[tuple[Callable, Callable]] = []

#: node -> {position: PackedTensor}: what pack hooks returned for the nodes they saw
_packed: "weakref.WeakKeyDictionary[nodes.OpNode, dict]" = weakref.WeakKeyDictionary()

HOOKS_ALREADY_SET = (
    "Calling register_hooks on a saved tensor whose hooks have already been set. "
    "Hint: only one pair of hooks is allowed at a time."
)
HOOKS_AFTER_FREE = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
    "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you "
    "need to access saved variables after calling backward."
)


class PackedTensor:
    """What a pack hook returned, with the unpack hook that turns it back into a tensor."""

    __slots__ = ("packed", "unpack_hook")

    def __init__(self, tensor: Any, pack_hook: Callable, unpack_hook: Callable) -> None:
        self.packed = pack_hook(tensor)
        self.unpack_hook = unpack_hook

    def unpack(self) -> Any:
        value = self.unpack_hook(self.packed)
        if not nodes.is_tensor(value):
            raise TypeError(
                "Output of saved tensor unpack_hook expected to be a Tensor but got "
                f"result of type {type(value).__name__}"
            )
        return value


def save(tensor: Any) -> Any:
    """Keep ``tensor`` for a custom Function's backward: packed if hooks are active."""
    if hook_stack:
        return PackedTensor(tensor, *hook_stack[-1])
    return nodes.SavedTensor(tensor)


def pack_node(node: nodes.OpNode, result: Any) -> None:
    """Hand what ``node`` saved to the innermost pack hook; keep only what it returns."""
    if not node.sources:
        return
    pack_hook, unpack_hook = hook_stack[-1]
    for position, owner, _ in node.sources:
        if _was_saved(node, position):  # as torch counts it: the rest stays as it is
            tensor = result if position == "out" else owner
            _pack_position(node, position, tensor, pack_hook, unpack_hook)


def _pack_position(node: nodes.OpNode, position, tensor, pack: Callable, unpack: Callable) -> None:
    packed = _packed.get(node)
    if packed is None:
        packed = _packed[node] = {}
        node.__class__ = _hooked_class(type(node))
    packed[position] = PackedTensor(tensor, pack, unpack)
    # the node lets go of the original: only the packed form is kept now
    if position == "out":
        node.saved_out = nodes.meta_of(node.saved_out)
    else:
        node.saved[position] = nodes.meta_of(node.saved[position])
    node.sources = tuple(s for s in node.sources if s[0] != position)


_hooked_classes: dict[type, type] = {}


def _hooked_class(cls: type) -> type:
    """``cls`` with an ``apply`` that unpacks first; same name, so ``grad_fn`` reads alike."""
    hooked = _hooked_classes.get(cls)
    if hooked is None:
        body = {"__slots__": (), "apply": _apply_unpacked, "release": _release_packed}
        hooked = type(cls.__name__, (cls,), body)
        _hooked_classes[cls] = hooked
    return hooked


def _apply_unpacked(self: nodes.OpNode, grad_outputs: list, create_graph: bool) -> list:
    if self._released:
        raise RuntimeError(nodes.SECOND_BACKWARD)
    inputs, out = self.saved, self.saved_out
    if self.sources:  # positions packed by a raw saved tensor's hooks only
        self._check_versions()
        inputs, out = self._saved_as_tensors() if create_graph else (self._current_inputs(), out)
    inputs = list(inputs)
    for position, packed in _packed.get(self, {}).items():
        tensor = packed.unpack()
        value = tensor if create_graph else tensor._data
        if position == "out":
            out = value
        else:
            inputs[position] = value
    return self.grads_per_edge(
        self.op.pullback(grad_outputs[0], inputs, out, self.attrs, self.needs)
    )


def _release_packed(self: nodes.OpNode) -> None:
    _packed.pop(self, None)
    nodes.OpNode.release(self)


class saved_tensors_hooks:
    """Context manager: tensors saved for backward inside it go through ``pack_hook``
    when saved and ``unpack_hook`` when backward (or ``grad_fn._saved_*``) reads them.

    >>> import naivegraph as ng
    >>> seen = []
    >>> def pack(t):
    ...     seen.append(t.tolist())
    ...     return t
    >>> x = ng.tensor([1.0, 2.0], requires_grad=True)
    >>> with ng.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
    ...     y = x.exp()
    >>> seen
    [[2.7182819843292236, 7.3890557289123535]]
    """

    def __init__(self, pack_hook: Callable, unpack_hook: Callable) -> None:
        for role, hook in (("pack_hook", pack_hook), ("unpack_hook", unpack_hook)):
            if not callable(hook):
                raise TypeError(f"{role} must be callable, got {type(hook).__name__}")
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> "saved_tensors_hooks":
        hook_stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc: Any) -> None:
        hook_stack.pop()


class save_on_cpu(saved_tensors_hooks):
    """torch's hooks that move saved tensors to (pinned) CPU memory; naivegraph computes
    on the CPU already, so tensors are saved as they are."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        super().__init__(_identity, _identity)


def _identity(tensor: Any) -> Any:
    return tensor


class RawSavedTensor:
    """``grad_fn._raw_saved_<x>``: one saved slot, whose hooks can be set on their own.

    ``register_hooks(pack_hook, unpack_hook)`` packs the saved tensor now; backward then
    uses ``unpack_hook(packed)`` in its place.
    """

    __slots__ = ("node", "position")

    def __init__(self, node: nodes.OpNode, position) -> None:
        self.node = node
        self.position = position

    def register_hooks(self, pack_hook: Callable, unpack_hook: Callable) -> None:
        for role, hook in (("pack_hook", pack_hook), ("unpack_hook", unpack_hook)):
            if not callable(hook):
                raise TypeError(f"register_hooks(): {role} must be callable, got {hook!r}")
        node, position = self.node, self.position
        if node._released:
            raise RuntimeError(HOOKS_AFTER_FREE)
        if position in _packed.get(node, {}):
            raise RuntimeError(HOOKS_ALREADY_SET)
        if not _was_saved(node, position):
            raise RuntimeError(
                "Calling register_hooks on a saved tensor with value None is forbidden"
            )
        if not any(s[0] == position for s in node.sources):  # a Python number operand
            raise RuntimeError(
                "Calling register_hooks on a saved Python number: naivegraph keeps a "
                "number operand itself, not a tensor, so there is nothing to pack"
            )
        tensor = _saved_tensor(node, position)
        _pack_position(node, position, tensor, pack_hook, unpack_hook)

    def __repr__(self) -> str:
        return f"<SavedTensor object at {id(self):#x}>"


def properties(name: str) -> dict:
    """The ``_saved_<x>`` (and, for a tensor, ``_raw_saved_<x>``) properties of the node
    class called ``name``, each reading :func:`attribute` on access."""
    found = {}
    for key, where in SAVED_NAMES.get(name, {}).items():
        prefixes = (PREFIX, RAW_PREFIX) if _is_position(where) else (PREFIX,)
        for prefix in prefixes:
            found[prefix + key] = property(functools.partial(_read, prefix + key))
    return found


def _read(name: str, node: nodes.OpNode) -> Any:
    return attribute(node, name)


nodes.saved_attributes = properties
for _cls in nodes._node_classes.values():  # the classes made before this module was imported
    for _name, _property in properties(_cls.__name__).items():
        setattr(_cls, _name, _property)

__all__ = ["RawSavedTensor", "save_on_cpu", "saved_tensors_hooks"]
