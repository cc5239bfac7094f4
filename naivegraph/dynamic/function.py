"""Custom differentiable functions: subclass ``ng.autograd.Function``.

>>> import naivegraph as ng
>>> class Square(ng.autograd.Function):
...     @staticmethod
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         return x * x
...     @staticmethod
...     def backward(ctx, grad):
...         (x,) = ctx.saved_tensors
...         return 2 * x * grad
>>> x = ng.tensor(3.0, requires_grad=True)
>>> y = Square.apply(x)
>>> y.grad_fn.name()
'SquareBackward'
>>> y.backward(); x.grad
tensor(6.)
"""

from __future__ import annotations

from typing import Any

from .anomaly_mode import mode as anomaly
from .anomaly_mode import record_creation
from .grad_mode import _state, no_grad
from .node import SECOND_BACKWARD, Node, SavedTensor
from .tensor import Tensor


class FunctionCtx:
    """The ``ctx`` of a custom Function: what forward leaves for backward."""

    def __init__(self, args: tuple) -> None:
        self._saved: list[SavedTensor | None] = []
        self._freed = False
        self.dirty: tuple = ()
        self.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)

    def save_for_backward(self, *tensors) -> None:
        """Keep tensors for backward; in-place changes to them are detected."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    "save_for_backward can only save tensors (or None), but argument "
                    f"is of type {type(t).__name__}; store other values on ctx directly"
                )
        self._saved = [SavedTensor(t) if t is not None else None for t in tensors]

    @property
    def saved_tensors(self) -> tuple:
        if self._freed:
            raise RuntimeError(SECOND_BACKWARD)
        return tuple(None if s is None else s.unpack() for s in self._saved)

    def mark_dirty(self, *tensors) -> None:
        """Declare that forward changed these inputs in place."""
        self.dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        self.non_differentiable = tensors


class BackwardCFunction(Node):
    """The grad_fn of a custom Function's outputs (named ``<Function>Backward``)."""

    __slots__ = ("ctx", "function", "num_outputs", "shapes")

    def apply(self, grad_outputs: list, create_graph: bool) -> list:
        grads = [
            g if isinstance(g, Tensor) or g is None else Tensor._make(g, False, None, 0)
            for g in grad_outputs
        ]
        result = self.function.backward(self.ctx, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        if len(result) != len(self.next_functions):
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients (expected "
                f"{len(self.next_functions)}, got {len(result)}): return one per forward input, "
                "None for inputs that are not tensors"
            )
        out = []
        for g, shape in zip(result, self.shapes):
            if g is None:
                out.append(None)
                continue
            if not isinstance(g, Tensor):
                raise TypeError(
                    f"{self.name()}.backward must return Tensors or None, got {type(g).__name__}"
                )
            if shape is not None and g.shape != shape:
                raise RuntimeError(
                    f"Function {self.name()} returned an invalid gradient - got "
                    f"shape {g.shape} but expected shape {shape}"
                )
            out.append(g if create_graph else g._data)
        return out

    def release(self) -> None:
        self._released = True
        if self.ctx._saved:
            self.ctx._freed = True


_classes: dict[type, type] = {}


def _node_class(function: type) -> type:
    cls = _classes.get(function)
    if cls is None:
        cls = type(f"{function.__name__}Backward", (BackwardCFunction,), {"__slots__": ()})
        _classes[function] = cls
    return cls


class Function:
    """Base class of custom ops: write ``forward(ctx, ...)`` and ``backward(ctx, ...)``."""

    @staticmethod
    def forward(ctx: FunctionCtx, *args: Any) -> Any:  # pragma: no cover - user defined
        raise NotImplementedError("a Function subclass must define forward(ctx, ...)")

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Any) -> Any:  # pragma: no cover - user defined
        raise NotImplementedError("a Function subclass must define backward(ctx, ...)")

    @classmethod
    def apply(cls, *args: Any) -> Any:
        ctx = FunctionCtx(args)
        with no_grad():
            outputs = cls.forward(ctx, *args)
        single = not isinstance(outputs, tuple)
        outputs_t = (outputs,) if single else outputs
        record = _state.enabled and any(ctx.needs_input_grad)
        if record:
            _attach(cls, ctx, args, outputs_t)
        return outputs if single else outputs_t


def _attach(cls: type, ctx: FunctionCtx, args: tuple, outputs: tuple) -> None:
    for t in ctx.dirty:
        t._check_inplace("mark_dirty")
        if t._base is not None and (t._base._requires_grad or t._requires_grad):
            raise RuntimeError(
                "a custom Function changed a view in place (mark_dirty): "
                "naivegraph cannot rewrite its base's history through a custom "
                "Function; pass the base itself, or a .clone() of the view"
            )
        t._counter().value += 1
    node = _node_class(cls).__new__(_node_class(cls))
    Node.__init__(node, tuple(a._edge() if isinstance(a, Tensor) else (None, 0) for a in args))
    node.ctx = ctx
    node.function = cls
    node.num_outputs = len(outputs)
    node.shapes = tuple(a.shape if isinstance(a, Tensor) else None for a in args)
    if anomaly.enabled:
        record_creation(node)
    skip = {id(t) for t in getattr(ctx, "non_differentiable", ())}
    for i, out in enumerate(outputs):
        if isinstance(out, Tensor) and id(out) not in skip and out.dtype.kind in "fc":
            if any(out is a for a in args) and not any(out is d for d in ctx.dirty):
                raise RuntimeError(
                    "a custom Function returned an input unchanged; return "
                    "x.clone() or mark_dirty(x) if you changed it in place"
                )
            out._requires_grad = True
            out.grad_fn = node
            out._output_nr = i
