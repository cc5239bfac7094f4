"""Custom differentiable functions: subclass ``ng.autograd.Function``.

Two ways to write one, as in PyTorch 2.  The classic way: ``forward(ctx, ...)``
saves what backward needs on ``ctx``:

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

The newer way: ``forward`` takes only the inputs, and ``setup_context(ctx, inputs,
output)`` fills ``ctx`` afterwards (``forward`` is then a plain function of tensors):

>>> class Cube(ng.autograd.Function):
...     @staticmethod
...     def forward(x):
...         return x ** 3
...     @staticmethod
...     def setup_context(ctx, inputs, output):
...         (x,) = inputs
...         ctx.save_for_backward(x)
...     @staticmethod
...     def backward(ctx, grad):
...         (x,) = ctx.saved_tensors
...         return 3 * x ** 2 * grad
>>> x = ng.tensor(2.0, requires_grad=True)
>>> Cube.apply(x).backward(); x.grad
tensor(12.)
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from . import forward as _forward
from . import saved
from .anomaly_mode import mode as anomaly
from .anomaly_mode import record_creation
from .grad_mode import _state, no_grad
from .node import SECOND_BACKWARD, Node, SavedTensor
from .tensor import Tensor

NO_BACKWARD = (
    "You must implement either the backward or vjp method for your custom "
    "autograd.Function to use it with backward mode AD."
)
NO_FORWARD = "You must implement the forward function for custom autograd.Function."
NO_JVP = (
    "You must implement the jvp function for custom autograd.Function to use it with "
    "forward mode AD."
)
ONCE_DIFFERENTIABLE = (
    "trying to differentiate twice a function that was marked with @once_differentiable"
)


class FunctionCtx:
    """The ``ctx`` of a custom Function: what forward leaves for backward."""

    def __init__(self, args: tuple) -> None:
        self._saved: list[SavedTensor | saved.PackedTensor | None] = []
        self._saved_for_forward: tuple = ()
        self._in_jvp = False  # saved_tensors reads save_for_forward's tensors in jvp
        self._freed = False
        self.dirty: tuple = ()
        self.non_differentiable: tuple = ()
        self.materialize_grads = True
        self.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)

    def save_for_backward(self, *tensors) -> None:
        """Keep tensors for backward; in-place changes to them are detected.

        Under :func:`ng.autograd.graph.saved_tensors_hooks` each tensor is packed now
        and unpacked when backward reads ``saved_tensors``, as in torch.
        """
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    "save_for_backward can only save tensors (or None), but argument "
                    f"is of type {type(t).__name__}; store other values on ctx directly"
                )
        self._saved = [None if t is None else saved.save(t) for t in tensors]

    def save_for_forward(self, *tensors) -> None:
        """Keep tensors for ``jvp`` (forward mode), where ``ctx.saved_tensors`` reads them."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    "save_for_forward expects all arguments to be tensors or None, but got "
                    f"{type(t).__name__}; store other values on ctx directly"
                )
        self._saved_for_forward = tensors

    @property
    def saved_tensors(self) -> tuple:
        if self._in_jvp:
            return self._saved_for_forward
        if self._freed:
            raise RuntimeError(SECOND_BACKWARD)
        return tuple(None if s is None else s.unpack() for s in self._saved)

    def mark_dirty(self, *tensors) -> None:
        """Declare that forward changed these inputs in place."""
        self.dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """These outputs get no gradient (indices, masks): they do not require grad, and
        backward receives zeros (or None, see ``set_materialize_grads``) for them."""
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """``False``: backward receives None, not a tensor of zeros, for an output that no
        gradient reached (saves the zeros when backward can skip that output)."""
        self.materialize_grads = bool(value)


class BackwardCFunction(Node):
    """The grad_fn of a custom Function's outputs (named ``<Function>Backward``).

    As in torch, the node answers for its ``ctx``: ``y.grad_fn.saved_tensors``,
    ``y.grad_fn.needs_input_grad`` and whatever forward stored on ``ctx``.
    """

    __slots__ = ("ctx", "function", "num_outputs", "shapes", "outputs_meta")

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup failed: slots and methods are unaffected.
        if name != "ctx" and not name.startswith("__"):
            try:
                return getattr(self.ctx, name)
            except AttributeError:
                pass
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def apply(self, grad_outputs: list, create_graph: bool) -> list:
        grads = [self._grad_output(g, i) for i, g in enumerate(grad_outputs)]
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
            if not isinstance(g, Tensor):  # torch's RuntimeError and phrase
                raise RuntimeError(
                    f"expected Variable or None (got {type(g).__name__}): {self.name()}'s "
                    "backward returns one gradient tensor (or None) per forward input, "
                    "as a tuple when there are several"
                )
            if shape is not None and g.shape != shape:
                raise RuntimeError(
                    f"Function {self.name()} returned an invalid gradient - got "
                    f"shape {g.shape} but expected shape {shape}"
                )
            out.append(g if create_graph else g._data)
        return out

    def _grad_output(self, g, i: int):
        """The gradient of output ``i`` as backward receives it: a tensor, or zeros of the
        output's shape and dtype where none arrived (None if materializing is off)."""
        if isinstance(g, Tensor):
            return g
        if g is not None:
            return Tensor._make(g, False, None, 0)
        meta = self.outputs_meta[i]
        if not self.ctx.materialize_grads or meta is None:
            return None
        return Tensor._make(np.zeros(meta[0], meta[1]), False, None, 0)

    def release(self) -> None:
        self._released = True
        if self.ctx._saved:
            self.ctx._freed = True
            self.ctx._saved = []


_classes: dict[type, type] = {}


def _node_class(function: type) -> type:
    cls = _classes.get(function)
    if cls is None:
        cls = type(f"{function.__name__}Backward", (BackwardCFunction,), {"__slots__": ()})
        _classes[function] = cls
    return cls


class Function:
    """Base class of custom ops: write ``forward`` and ``backward`` (and optionally
    ``setup_context``), then call ``MyFunction.apply(...)``."""

    @staticmethod
    def forward(*args: Any) -> Any:
        raise NotImplementedError(NO_FORWARD)

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Any) -> Any:
        """Fill ``ctx`` from the inputs and the output of a ``forward`` without ``ctx``."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Any) -> Any:
        raise NotImplementedError(NO_BACKWARD)

    @staticmethod
    def jvp(ctx: FunctionCtx, *tangents: Any) -> Any:
        """Forward mode: the outputs' tangents from the inputs' (zeros for a tensor input
        without one, None for other arguments); ``ctx.saved_tensors`` holds what forward
        gave ``ctx.save_for_forward``."""
        raise NotImplementedError(NO_JVP)

    @classmethod
    def apply(cls, *args: Any) -> Any:
        ctx = FunctionCtx(args)
        tangents = _tangents_of(args)
        # what forward computes is not recorded (backward replaces it), nor carries
        # tangents (jvp gives them)
        with no_grad(), _forward.paused():
            if _has_setup_context(cls):
                outputs = cls.forward(*args)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args)
        single = not isinstance(outputs, tuple)
        outputs_t = (outputs,) if single else outputs
        record = _state.enabled and any(ctx.needs_input_grad)
        if record:
            _attach(cls, ctx, args, outputs_t)
        if tangents is not None:
            _give_tangents(cls, ctx, args, outputs_t, tangents)
        return outputs if single else outputs_t


def _tangents_of(args: tuple) -> list | None:
    """The tangents of the arguments in the active dual level; None if none has one."""
    if not _forward.dual.active:
        return None
    found = [_forward.tangent_of(a) if isinstance(a, Tensor) else None for a in args]
    return found if any(t is not None for t in found) else None


def _give_tangents(cls: type, ctx: FunctionCtx, args: tuple, outputs: tuple, found: list) -> None:
    """Forward mode through a custom Function: its ``jvp``, as torch (which refuses a
    Function without one rather than guess the tangent from forward's insides)."""
    tangents = [
        t
        if t is not None or not isinstance(a, Tensor)
        else Tensor._make(np.zeros_like(a._data), False, None, 0)
        for a, t in zip(args, found)
    ]
    ctx._in_jvp = True
    try:
        with _forward.paused():
            result = cls.jvp(ctx, *tangents)
    finally:
        ctx._in_jvp = False
    result = result if isinstance(result, tuple) else (result,)
    if len(result) != len(outputs):
        raise RuntimeError(
            f"{cls.__name__}.jvp returned {len(result)} tangents for {len(outputs)} outputs; "
            "return one per output of forward"
        )
    for out, tangent in zip(outputs, result):
        if isinstance(out, Tensor) and isinstance(tangent, Tensor) and out.dtype.kind in "fc":
            if tangent.shape != out.shape:
                raise RuntimeError(
                    f"{cls.__name__}.jvp returned a tangent of shape {tangent.shape} for an "
                    f"output of shape {out.shape}; a tangent has its output's shape"
                )
            _forward.set_tangent(out, tangent)


def _has_setup_context(cls: type) -> bool:
    """A Function written the PyTorch 2 way: ``forward`` without ``ctx``."""
    return getattr(cls.setup_context, "__func__", cls.setup_context) is not getattr(
        Function.setup_context, "__func__", Function.setup_context
    )


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
    node.outputs_meta = tuple(
        (out.shape, out.dtype) if isinstance(out, Tensor) else None for out in outputs
    )
    if anomaly.enabled:
        record_creation(node)
    skip = {id(t) for t in ctx.non_differentiable}
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


# ----------------------------------------------------------------------------------
# once_differentiable
# ----------------------------------------------------------------------------------
class Error(Node):
    """The grad_fn of what a ``@once_differentiable`` backward returned under
    ``create_graph``: differentiating through it raises (torch's ``DelayedError``)."""

    __slots__ = ("message", "num_outputs")

    def __init__(self, message: str, num_outputs: int) -> None:
        Node.__init__(self, ())
        self.message = message
        self.num_outputs = num_outputs

    def apply(self, grad_outputs: list, create_graph: bool) -> list:
        raise RuntimeError(self.message)


def once_differentiable(backward: Callable) -> Callable:
    """Decorate a ``backward`` that cannot itself be differentiated (it leaves autograd,
    e.g. through numpy): it runs under ``no_grad``, and a double backward through what
    it returned raises instead of silently giving a wrong second derivative.

    >>> import naivegraph as ng
    >>> from naivegraph.autograd.function import Function, once_differentiable
    >>> class Double(Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         return x * 2
    ...     @staticmethod
    ...     @once_differentiable
    ...     def backward(ctx, grad):
    ...         return ng.tensor(grad.numpy() * 2)
    >>> x = ng.tensor(1.0, requires_grad=True)
    >>> Double.apply(x).backward(); x.grad
    tensor(2.)
    """

    @functools.wraps(backward)
    def wrapper(ctx: Any, *grads: Any) -> Any:
        with no_grad():
            outputs = backward(ctx, *grads)
        if not _state.enabled or not any(isinstance(g, Tensor) and g.requires_grad for g in grads):
            return outputs  # no double backward can reach this backward
        single = not isinstance(outputs, tuple)
        outputs_t = (outputs,) if single else outputs
        error = Error(ONCE_DIFFERENTIABLE, len(outputs_t))
        marked = tuple(
            Tensor._make(out._data, True, error, i) if isinstance(out, Tensor) else out
            for i, out in enumerate(outputs_t)
        )
        return marked[0] if single else marked

    return wrapper
