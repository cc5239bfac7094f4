"""The op table: one entry per primitive, shared by dynamic and static mode.

An entry holds a numpy ``forward`` and, for each input, a *partial VJP*: a function
``(g, *inputs, out, **attrs) -> gradient for that input``.  Partials are written with
the library's own operators and the dispatching functions of :mod:`naivegraph.ops`
(``ops.exp``, ``ops.expand``, ...), never with ``np.*`` directly, so the same rule runs

* on numpy arrays: the fast path of a plain ``backward()``;
* on dynamic tensors: ``create_graph=True`` builds a graph of the backward pass;
* on static nodes: ``ns.gradients`` adds the backward pass to the graph symbolically.

Inputs (and the output) that a rule does not list in ``saves`` reach it as a
:class:`Meta` that only knows ``shape`` and ``dtype``: what is not saved cannot be
read, which is what makes in-place checks and memory release exact.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

Partial = Callable[..., Any]

#: name -> OpDef.  Filled by the ``defop`` calls in the sibling modules.
OPS: dict[str, "OpDef"] = {}


class Meta:
    """Shape and dtype of a value that a VJP rule did not ask to keep."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple, dtype=np.float64) -> None:
        self.shape = shape
        self.dtype = dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"Meta(shape={self.shape}, dtype={np.dtype(self.dtype).name})"


class ScalarShape(tuple):
    """The shape ``()`` of a Python number operand (``2 - x``), told apart from a 0-d
    tensor's so that backward names can follow PyTorch (``RsubBackward1``)."""

    __slots__ = ()


SCALAR_SHAPE = ScalarShape()


@dataclass(frozen=True, eq=False)
class OpDef:
    """One primitive: numpy forward, partial VJPs, and what backward must keep."""

    name: str
    forward: Callable[..., np.ndarray]
    partials: tuple[Partial | None, ...] | None  # one per input; None = no gradient
    backward_name: str | Callable[[dict, Sequence[tuple]], str]  # PyTorch's grad_fn name
    saves: frozenset = frozenset()  # input positions and/or "out"
    elementwise: bool = False  # broadcasting op: gradients are summed back to shape
    differentiable: bool = True
    variadic: bool = False  # takes a list of tensors (cat, stack)
    commutative: bool = False  # operand order does not matter (drawings label it otherwise)
    vjp_all: Callable[..., Sequence[Any]] | None = None  # variadic rule: all grads at once
    doc: str = ""
    attrs_doc: dict = field(default_factory=dict)

    def grad_fn_name(self, attrs: dict, shapes: Sequence[tuple]) -> str:
        """PyTorch's name for this op's backward node (some depend on attrs/shapes)."""
        name = self.backward_name
        return name(attrs, shapes) if callable(name) else name

    def saves_input(self, i: int) -> bool:
        return i in self.saves

    @property
    def saves_out(self) -> bool:
        return "out" in self.saves

    def pullback(self, g, inputs: Sequence, out, attrs: dict, needs: Sequence[bool],
                 shapes: Sequence[tuple] | None = None) -> list:
        """Gradients for every input (None where not needed), summed back to shape.

        ``inputs``/``out`` are values or :class:`Meta`; ``g`` is the output gradient.
        The types decide where the arithmetic happens (numpy, dynamic, static).
        ``shapes`` defaults to the inputs' own shapes.
        """
        if self.vjp_all is not None:
            grads = list(self.vjp_all(g, list(inputs), out, needs, **attrs))
        else:
            grads = [None] * len(needs)
            for i, (partial, need) in enumerate(zip(self.partials, needs)):
                if need and partial is not None:
                    grads[i] = partial(g, *inputs, out, **attrs)
        if self.elementwise:
            for i, gi in enumerate(grads):
                if gi is not None:
                    shape = inputs[i].shape if shapes is None else shapes[i]
                    if gi.shape != shape:
                        grads[i] = OPS["sum_to"].dispatch(gi, shape=tuple(shape))
        return grads

    def dispatch(self, *args, **attrs):
        """Run this op on whatever ``args`` are: arrays, tensors or static nodes."""
        return call(self, args, attrs)


_backend_by_type: dict[type, Callable | None] = {}


def _backend_of(args) -> Callable | None:
    found = None
    for a in args:
        kind = type(a)
        try:
            apply = _backend_by_type[kind]
        except KeyError:  # first time this type is seen: ask the class once
            apply = _backend_by_type[kind] = getattr(kind, "_ng_apply", None)
        if apply is None and (kind is list or kind is tuple):
            apply = _backend_of(a)
        if apply is not None:
            if found is not None and apply is not found:
                raise mixed_modes_error(args)
            found = apply
    return found


def mixed_modes_error(args) -> TypeError:
    """Operands of two backends (a dynamic tensor and a static node): they cannot mix."""
    kinds = " and ".join(dict.fromkeys(type(a).__name__ for a in args if hasattr(a, "_ng_apply")))
    return TypeError(
        f"dynamic tensors and static graph nodes do not mix (got {kinds}): a static node has "
        f"no value until its graph runs, a tensor has one now. Bring a tensor's values into "
        f"the graph explicitly with ns.constant(t.numpy()), or use dynamic ops throughout")


def call(op: OpDef, args: tuple, attrs: dict):
    """Dispatch ``op`` to the backend that owns one of ``args``, else numpy.

    A backend is any class with a ``_ng_apply(op, args, attrs)`` static method: the
    dynamic ``Tensor`` and the static ``Node`` register themselves that way, so this
    module never imports them.
    """
    apply = _backend_of(args)
    if apply is not None:
        return apply(op, args, attrs)
    return op.forward(*args, **attrs)


def defop(name: str, forward: Callable, partials: Sequence[Partial | None] | None = None, *,
          backward: str | Callable[[dict, Sequence[tuple]], str] | None = None, saves: Sequence = (),
          elementwise: bool = False, differentiable: bool = True, variadic: bool = False,
          commutative: bool = False, vjp_all: Callable | None = None, doc: str = "") -> OpDef:
    """Add one primitive to the table and return it.

    >>> import numpy as np
    >>> from naivegraph.ops import OPS
    >>> OPS["mul"].forward(np.array(2.0), np.array(3.0))
    6.0
    """
    if name in OPS:
        raise ValueError(f"op {name!r} is defined twice; every op has exactly one entry")
    if backward is None:
        backward = "".join(part.capitalize() for part in name.split("_")) + "Backward0"
    op = OpDef(
        name=name,
        forward=forward,
        partials=tuple(partials) if partials is not None else None,
        backward_name=backward,
        saves=frozenset(saves),
        elementwise=elementwise,
        differentiable=differentiable and (partials is not None or vjp_all is not None),
        variadic=variadic,
        commutative=commutative,
        vjp_all=vjp_all,
        doc=doc or (forward.__doc__ or ""),
    )
    OPS[name] = op
    return op


def op_function(name: str) -> Callable:
    """A module-level function ``f(*args, **attrs)`` that dispatches op ``name``."""
    op = OPS[name]

    def function(*args, **attrs):
        return call(op, args, attrs)

    function.__name__ = name
    function.__qualname__ = name
    function.__doc__ = op.doc
    return function
