"""Module hooks as torch runs them: forward pre-hooks, forward hooks and full backward
hooks (``Module.register_forward_pre_hook`` / ``register_forward_hook`` /
``register_full_backward_hook``).

A full backward hook needs the gradients with respect to the module's inputs and
outputs.  As in torch, the call routes its tensor inputs and outputs through an identity
function (``BackwardHookFunctionBackward`` in the graph): the outputs' node records the
gradients arriving from above, the inputs' node calls the hooks with both and passes on
what they return.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from typing import Any, Callable

from ..dynamic.function import Function, _node_class
from ..dynamic.grad_mode import is_grad_enabled
from ..dynamic.node import RemovableHandle
from ..dynamic.tensor import Tensor


class HookTable(OrderedDict):
    """Hooks by handle id, in calling order; a handle refers to it weakly."""

    def add(self, hook: Callable, prepend: bool = False, **options) -> RemovableHandle:
        if not callable(hook):
            raise TypeError(f"a hook must be callable, got {type(hook).__name__}")
        handle = RemovableHandle(self)
        self[handle.id] = (hook, options)
        if prepend:
            self.move_to_end(handle.id, last=False)
        return handle


def _alias(x: Tensor) -> Tensor:
    """A new tensor on the same values (the identity's output)."""
    return Tensor._make(x._data, False, None, 0)


#: the callback of the BackwardHookFunction being applied (not an argument: the node
#: has one edge per tensor, as torch's)
_callbacks: list = []


class BackwardHookFunction(Function):
    """The identity on tensors; its backward hands the gradients to ``ctx.on_backward``,
    which may replace them."""

    @staticmethod
    def forward(ctx, *tensors):
        ctx.on_backward = _callbacks.pop()
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        outputs = tuple(_alias(t) for t in tensors)
        return outputs if len(outputs) > 1 else outputs[0]

    @staticmethod
    def backward(ctx, *grads):
        return ctx.on_backward(grads)


def _routed(on_backward: Callable, tensors: list) -> tuple:
    _callbacks.append(on_backward)
    out = BackwardHookFunction.apply(*tensors)
    return out if isinstance(out, tuple) else (out,)


_node_class(BackwardHookFunction).__name__ = "BackwardHookFunctionBackward"


class BackwardHook:
    """One call's routing of gradients to a module's full backward hooks."""

    def __init__(self, module, hooks: HookTable) -> None:
        self.module, self.hooks = module, hooks
        self.grad_outputs: tuple | None = None
        self.positions: list[int] = []  # where the tensor inputs are among the arguments
        self.arguments = 0
        self.inputs_routed = False

    def setup_input(self, args: tuple) -> tuple:
        self.arguments = len(args)
        self.positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in self.positions]
        if not (is_grad_enabled() and any(t.requires_grad for t in tensors)):
            return args
        self.inputs_routed = True
        routed = _routed(self._input_grads, tensors)
        new = list(args)
        for i, t, original in zip(self.positions, routed, tensors):
            if original.requires_grad:  # the others stay: their gradient is zero
                new[i] = t
        return tuple(new)

    def setup_output(self, out: Any) -> Any:
        single = isinstance(out, Tensor)
        tensors = (
            [out]
            if single
            else [o for o in out if isinstance(o, Tensor)]
            if isinstance(out, tuple)
            else []
        )
        if not (is_grad_enabled() and any(t.requires_grad for t in tensors)):
            return out
        routed = _routed(self._output_grads, tensors)
        if single:
            return routed[0]
        replaced = iter(routed)
        return tuple(next(replaced) if isinstance(o, Tensor) else o for o in out)

    def _output_grads(self, grads: tuple) -> tuple:
        self.grad_outputs = grads
        if not self.inputs_routed:  # nothing below needs a gradient: the hooks fire here
            warnings.warn(
                "Full backward hook is firing when gradients are computed with respect to "
                "module outputs since no inputs require gradients.",
                UserWarning,
                stacklevel=2,
            )
            self._run((None,) * self.arguments)
        return grads

    def _input_grads(self, grads: tuple) -> tuple:
        by_position: list = [None] * self.arguments
        for i, g in zip(self.positions, grads):
            by_position[i] = g
        result = self._run(tuple(by_position))
        return tuple(result[i] for i in self.positions)

    def _run(self, grad_input: tuple) -> tuple:
        for hook, _ in list(self.hooks.values()):
            returned = hook(self.module, grad_input, self.grad_outputs)
            if returned is None:
                continue
            returned = tuple(returned) if isinstance(returned, (tuple, list)) else (returned,)
            if len(returned) != len(grad_input):
                raise RuntimeError(
                    f"Backward hook returned an invalid number of grad_input, got "
                    f"{len(returned)}, but expected {len(grad_input)}"
                )
            grad_input = returned
        return grad_input


def call_with_hooks(module, args: tuple, kwargs: dict) -> Any:
    """``module(*args, **kwargs)`` with its hooks, in torch's order: pre-hooks (each may
    replace the arguments), the backward routing of the inputs, ``forward``, forward hooks
    (each may replace the output), the backward routing of the output."""
    for hook, options in list(module._forward_pre_hooks.values()):
        if options.get("with_kwargs"):
            returned = hook(module, args, kwargs)
            if returned is not None:
                if not (isinstance(returned, tuple) and len(returned) == 2):
                    raise RuntimeError(
                        "forward pre-hook must return None or a tuple of (new_args, "
                        f"new_kwargs), but got {returned}."
                    )
                args, kwargs = returned
        else:
            returned = hook(module, args)
            if returned is not None:
                args = returned if isinstance(returned, tuple) else (returned,)
    backward = None
    if module._backward_hooks:
        backward = BackwardHook(module, module._backward_hooks)
        args = backward.setup_input(args)
    out = module.forward(*args, **kwargs)
    for hook, options in list(module._forward_hooks.values()):
        if options.get("with_kwargs"):
            returned = hook(module, args, kwargs, out)
        else:
            returned = hook(module, args, out)
        if returned is not None:
            out = returned
    if backward is not None:
        out = backward.setup_output(out)
    return out
