"""``grad``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd`` and ``hessian``: see the package
docstring for how they work and how each keeps to its own argument."""

from __future__ import annotations

import functools
import threading
import weakref
from typing import Any, Callable

import numpy as np

from ..dynamic import forward as _forward
from ..dynamic.engine import grad as _autograd_grad
from ..dynamic.factories import zeros_like
from ..dynamic.functions import stack
from ..dynamic.grad_mode import enable_grad
from ..dynamic.node import AccumulateGrad
from ..dynamic.tensor import Tensor
from ..ops import OPS
from .pytree import Spec, flatten, unflatten
from .vmap import check_randomness, random_mode

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian"]


# ----------------------------------------------------------------------------- levels
class _Depth(threading.local):
    """How many transforms are running in this thread."""

    value = 0


class _Transforms:
    depth = _Depth()
    # id -> leaf: the fresh leaves standing for inputs that did not require grad; a result
    # that reaches no other leaf does not depend on anything outside the transforms.
    leaves: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _transform(run: Callable) -> Callable:
    """``run`` as one transform: grad mode on (a transform differentiates whatever the
    caller's grad mode, as torch.func does), and the outermost hands back results that no
    longer show the transforms' own graph."""

    @functools.wraps(run)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _Transforms.depth.value += 1
        try:
            with enable_grad():
                result = run(*args, **kwargs)
        finally:
            _Transforms.depth.value -= 1
        return _unwrapped(result) if _Transforms.depth.value == 0 else result

    return wrapper


def _unwrapped(result: Any) -> Any:
    """``result`` with every tensor that depends on nothing outside the transforms
    detached (one that depends on a tensor requiring grad outside keeps its graph, so the
    caller can still differentiate it, as in torch.func)."""
    leaves, spec = flatten(result)
    return unflatten([_plain(v) if isinstance(v, Tensor) else v for v in leaves], spec)


def _plain(t: Tensor) -> Tensor:
    return t if t.requires_grad and _reaches_outside(t) else t.detach()


def _reaches_outside(t: Tensor) -> bool:
    """Does ``t``'s graph reach a leaf requiring grad that no transform made?"""
    if t.grad_fn is None:
        return not _is_transform_leaf(t)
    seen, todo = {id(t.grad_fn)}, [t.grad_fn]
    while todo:
        node = todo.pop()
        if isinstance(node, AccumulateGrad) and not _is_transform_leaf(node.variable):
            return True
        for child, _ in node.next_functions:
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                todo.append(child)
    return False


def _is_transform_leaf(t: Any) -> bool:
    return _Transforms.leaves.get(id(t)) is t


def _own_input(x: Any) -> Tensor:
    """A new tensor standing for input ``x`` inside one transform, equal to ``x``.

    The transform differentiates with respect to this tensor and nothing else, so a
    closure over ``x`` (or another transform's input) stays a constant for it: the
    tensors' equivalent of torch.func's levels.  If ``x`` requires grad (a tensor of the
    caller's graph, or an enclosing transform's input), the stand-in is a view of ``x``:
    gradients still flow on through it to ``x`` for the enclosing differentiation.
    Otherwise it is a fresh leaf.  Either way it carries ``x``'s forward-mode tangent."""
    if not isinstance(x, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    if x.dtype.kind not in "fc":
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    if x.requires_grad:  # a view, recorded: its tangent (if any) follows by the view's rule
        return OPS["reshape"].dispatch(x, shape=tuple(x.shape))
    leaf = x.detach().requires_grad_(True)
    _Transforms.leaves[id(leaf)] = leaf
    tangent = _forward.tangent_of(x)
    if tangent is not None:  # inside a forward transform: the leaf moves as x does
        _forward.set_tangent(leaf, tangent)
    return leaf


# ----------------------------------------------------------------------------- arguments
def _argnums(argnums: Any, count: int) -> tuple[int, ...]:
    """The positions ``argnums`` names, checked as torch.func checks them."""
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        nums = (argnums,)
    elif isinstance(argnums, tuple) and all(isinstance(n, int) for n in argnums):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        if len(set(n % count if count else n for n in argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        nums = argnums
    else:
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums).__name__}")
    for n in nums:
        if not -count <= n < count:
            raise RuntimeError(f"Got argnum={n}, but only {count} positional inputs")
    return tuple(n % count for n in nums)


class _Inputs:
    """The differentiated arguments of one call: each replaced by its own stand-ins."""

    def __init__(self, args: tuple, argnums: Any) -> None:
        self.argnums = argnums
        self.nums = _argnums(argnums, len(args))
        self.args = list(args)
        self.flat: list[Tensor] = []
        self.specs: list[Spec] = []
        for n in self.nums:
            leaves, spec = flatten(args[n])
            own = [_own_input(x) for x in leaves]
            self.args[n] = unflatten(own, spec)
            self.flat += own
            self.specs.append(spec)

    def shaped(self, per_leaf: list) -> Any:
        """One value per flat input, nested as the arguments were (one tree per argnum,
        a tuple of them when ``argnums`` is a tuple)."""
        trees, start = [], 0
        for spec in self.specs:
            trees.append(unflatten(per_leaf[start : start + spec.num_leaves], spec))
            start += spec.num_leaves
        return trees[0] if isinstance(self.argnums, int) else tuple(trees)


def _split_aux(result: Any, has_aux: bool, who: str) -> tuple[Any, Any]:
    if not has_aux:
        return result, None
    if not isinstance(result, tuple) or len(result) != 2:
        raise RuntimeError(
            f"{who}: output of function f should be a tuple: (output, aux) if has_aux is True"
        )
    return result


def _tensors_out(output: Any, who: str) -> tuple[list[Tensor], Spec]:
    leaves, spec = flatten(output)
    for v in leaves:
        if not isinstance(v, Tensor):
            raise RuntimeError(
                f"{who}: expected f(*primals) to return only tensors, got unsupported type "
                f"{type(v)}"
            )
    return leaves, spec


def _gradients(outputs: list[Tensor], inputs: list[Tensor], cotangents: list | None) -> list:
    """d<outputs, cotangents>/d inputs, with graph; zeros for an input no output uses."""
    pairs = [
        (o, None if cotangents is None else c)
        for o, c in zip(outputs, cotangents or [None] * len(outputs))
        if o.requires_grad
    ]
    if not pairs or not inputs:
        return [zeros_like(x) for x in inputs]
    found = _autograd_grad(
        [o for o, _ in pairs],
        inputs,
        None if cotangents is None else [c for _, c in pairs],
        retain_graph=True,
        create_graph=True,
        allow_unused=True,
    )
    return [zeros_like(x) if g is None else g for g, x in zip(found, inputs)]


def _basis(k: int, like: Tensor) -> Tensor:
    """The ``k``-th unit tensor of ``like``'s shape and dtype (one Jacobian row/column)."""
    unit = np.zeros(like.numel(), dtype=like.dtype)
    unit[k] = 1.0
    return Tensor._make(unit.reshape(tuple(like.shape)), False, None, 0)


# ----------------------------------------------------------------------------- reverse
def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangents)`` gives one gradient per
    primal, ``cotangents`` nested as ``func``'s output is.

    >>> import naivegraph as ng
    >>> out, vjp_fn = vjp(lambda x: (x * 2, x.sum()), ng.tensor([1.0, 2.0]))
    >>> vjp_fn((ng.tensor([1.0, 1.0]), ng.tensor(3.0)))
    (tensor([5., 5.]),)
    """
    return _transform(_vjp)(func, primals, has_aux)


def _vjp(func: Callable, primals: tuple, has_aux: bool) -> tuple:
    inputs = _Inputs(primals, tuple(range(len(primals)))) if primals else None
    output, aux = _split_aux(func(*(inputs.args if inputs else ())), has_aux, "vjp(f, *primals)")
    outputs, out_spec = _tensors_out(output, "vjp(f, *primals)")

    @_transform
    def vjp_fn(cotangents: Any) -> tuple:
        given, spec = flatten(cotangents)
        if spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure "
                f"of outputs to the function. cotangents: {spec}, primal output: {out_spec}"
            )
        for i, (c, o) in enumerate(zip(given, outputs)):
            if not isinstance(c, Tensor) or tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of "
                    f"{tuple(getattr(c, 'shape', ()))} and output[{i}] has a shape of "
                    f"{tuple(o.shape)}."
                )
        if inputs is None:
            return ()
        return tuple(inputs.shaped(_gradients(outputs, inputs.flat, given)))

    return (output, vjp_fn, aux) if has_aux else (output, vjp_fn)


def grad_and_value(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """Like :func:`grad`, also returning the value: ``(gradient, value)``
    (``(gradient, (value, aux))`` with ``has_aux``)."""

    @_transform
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> tuple:
        inputs = _Inputs(args, argnums)
        who = "grad_and_value(f)(*args)"
        value, aux = _split_aux(func(*inputs.args, **kwargs), has_aux, who)
        if not isinstance(value, Tensor):
            raise RuntimeError(f"{who}: Expected f(*args) to return a Tensor, got {type(value)}")
        if value.dim() != 0:  # torch.func wants 0-d: a (1,) output is refused too
            raise RuntimeError(
                f"{who}: Expected f(*args) to return a scalar Tensor, got tensor with "
                f"{value.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
            )
        result = inputs.shaped(_gradients([value], inputs.flat, None))
        return (result, (value, aux)) if has_aux else (result, value)

    return wrapper


def grad(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """The gradient of a scalar-valued (0-d) ``func`` with respect to argument(s)
    ``argnums``, nested as those arguments are (a dict of parameters gives a dict).

    >>> import naivegraph as ng
    >>> x = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> grad(lambda y: (x * y).sum())(x)  # x is a constant for this grad
    tensor([1., 2., 3.], grad_fn=<MulBackward0>)
    """
    with_value = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result, value = with_value(*args, **kwargs)
        return (result, value[1]) if has_aux else result

    return wrapper


def jacrev(
    func: Callable,
    argnums: int | tuple = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
) -> Callable:
    """The Jacobian by reverse mode: one VJP per output element (cheap for few outputs).
    Each output's block has shape ``output.shape + input.shape``; blocks are nested as
    the outputs are, and within each as the differentiated arguments are.
    (``chunk_size`` is accepted as torch's; the VJPs run one at a time anyway.)"""
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @_transform
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        inputs = _Inputs(args, argnums)
        output, aux = _split_aux(func(*inputs.args, **kwargs), has_aux, "jacrev(f)(*args)")
        outputs, out_spec = _tensors_out(output, "jacrev(f)(*args)")
        blocks = []
        for o in outputs:
            rows: list[list] = [[] for _ in inputs.flat]
            for k in range(o.numel()):
                for row, g in zip(rows, _gradients([o], inputs.flat, [_basis(k, o)])):
                    row.append(g)
            per_input = [
                _assemble(row, tuple(o.shape), tuple(x.shape), x)
                for row, x in zip(rows, inputs.flat)
            ]
            blocks.append(inputs.shaped(per_input))
        jacobian = unflatten(blocks, out_spec)
        return (jacobian, aux) if has_aux else jacobian

    return wrapper


# ----------------------------------------------------------------------------- forward
def jvp(
    func: Callable,
    primals: Any,
    tangents: Any,
    *,
    strict: bool = False,
    has_aux: bool = False,
) -> tuple:
    """``(func(*primals), J @ tangents)``: the Jacobian-vector product, in forward mode
    (see the package docstring); outputs may be nested, the tangents follow them.

    >>> import naivegraph as ng
    >>> jvp(lambda x: (x ** 2, x.sum()), (ng.tensor([1.0, 3.0]),), (ng.tensor([1.0, 0.0]),))
    ((tensor([1., 9.]), tensor(4.)), (tensor([2., 0.]), tensor(1.)))
    """
    return _transform(_jvp_checked)(func, primals, tangents, has_aux)


def _jvp_checked(func: Callable, primals: Any, tangents: Any, has_aux: bool) -> tuple:
    for name, given in (("primals", primals), ("tangents", tangents)):
        if not isinstance(given, tuple):
            raise RuntimeError(
                f"jvp(f, primals, tangents): Expected {name} to be a tuple. "
                "E.g. it should be valid to call f(*primals)."
            )
    flat_p, spec_p = flatten(primals)
    flat_t, spec_t = flatten(tangents)
    if spec_p != spec_t:
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals and tangents to have the same python "
            f"structure. For example, if primals is a tuple of 3 tensors, tangents also must "
            f"be. Got primals with structure {spec_p} and tangents with structure {spec_t}"
        )
    for p, t in zip(flat_p, flat_t):
        for what, v in (("primals", p), ("tangents", t)):
            if not isinstance(v, Tensor):
                raise RuntimeError(
                    f"jvp(f, primals, tangents): Expected {what} to only contain Tensors, "
                    f"got {type(v)}"
                )
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                f"original Tensor, this is not supported. Tensor is of size {list(p.shape)} "
                f"while the given forward gradient is of size {list(t.shape)}."
            )
        if p.dtype.kind not in "fc":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")

    def along(*flat: Tensor) -> Any:
        return func(*unflatten(list(flat), spec_p))

    outputs, out_spec, found, aux = _jvp_flat(along, flat_p, flat_t, has_aux)
    output, tangent = unflatten(outputs, out_spec), unflatten(found, out_spec)
    return (output, tangent, aux) if has_aux else (output, tangent)


def _jvp_flat(func: Callable, primals: list, tangents: list, has_aux: bool) -> tuple:
    """``func``'s outputs, their tangents (both flat), their nesting and the aux value."""
    if _forward.dual.level is not None:  # inside another forward transform: one level only
        return _jvp_by_transpose(func, primals, tangents, has_aux)
    level = _forward.enter_level()
    try:
        inputs = [_forward.dual_of(p, t) for p, t in zip(primals, tangents)]
        output, aux = _split_aux(func(*inputs), has_aux, "jvp(f, primals, tangents)")
        outputs, spec = _tensors_out(output, "jvp(f, primals, tangents)")
        found = [_forward.tangent_of(o) for o in outputs]
        outputs = [_forward.alias(o) for o in outputs]  # the values without their tangents
    finally:
        _forward.exit_level(level)
    found = [zeros_like(o) if t is None else t for o, t in zip(outputs, found)]
    return outputs, spec, found, aux


def _jvp_by_transpose(func: Callable, primals: list, tangents: list, has_aux: bool) -> tuple:
    """The JVP by two backward passes (the transpose trick of the package docstring)."""
    inputs = [_own_input(p) for p in primals]
    output, aux = _split_aux(func(*inputs), has_aux, "jvp(f, primals, tangents)")
    outputs, spec = _tensors_out(output, "jvp(f, primals, tangents)")
    us = [zeros_like(o).requires_grad_(True) for o in outputs]  # J^T u is linear in u
    transposed = _gradients(outputs, inputs, us)
    inner = sum(((g * t).sum() for g, t in zip(transposed, tangents)), start=us[0].sum() * 0.0)
    found = _gradients([inner], us, None)
    return outputs, spec, found, aux


def jacfwd(
    func: Callable,
    argnums: int | tuple = 0,
    has_aux: bool = False,
    *,
    randomness: str = "error",
) -> Callable:
    """The Jacobian by forward mode: one JVP per input element (cheap for few inputs).
    Blocks and nesting as :func:`jacrev`'s.  torch computes the JVPs under ``vmap``, so
    ``randomness`` is vmap's: by default a random operation in ``func`` is refused."""
    check_randomness(randomness)

    @_transform
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        inputs = _Inputs(args, argnums)
        flat = inputs.flat
        start = [0]
        for n in inputs.nums:  # where each argument's leaves start in ``flat``
            start.append(start[-1] + flatten(args[n])[1].num_leaves)

        def call(*values: Tensor) -> Any:
            call_args = list(inputs.args)
            for i, n in enumerate(inputs.nums):
                spec = inputs.specs[i]
                call_args[n] = unflatten(list(values[start[i] : start[i + 1]]), spec)
            return func(*call_args, **kwargs)

        with random_mode(randomness) as before_each:
            # one plain call: the outputs' nesting and shapes, and the aux value
            before_each()
            output, aux = _split_aux(call(*flat), has_aux, "jacfwd(f)(*args)")
            outputs, out_spec = _tensors_out(output, "jacfwd(f)(*args)")
            columns: list[list[list]] = [[[] for _ in flat] for _ in outputs]
            for j, x in enumerate(flat):
                for k in range(x.numel()):
                    tangents = [
                        _basis(k, x) if i == j else zeros_like(v) for i, v in enumerate(flat)
                    ]
                    before_each()
                    _, _, found, _ = _jvp_flat(call, flat, tangents, has_aux)
                    for per_output, t in zip(columns, found):
                        per_output[j].append(t)
        blocks = [
            inputs.shaped(
                [
                    _assemble_columns(cols, tuple(o.shape), tuple(x.shape), x)
                    for cols, x in zip(per_output, flat)
                ]
            )
            for o, per_output in zip(outputs, columns)
        ]
        jacobian = unflatten(blocks, out_spec)
        return (jacobian, aux) if has_aux else jacobian

    return wrapper


def hessian(func: Callable, argnums: int | tuple = 0) -> Callable:
    """Second derivatives of a scalar ``func``: ``jacfwd(jacrev(func))``, as torch.func;
    with ``argnums=(0, 1)`` the blocks are ``result[i][j] = d2 f / d arg_i d arg_j``."""
    return jacfwd(jacrev(func, argnums), argnums)


# ----------------------------------------------------------------------------- assembly
def _assemble(rows: list[Tensor], output_shape: tuple, input_shape: tuple, like) -> Tensor:
    """Rows d output[k] / d input (one per output element) as output_shape + input_shape."""
    if not rows:
        return zeros_like(like).reshape(-1)[:0].reshape(*output_shape, *input_shape)
    return stack(rows).reshape(*output_shape, *input_shape)


def _assemble_columns(columns: list[Tensor], output_shape: tuple, input_shape: tuple, like):
    """Columns d output / d input[k] (one per input element) as output_shape + input_shape."""
    if not columns:
        return zeros_like(like).reshape(-1)[:0].reshape(*output_shape, *input_shape)
    stacked = stack(columns)  # (input elements, *output_shape)
    moved = stacked.reshape(len(columns), -1).t()
    return moved.reshape(*output_shape, *input_shape)
