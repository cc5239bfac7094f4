"""``ng.autograd.functional``: derivatives of whole functions (torch.autograd.functional).

Every function here takes ``func`` and ``inputs`` (a Tensor or a tuple of Tensors) and
returns the same structure torch does: a single Tensor where the inputs (or outputs)
were a single Tensor, tuples where they were tuples.  All are built on
``autograd.grad``:

* ``vjp``: v^T J, one reverse pass;
* ``jvp``: J v by the double-backward trick (a reverse pass is linear in its seed, so
  differentiating it with respect to the seed gives J v), as torch's own ``jvp`` does;
* ``vhp`` / ``hvp``: v^T H and H v, a gradient taken with ``create_graph=True`` and
  differentiated once more;
* ``jacobian`` / ``hessian``: one reverse pass per output element.

``strategy="forward-mode"`` gives the same Jacobian (it is the same matrix); naivegraph
computes it in reverse mode, with torch's rules for which options go together.

>>> import naivegraph as ng
>>> from naivegraph.autograd.functional import vjp, jvp
>>> x = ng.tensor([1.0, 2.0])
>>> vjp(lambda x: x ** 2, x, ng.tensor([1.0, 1.0]))
(tensor([1., 4.]), tensor([2., 4.]))
>>> jvp(lambda x: x ** 2, x, ng.tensor([1.0, 0.0]))
(tensor([1., 4.]), tensor([2., 0.]))
"""

from __future__ import annotations

from typing import Any, Callable

from ..dynamic.engine import grad
from ..dynamic.factories import zeros_like
from ..dynamic.functions import stack
from ..dynamic.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from ..dynamic.tensor import Tensor

STRATEGIES = ("forward-mode", "reverse-mode")


# ----------------------------------------------------------------------------------
# Inputs and outputs as tuples, and back
# ----------------------------------------------------------------------------------
def _as_tuple(value: Any, what: str, fn_name: str) -> tuple[bool, tuple]:
    """(was it a tuple, the tensors as a tuple); anything but tensors is a TypeError."""
    is_tuple = isinstance(value, tuple)
    values = value if is_tuple else (value,)
    for i, element in enumerate(values):
        if not isinstance(element, Tensor):
            where = f"value at index {i}" if is_tuple else f"given {what}"
            raise TypeError(
                f"The {what} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                f"but the {where} has type {type(element)}."
            )
    return is_tuple, values


def _unpack(result: tuple, was_tuple: bool) -> Any:
    return result if was_tuple else result[0]


def _unpack_nested(result: tuple, outer_tuple: bool, inner_tuple: bool) -> Any:
    """A [output][input] nest of results, unwrapped where torch unwraps it."""
    if not inner_tuple:
        result = tuple(row[0] for row in result)
    return result if outer_tuple else result[0]


def _prepare(tensors: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """New tensor objects for ``func`` to see: linked to the caller's under ``create_graph``
    (so gradients flow back to them), detached otherwise.  Always new objects, so the
    inputs are told apart from the same tensors captured by ``func`` from outside."""
    return tuple(
        t.view_as(t) if create_graph and t.requires_grad else t.detach().requires_grad_(need_graph)
        for t in tensors
    )


def _finish(tensors: tuple, create_graph: bool) -> tuple:
    """Without ``create_graph`` nothing returned carries history."""
    if create_graph:
        return tensors
    return tuple(t.detach() if isinstance(t, Tensor) else _finish(t, create_graph) for t in tensors)


def _check_v(v: tuple, reference: tuple, reference_is_tuple: bool) -> None:
    if len(v) != len(reference):
        if reference_is_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(reference)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (given, expected) in enumerate(zip(v, reference)):
        if given.shape != expected.shape:
            prefix = f"Entry {i} in " if reference_is_tuple else ""
            raise RuntimeError(
                f"{prefix}v has invalid size: should be {expected.shape} but got {given.shape}."
            )


def _v_or_single_element(
    v: Any, reference: tuple, reference_is_tuple: bool, fn_name: str, create_graph: bool, of: str
) -> tuple | None:
    """``v`` as a checked tuple; None is allowed only against one single-element tensor."""
    if v is None:
        if len(reference) != 1 or reference[0].numel() != 1:
            raise RuntimeError(f"The vector v can only be None if {of} a single element.")
        return None
    _, vs = _as_tuple(v, "v", fn_name)
    vs = _prepare(vs, create_graph, need_graph=False)
    _check_v(vs, reference, reference_is_tuple)
    return vs


V_OF_OUTPUT = "the user-provided function returns a single Tensor with"
V_OF_INPUT = "the input to the user-provided function is a single Tensor with"


# ----------------------------------------------------------------------------------
# strict mode: refuse results that do not depend on the inputs
# ----------------------------------------------------------------------------------
def _check_outputs(outputs: tuple, strict: bool) -> None:
    if strict:
        for i, out in enumerate(outputs):
            if not out.requires_grad:
                raise RuntimeError(
                    f"Output {i} of the user-provided function does not require gradients. "
                    "The outputs must be computed in a differentiable manner from the input "
                    "when running in strict mode."
                )


def _check_depends(tensors: tuple, strict: bool, message: Callable[[int], str]) -> None:
    if strict:
        for i, t in enumerate(tensors):
            if t is None:
                raise RuntimeError(MISSING["back"].format(i=i))
            if not t.requires_grad:
                raise RuntimeError(message(i))


def _independent_jacobian(i: int) -> str:
    return (
        "While computing the hessian, found that the jacobian of the user-provided function "
        f"with respect to input {i} is independent of the input. This is not allowed in "
        "strict mode. You should ensure that your function is twice differentiable and that "
        "the jacobian depends on the inputs (this would be violated by a linear function for "
        "example)."
    )


def _independent_grad_input(i: int) -> str:
    return (
        f"The gradient with respect to input {i} is independent of the inputs of the "
        "user-provided function. This is not allowed in strict mode."
    )


MISSING = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
    "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
    "grad_outputs when using the double backward trick to compute forward mode gradients. "
    "This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
    "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
    "{i} in the grad_jacobian. This is not allowed in strict mode as it prevents from using "
    "the double backward trick to replace forward mode AD.",
}


def _zeros_for_missing(grads: tuple, refs: tuple, strict: bool, create_graph: bool, stage: str):
    """Gradients that did not arrive become zeros (or, in strict mode, an error)."""
    result = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(MISSING[stage].format(i=i))
            g = zeros_like(ref)
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. "
                "This is not allowed in strict mode when create_graph=True."
            )
        result.append(g)
    return tuple(result)


def _grad(outputs: tuple, inputs: tuple, seeds: tuple | None = None, **kw: Any) -> tuple:
    """``autograd.grad`` over the outputs that have history; None where nothing arrives."""
    seeds = (None,) * len(outputs) if seeds is None else seeds
    kept = [(o, s) for o, s in zip(outputs, seeds) if o is not None and o.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    outs, gs = zip(*kept)
    return grad(list(outs), list(inputs), list(gs), allow_unused=True, **kw)


# ----------------------------------------------------------------------------------
# Products with a vector
# ----------------------------------------------------------------------------------
def vjp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple:
    """``(func(inputs), v^T J)``: the vector-Jacobian product, shaped like the inputs.

    >>> import naivegraph as ng
    >>> out, g = ng.autograd.functional.vjp(lambda x: (x ** 3).sum(), ng.tensor([1.0, 2.0]))
    >>> out, g
    (tensor(9.), tensor([ 3., 12.]))
    """
    with enable_grad():
        inputs_tuple, xs = _as_tuple(inputs, "inputs", "vjp")
        xs = _prepare(xs, create_graph, need_graph=True)
        outputs_tuple, outs = _as_tuple(func(*xs), "outputs of the user-provided function", "vjp")
        _check_outputs(outs, strict)
        vs = _v_or_single_element(v, outs, outputs_tuple, "vjp", create_graph, V_OF_OUTPUT)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grad(outs, xs, vs, create_graph=create_graph)
        result = _zeros_for_missing(grads, xs, strict, create_graph, "back")
    return (
        _unpack(_finish(outs, create_graph), outputs_tuple),
        _unpack(_finish(result, create_graph), inputs_tuple),
    )


def jvp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple:
    """``(func(inputs), J v)``: the Jacobian-vector product, shaped like the outputs.

    Computed with the double-backward trick: ``u -> J^T u`` is linear in ``u``, and its
    vector-Jacobian product with ``v`` (with respect to ``u``) is ``J v``.

    >>> import naivegraph as ng
    >>> x, v = ng.tensor([1.0, 2.0]), ng.tensor([1.0, 1.0])
    >>> ng.autograd.functional.jvp(lambda x: x.exp().sum(), x, v)[1]
    tensor(10.1073)
    """
    with enable_grad():
        inputs_tuple, xs = _as_tuple(inputs, "inputs", "jvp")
        xs = _prepare(xs, create_graph, need_graph=True)
        vs = _v_or_single_element(v, xs, inputs_tuple, "jvp", create_graph, V_OF_INPUT)
        outputs_tuple, outs = _as_tuple(func(*xs), "outputs of the user-provided function", "jvp")
        _check_outputs(outs, strict)
        # The seed's value never reaches the result (the pass is linear in it): zeros are
        # safe, where ones could meet an inf.
        seeds = tuple(zeros_like(o, requires_grad=True) for o in outs)
        grad_inputs = _grad(outs, xs, seeds, create_graph=True)
        _check_depends(grad_inputs, strict, _independent_grad_input)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grad(grad_inputs, seeds, vs, create_graph=create_graph)
        result = _zeros_for_missing(grads, outs, strict, create_graph, "back_trick")
    return (
        _unpack(_finish(outs, create_graph), outputs_tuple),
        _unpack(_finish(result, create_graph), outputs_tuple),
    )


def _scalar_output(func: Callable, xs: tuple, fn_name: str, strict: bool) -> tuple:
    outputs_tuple, outs = _as_tuple(func(*xs), "outputs of the user-provided function", fn_name)
    _check_outputs(outs, strict)
    if outputs_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outs[0].numel() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should contain a single "
            "element"
        )
    return outs


def vhp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple:
    """``(func(inputs), v^T H)`` for a scalar ``func``: shaped like the inputs.

    >>> import naivegraph as ng
    >>> x, v = ng.tensor([1.0, 2.0]), ng.tensor([1.0, 0.0])
    >>> ng.autograd.functional.vhp(lambda x: (x ** 3).sum(), x, v)[1]
    tensor([6., 0.])
    """
    with enable_grad():
        inputs_tuple, xs = _as_tuple(inputs, "inputs", "vhp")
        xs = _prepare(xs, create_graph, need_graph=True)
        vs = _v_or_single_element(v, xs, inputs_tuple, "vhp", create_graph, V_OF_INPUT)
        outs = _scalar_output(func, xs, "vhp", strict)
        jac = _grad(outs, xs, create_graph=True)
        _check_depends(jac, strict, _independent_jacobian)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grad(jac, xs, vs, create_graph=create_graph)
        result = _zeros_for_missing(grads, xs, strict, create_graph, "double_back")
    return outs[0] if create_graph else outs[0].detach(), _unpack(
        _finish(result, create_graph), inputs_tuple
    )


def hvp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple:
    """``(func(inputs), H v)`` for a scalar ``func`` (the double-backward trick again).

    >>> import naivegraph as ng
    >>> x, v = ng.tensor([1.0, 2.0]), ng.tensor([1.0, 0.0])
    >>> ng.autograd.functional.hvp(lambda x: (x ** 3).sum(), x, v)[1]
    tensor([6., 0.])
    """
    with enable_grad():
        inputs_tuple, xs = _as_tuple(inputs, "inputs", "hvp")
        xs = _prepare(xs, create_graph, need_graph=True)
        vs = _v_or_single_element(v, xs, inputs_tuple, "hvp", create_graph, V_OF_INPUT)
        outs = _scalar_output(func, xs, "hvp", strict)
        jac = _grad(outs, xs, create_graph=True)
        _check_depends(jac, strict, _independent_jacobian)
        seeds = tuple(zeros_like(x, requires_grad=True) for x in xs)
        double_back = _grad(jac, xs, seeds, create_graph=True)
        _check_depends(jac, strict, _independent_hessian)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grad(double_back, seeds, vs, create_graph=create_graph)
        result = _zeros_for_missing(grads, xs, strict, create_graph, "double_back_trick")
    return outs[0] if create_graph else outs[0].detach(), _unpack(
        _finish(result, create_graph), inputs_tuple
    )


def _independent_hessian(i: int) -> str:
    return (
        f"The hessian of the user-provided function with respect to input {i} is independent "
        "of the input. This is not allowed in strict mode. You should ensure that your "
        "function is thrice differentiable and that the hessian depends on the inputs."
    )


# ----------------------------------------------------------------------------------
# Whole Jacobians and Hessians
# ----------------------------------------------------------------------------------
def _check_strategy(strategy: str, create_graph: bool, strict: bool, vectorize: bool) -> None:
    """torch's rules for which options go together."""
    if strategy not in STRATEGIES:
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more '
            'performant. Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.'
            )
        if strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `strict=False` or `strategy="reverse-mode"`.'
            )
        if not vectorize:
            raise NotImplementedError(
                "Computing Jacobian using forward-AD or forward-over-reverse Hessian is "
                "only implemented for `vectorize=True`."
            )
    elif vectorize and strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are "
            "not supported together. Please either set `strict=False` or `vectorize=False`."
        )


def jacobian(
    func: Callable,
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """d func(inputs) / d inputs: ``J[i][j]`` of shape ``output_i.shape + input_j.shape``.

    A single Tensor where ``func`` has one output and one input; otherwise tuples indexed
    [output][input] (or just [input] / [output] where only one side is a tuple).

    >>> import naivegraph as ng
    >>> ng.autograd.functional.jacobian(lambda x: x ** 2, ng.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    _check_strategy(strategy, create_graph, strict, vectorize)
    if strategy == "forward-mode":
        return _forward_mode_jacobian(func, inputs)
    with enable_grad():
        inputs_tuple, xs = _as_tuple(inputs, "inputs", "jacobian")
        xs = _prepare(xs, create_graph, need_graph=True)
        outputs_tuple, outs = _as_tuple(
            func(*xs), "outputs of the user-provided function", "jacobian"
        )
        _check_outputs(outs, strict)
        if vectorize:
            rows = _all_outputs_at_once(outs, xs, create_graph)
        else:
            rows = tuple(
                _jacobian_of(i, out, xs, create_graph, strict) for i, out in enumerate(outs)
            )
    return _unpack_nested(_finish(rows, create_graph), outputs_tuple, inputs_tuple)


def _jacobian_of(i: int, out: Tensor, xs: tuple, create_graph: bool, strict: bool) -> tuple:
    """The blocks d out / d x_j, one reverse pass per element of ``out``."""
    columns: list[list] = [[] for _ in xs]
    flat = out.reshape(-1)
    for k in range(out.numel()):
        grads = _grad((flat[k],), xs, retain_graph=True, create_graph=create_graph)
        for j, (g, x) in enumerate(zip(grads, xs)):
            columns[j].append(_element_row(g, x, i, j, create_graph, strict))
    return tuple(stack(column).reshape(out.shape + x.shape) for column, x in zip(columns, xs))


def _all_outputs_at_once(outs: tuple, xs: tuple, create_graph: bool) -> tuple:
    """``vectorize=True``: per input, one Jacobian over every output element, then split
    per output (so, as in torch, a block is part of its input's whole Jacobian)."""
    per_input: list[list] = [[] for _ in xs]
    for out in outs:
        flat = out.reshape(-1)
        for k in range(out.numel()):
            grads = _grad((flat[k],), xs, retain_graph=True, create_graph=create_graph)
            for column, g, x in zip(per_input, grads, xs):
                column.append(g if g is not None else zeros_like(x))
    whole = [stack(column) for column in per_input]
    rows, start = [], 0
    for out in outs:
        stop = start + out.numel()
        rows.append(tuple(w[start:stop].reshape(out.shape + x.shape) for w, x in zip(whole, xs)))
        start = stop
    return tuple(rows)


def _forward_mode_jacobian(func: Callable, inputs: Any) -> Any:
    """The forward-mode Jacobian, computed in reverse mode (the same matrix), returned as
    torch returns it: lists inside, and history kept when an input requires grad."""
    inputs_tuple, xs = _as_tuple(inputs, "inputs", "jacobian")
    tracked = any(x.requires_grad for x in xs)
    with enable_grad():
        xs = _prepare(xs, tracked, need_graph=True)
        outputs_tuple, outs = _as_tuple(func(*xs), "outputs", "jacobian")
        rows = _all_outputs_at_once(outs, xs, tracked)
    if not tracked:
        rows = _finish(rows, False)
    as_lists: list = [list(row) for row in rows]
    if not inputs_tuple:
        as_lists = [row[0] for row in as_lists]
    return as_lists if outputs_tuple else as_lists[0]


def _element_row(g: Any, x: Tensor, i: int, j: int, create_graph: bool, strict: bool) -> Tensor:
    if g is None:
        if strict:
            raise RuntimeError(
                f"Output {i} of the user-provided function is independent of input {j}. "
                "This is not allowed in strict mode."
            )
        return zeros_like(x)
    if strict and create_graph and not g.requires_grad:
        raise RuntimeError(
            f"The jacobian of the user-provided function is independent of input {i}. This "
            "is not allowed in strict mode when create_graph=True."
        )
    return g


def hessian(
    func: Callable,
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """Second derivatives of a scalar ``func``: ``H[i][j]`` of shape
    ``input_i.shape + input_j.shape`` (a single Tensor for a single input).

    >>> import naivegraph as ng
    >>> ng.autograd.functional.hessian(lambda x: (x ** 3).sum(), ng.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    inputs_tuple, xs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*xs: Tensor) -> Tensor:
        return _scalar_output(func, xs, "hessian", strict)[0].squeeze()

    def gradient(*xs: Tensor) -> tuple:
        jac = jacobian(single_output, xs, create_graph=True)
        _check_depends(jac, strict, _independent_jacobian)
        return jac

    if outer_jacobian_strategy == "forward-mode":  # torch's outer pass tracks the inputs
        xs = tuple(x.detach().requires_grad_(True) for x in xs)
    rows = jacobian(  # always tuples inside, unwrapped once at the end as torch does
        gradient,
        xs,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
    return _unpack_nested(rows, inputs_tuple, inputs_tuple)


__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]
