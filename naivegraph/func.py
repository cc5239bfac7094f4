"""Function transforms with ``torch.func``'s names: ``grad``, ``vjp``, ``jvp``, ``jacrev``,
``jacfwd``, ``hessian``.

Each takes a function of tensors and returns a function (or values); every derivative
comes from the op table's rules, none is written again here:

* ``vjp`` and ``grad`` are one backward pass (``autograd.grad``);
* ``jvp`` is one forward pass in forward mode (a dual level, see
  :mod:`naivegraph.autograd.forward_ad`): the tangents ride along with the values;
* ``jacrev`` stacks one VJP per output element, ``jacfwd`` one JVP per input element;
  ``hessian`` is ``jacfwd(jacrev(f))`` (forward over reverse).

Results are built with ``create_graph=True``, so transforms nest.  There is one dual
level at a time, so a ``jvp`` inside another forward transform (``jacfwd(jacfwd(f))``)
uses the *transpose trick* instead: ``u -> J^T u`` is linear in ``u``, so differentiating
``<J^T u, t>`` with respect to ``u`` gives ``J t``: the same numbers, for two backward
passes instead of one forward pass.

>>> import naivegraph as ng
>>> f = lambda x: (x ** 3).sum()
>>> ng.func.grad(f)(ng.tensor([1.0, 2.0]))
tensor([ 3., 12.])
>>> out, tangent_out = ng.func.jvp(lambda x: x ** 3, (ng.tensor(2.0),), (ng.tensor(1.0),))
>>> float(out), float(tangent_out)
(8.0, 12.0)
>>> ng.func.hessian(f)(ng.tensor([1.0, 2.0]))
tensor([[ 6.,  0.],
        [ 0., 12.]])
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .dynamic import forward as _forward
from .dynamic.engine import grad as _autograd_grad
from .dynamic.factories import zeros_like
from .dynamic.functions import stack
from .dynamic.tensor import Tensor

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian"]


_depth = [0]  # how many transforms are running: only the outermost hands back plain results


def _outermost(transform: Callable) -> Callable:
    """``transform``, returning its tensors detached when it is the outermost transform
    and no argument required grad, as torch.func does (inner ones keep their graph so an
    outer transform can differentiate them)."""

    def run(*args: Any) -> Any:
        _depth[0] += 1
        try:
            result = transform(*args)
        finally:
            _depth[0] -= 1
        return _detached(result) if _depth[0] == 0 and not _requires_grad(args) else result

    return run


def _requires_grad(x: Any) -> bool:
    if isinstance(x, (tuple, list)):
        return any(_requires_grad(v) for v in x)
    return isinstance(x, Tensor) and x.requires_grad


def _detached(value: Any) -> Any:
    if isinstance(value, Tensor):
        return value.detach()
    if isinstance(value, tuple):
        return tuple(_detached(v) for v in value)
    return value


def _differentiable(x: Any, what: str) -> Tensor:
    """``x`` as a tensor the transform can differentiate: itself if it already requires
    grad (an outer transform's input, so transforms nest), else a fresh leaf."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{what} must be tensors, got {type(x).__name__}")
    if x.dtype.kind not in "fc":
        raise TypeError(f"{what} must be floating point tensors to differentiate, got {x.dtype}")
    if x.requires_grad:
        return x
    leaf = x.detach().requires_grad_(True)
    tangent = _forward.tangent_of(x)
    if tangent is not None:  # inside a forward transform: the leaf moves as x does
        _forward.set_tangent(leaf, tangent)
    return leaf


def _split_aux(result: Any, has_aux: bool, who: str) -> tuple[Any, Any]:
    if not has_aux:
        return result, None
    if not isinstance(result, tuple) or len(result) != 2:
        raise RuntimeError(f"{who}(f, has_aux=True): f must return a pair (output, aux)")
    return result


def _gradients(outputs, inputs: Sequence[Tensor], cotangents) -> list[Tensor]:
    """d<outputs, cotangents>/d inputs, zeros for an input the outputs do not use."""
    if not outputs.requires_grad:  # the outputs do not depend on any input at all
        return [zeros_like(x) for x in inputs]
    found = _autograd_grad(
        outputs, list(inputs), cotangents, retain_graph=True, create_graph=True, allow_unused=True
    )
    return [zeros_like(x) if g is None else g for g, x in zip(found, inputs)]


def _prepared(args: tuple, argnums: int | tuple, who: str) -> tuple[tuple[int, ...], list]:
    """The positions ``argnums`` names, and ``args`` with those made differentiable."""
    count = len(args)
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for n in nums:
        if not -count <= n < count:
            raise RuntimeError(
                f"Got argnums={argnums}, but the function was called with {count} positional "
                f"argument(s); argnums must be within range"
            )
    nums = tuple(n % count for n in nums)
    args_list = list(args)
    for n in nums:
        args_list[n] = _differentiable(args_list[n], f"{who}'s differentiated arguments")
    return nums, args_list


def _basis(k: int, like: Tensor) -> Tensor:
    """The ``k``-th unit tensor of ``like``'s shape and dtype (one Jacobian row/column)."""
    unit = np.zeros(like.numel(), dtype=like.dtype)
    unit[k] = 1.0
    return Tensor._make(unit.reshape(tuple(like.shape)), False, None, 0)


# ----------------------------------------------------------------------------- reverse
def vjp(func: Callable, *primals: Tensor, has_aux: bool = False) -> tuple:
    """``(func(*primals), vjp_fn)``; ``vjp_fn(cotangent)`` gives one gradient per primal."""
    inputs = [_differentiable(p, "vjp's primals") for p in primals]
    output, aux = _split_aux(func(*inputs), has_aux, "vjp")
    plain = _depth[0] == 0 and not _requires_grad(primals)  # as torch.func: no graph shown

    def vjp_fn(cotangent: Tensor) -> tuple:
        if tuple(cotangent.shape) != tuple(output.shape):
            raise RuntimeError(
                f"Mismatch in shape: the cotangent has shape {tuple(cotangent.shape)} but "
                f"the output has shape {tuple(output.shape)}"
            )
        found = tuple(_gradients(output, inputs, cotangent))
        return _detached(found) if plain else found

    shown = output.detach() if plain else output
    return (shown, vjp_fn, aux) if has_aux else (shown, vjp_fn)


def grad_and_value(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """Like :func:`grad`, also returning the value: ``(gradient, value)``."""

    @_outermost
    def wrapper(*args: Any) -> tuple:
        nums, args = _prepared(args, argnums, "grad")
        value, aux = _split_aux(func(*args), has_aux, "grad")
        if not isinstance(value, Tensor) or value.numel() != 1:
            shape = tuple(getattr(value, "shape", ()))
            raise RuntimeError(
                f"grad(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                f"with {len(shape)} dims. Maybe you wanted to use the vjp or jacrev APIs "
                f"instead?"
            )
        found = _gradients(value, [args[n] for n in nums], None)
        result = found[0] if isinstance(argnums, int) else tuple(found)
        return (result, (value, aux)) if has_aux else (result, value)

    return wrapper


def grad(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """The gradient of a scalar-valued ``func`` with respect to argument(s) ``argnums``."""
    with_value = grad_and_value(func, argnums, has_aux)

    def wrapper(*args: Any) -> Any:
        result, value = with_value(*args)
        return (result, value[1]) if has_aux else result

    return wrapper


def jacrev(func: Callable, argnums: int | tuple = 0) -> Callable:
    """The Jacobian by reverse mode: one VJP per output element (cheap for few outputs).
    Shape: ``output.shape + input.shape``."""

    @_outermost
    def wrapper(*args: Any) -> Any:
        nums, args = _prepared(args, argnums, "jacrev")
        output = func(*args)
        inputs = [args[n] for n in nums]
        rows = [[] for _ in inputs]
        for k in range(output.numel()):
            for row, g in zip(rows, _gradients(output, inputs, _basis(k, output))):
                row.append(g)
        jacobians = [
            _assemble(row, tuple(output.shape), tuple(x.shape)) for row, x in zip(rows, inputs)
        ]
        return jacobians[0] if isinstance(argnums, int) else tuple(jacobians)

    return wrapper


# ----------------------------------------------------------------------------- forward
def jvp(func: Callable, primals: Sequence[Tensor], tangents: Sequence[Tensor], has_aux=False):
    """``(func(*primals), J @ tangents)``: the Jacobian-vector product, in forward mode
    (see the module docstring)."""
    return _outermost(_jvp)(func, primals, tangents, has_aux)


def _jvp(func: Callable, primals, tangents, has_aux: bool):
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to be tuples")
    if len(primals) != len(tangents):
        raise RuntimeError(
            f"jvp(f, primals, tangents): Expected primals and tangents to have the same "
            f"length, got {len(primals)} and {len(tangents)}"
        )
    for p, t in zip(primals, tangents):
        _check_floating(p, "jvp's primals")
        _check_floating(t, "jvp's tangents")
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(
                f"jvp(f, primals, tangents): Expected the tangent of shape {tuple(t.shape)} "
                f"to have the shape of its primal, {tuple(p.shape)}"
            )
    if _forward.dual.level is not None:  # inside another forward transform: one level only
        return _jvp_by_transpose(func, primals, tangents, has_aux)
    level = _forward.enter_level()
    try:
        inputs = [_forward.dual_of(p, t) for p, t in zip(primals, tangents)]
        output, aux = _split_aux(func(*inputs), has_aux, "jvp")
        tangent_out = _forward.tangent_of(output)
        output = _forward.alias(output)  # the value without its tangent
    finally:
        _forward.exit_level(level)
    if tangent_out is None:  # the output does not depend on the primals
        tangent_out = zeros_like(output)
    return (output, tangent_out, aux) if has_aux else (output, tangent_out)


def _check_floating(x: Any, what: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{what} must be tensors, got {type(x).__name__}")
    if x.dtype.kind not in "fc":
        raise TypeError(f"{what} must be floating point tensors to differentiate, got {x.dtype}")


def _jvp_by_transpose(func: Callable, primals, tangents, has_aux: bool):
    """The JVP by two backward passes (the transpose trick of the module docstring)."""
    inputs = [_differentiable(p, "jvp's primals") for p in primals]
    output, aux = _split_aux(func(*inputs), has_aux, "jvp")
    u = zeros_like(output).requires_grad_(True)  # J^T u is linear in u
    transposed = _gradients(output, inputs, u)
    inner = sum(((g * t).sum() for g, t in zip(transposed, tangents)), start=u.sum() * 0.0)
    (tangent_out,) = _gradients(inner, [u], None)
    return (output, tangent_out, aux) if has_aux else (output, tangent_out)


def jacfwd(func: Callable, argnums: int | tuple = 0) -> Callable:
    """The Jacobian by forward mode: one JVP per input element (cheap for few inputs).
    Shape: ``output.shape + input.shape``."""

    @_outermost
    def wrapper(*args: Any) -> Any:
        nums, args = _prepared(args, argnums, "jacfwd")
        jacobians = []
        for n in nums:
            x = args[n]
            columns, output_shape = [], None
            for k in range(x.numel()):

                def along(xn, n=n):
                    return func(*args[:n], xn, *args[n + 1 :])

                output, column = _jvp(along, (x,), (_basis(k, x),), False)
                output_shape = tuple(output.shape)
                columns.append(column)
            jacobians.append(_assemble_columns(columns, output_shape, tuple(x.shape)))
        return jacobians[0] if isinstance(argnums, int) else tuple(jacobians)

    return wrapper


def hessian(func: Callable, argnums: int | tuple = 0) -> Callable:
    """Second derivatives of a scalar ``func``: ``jacfwd(jacrev(func))``, as torch.func."""
    return jacfwd(jacrev(func, argnums), argnums)


# ----------------------------------------------------------------------------- assembly
def _assemble(rows: list[Tensor], output_shape: tuple, input_shape: tuple) -> Tensor:
    """Rows d output[k] / d input (one per output element) as output_shape + input_shape."""
    if not rows:
        return _zeros(output_shape + input_shape)
    return stack(rows).reshape(*output_shape, *input_shape)


def _assemble_columns(columns: list[Tensor], output_shape, input_shape: tuple) -> Tensor:
    """Columns d output / d input[k] (one per input element) as output_shape + input_shape."""
    if not columns:
        return _zeros(tuple(output_shape or ()) + input_shape)
    stacked = stack(columns)  # (input elements, *output_shape)
    moved = stacked.reshape(len(columns), -1).t()
    return moved.reshape(*output_shape, *input_shape)


def _zeros(shape: tuple) -> Tensor:
    return Tensor._make(np.zeros(shape), False, None, 0)
