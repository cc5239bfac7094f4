"""``gradcheck``: compare autograd's gradients with finite differences.

(The lessons' exercise checkers live in :mod:`naivegraph.lessons.exercises`.)
"""

from __future__ import annotations

import warnings
from typing import Callable, Sequence

import numpy as np

from .dynamic import forward as _forward
from .dynamic.engine import grad
from .dynamic.grad_mode import enable_grad
from .dynamic.tensor import Tensor


class GradcheckError(RuntimeError):
    """Analytical and numerical gradients disagree."""


def numerical_jacobian(func: Callable, inputs: Sequence[Tensor], eps: float = 1e-6) -> list:
    """Central differences: one (output.size, input.size) matrix per input.

    ``func`` runs with grad mode as the caller has it: a function that itself calls
    ``autograd.grad`` (a second-derivative check) needs its inputs to record history.
    """
    jacobians = []
    base = np.array(func(*inputs)._data, dtype=np.float64)
    for x in inputs:
        flat = x._data.reshape(-1)  # a view: perturb in place, restore after
        if not np.shares_memory(flat, x._data):
            raise GradcheckError("gradcheck needs inputs with contiguous storage")
        jac = np.zeros((base.size, flat.size))
        for j in range(flat.size):
            original = flat[j]
            flat[j] = original + eps
            plus = np.array(func(*inputs)._data, dtype=np.float64).reshape(-1)
            flat[j] = original - eps
            minus = np.array(func(*inputs)._data, dtype=np.float64).reshape(-1)
            flat[j] = original
            jac[:, j] = (plus - minus) / (2 * eps)
        jacobians.append(jac)
    return jacobians


def analytical_jacobian(func: Callable, inputs: Sequence[Tensor]) -> list:
    """One reverse pass per output element (vector-Jacobian products with unit vectors)."""
    out = func(*inputs)
    flat = out.reshape(-1)
    jacobians = [np.zeros((flat.shape[0], x.numel())) for x in inputs]
    for k in range(flat.shape[0]):
        grads = grad(flat[k], inputs, retain_graph=True, allow_unused=True)
        for jac, g in zip(jacobians, grads):
            if g is not None:
                jac[k] = g._data.reshape(-1)
    return jacobians


def forward_jacobian(func: Callable, inputs: Sequence[Tensor]) -> list:
    """One forward-mode pass per input element: the tangent ``e_j`` on that element
    (zero on the other inputs) gives column ``j`` of the Jacobian."""
    out_size = func(*inputs).numel()
    jacobians = []
    for x in inputs:
        jac = np.zeros((out_size, x.numel()))
        for j in range(x.numel()):
            tangent = np.zeros(x.shape, dtype=x._data.dtype)
            tangent.reshape(-1)[j] = 1.0
            _forward.enter_level()
            try:
                duals = [
                    _forward.dual_of(t, Tensor(tangent if t is x else np.zeros_like(t._data)))
                    for t in inputs
                ]
                column = _forward.tangent_of(func(*duals))
                if column is not None:
                    jac[:, j] = column._data.reshape(-1)
            finally:
                _forward.exit_level()
        jacobians.append(jac)
    return jacobians


def gradcheck(
    func: Callable,
    inputs,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    *,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    check_undefined_grad: bool = True,
    check_batched_grad: bool = False,
) -> bool:
    """True when autograd's gradients of ``func`` match finite differences.

    Inputs that require grad are checked; they should be float64, as in torch: a step
    of ``eps=1e-6`` is lost in float32's rounding, so a float32 input gets torch's
    UserWarning and the check will likely fail.  ``func`` may return a tensor or a tuple
    of tensors; each output's Jacobian is checked against each input: built by reverse
    mode (``check_backward_ad``, on by default) and, with ``check_forward_ad=True``, by
    forward mode too, one tangent per input element.  ``check_undefined_grad`` is
    accepted for torch's signature; that check is not made here.  Batched checks
    (``vmap``) are refused.

    >>> import naivegraph as ng
    >>> x = ng.tensor([0.5, -1.0], dtype=ng.float64, requires_grad=True)
    >>> ng.autograd.gradcheck(lambda x: (x ** 2 * x.exp()).sum(), (x,))
    True
    >>> ng.autograd.gradcheck(lambda x: x.sin(), (x,), check_forward_ad=True)
    True
    """
    if not (check_forward_ad or check_backward_ad):
        raise ValueError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True"
        )
    if check_batched_grad:
        raise NotImplementedError(
            "gradcheck(check_batched_grad=True) is not supported: naivegraph checks "
            "one gradient at a time; leave it False"
        )
    modes = [m for m, on in (("backward", check_backward_ad), ("forward", check_forward_ad)) if on]
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    checked = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not checked:
        raise ValueError("gradcheck expects at least one input tensor to require gradient")
    for i in checked:
        if inputs[i].dtype not in (np.float64, np.complex128):
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point "
                "or complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex. (Make it with dtype=ng.float64.)",
                UserWarning,
                stacklevel=2,
            )
    targets = [inputs[i] for i in checked]

    def outputs_of(*ts) -> tuple:
        full = list(inputs)
        for i, t in zip(checked, ts):
            full[i] = t
        out = func(*full)
        return out if isinstance(out, tuple) else (out,)

    for k in range(len(outputs_of(*targets))):

        def kth(*ts, k=k):
            return outputs_of(*ts)[k]

        for mode in modes:
            agree = _jacobians_agree(
                kth, k, checked, targets, eps, atol, rtol, raise_exception, mode
            )
            if not agree:
                return False
    return True


def _jacobians_agree(
    func: Callable,
    k: int,
    checked: list,
    targets: list,
    eps: float,
    atol: float,
    rtol: float,
    raise_exception: bool,
    mode: str = "backward",
) -> bool:
    """Output ``k``'s Jacobians, numerical against analytical (reverse or forward
    mode), per checked input."""
    numeric = numerical_jacobian(func, targets, eps)
    if mode == "forward":
        analytic = forward_jacobian(func, targets)
    else:
        analytic = analytical_jacobian(func, targets)
    for i, n, a in zip(checked, numeric, analytic):
        if not np.allclose(a, n, atol=atol, rtol=rtol):
            if raise_exception:
                kind = "computed with forward mode " if mode == "forward" else ""
                # printed as torch prints them: a row per input element, a column per
                # output element (the transpose of the (output, input) matrices here)
                raise GradcheckError(
                    f"Jacobian {kind}mismatch for output {k} with respect to input {i},\n"
                    f"numerical:{np.asarray(n).T}\nanalytical:{np.asarray(a).T}\n"
                )
            return False
    return True


def gradgradcheck(
    func: Callable,
    inputs,
    grad_outputs=None,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    """True when the second derivatives of ``func`` match finite differences.

    It checks, with :func:`gradcheck`, the function ``(inputs, v) -> v^T J`` that a
    backward pass computes: its derivatives are the second derivatives of ``func`` (and
    ``J`` itself, for ``v``).  ``grad_outputs`` (the ``v``) default to random float64
    tensors drawn from a fixed seed, so a check gives the same answer every run.

    >>> import naivegraph as ng
    >>> x = ng.tensor([0.5, -1.0], dtype=ng.float64, requires_grad=True)
    >>> ng.autograd.gradgradcheck(lambda x: x.sin() * x, (x,))
    True
    """
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    with enable_grad():
        outputs = func(*inputs)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    differentiable = [o for o in outputs if isinstance(o, Tensor) and o.requires_grad]
    if grad_outputs is None:
        grad_outputs = _random_like(differentiable)
    else:
        grad_outputs = (grad_outputs,) if isinstance(grad_outputs, Tensor) else tuple(grad_outputs)
    n_inputs = len(inputs)
    wrt = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]

    def backward_of(*args):
        xs, vs = args[:n_inputs], args[n_inputs:]
        outs = func(*xs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        outs = [o for o in outs if isinstance(o, Tensor) and o.requires_grad]
        grads = grad(outs, [xs[i] for i in wrt], list(vs), create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(backward_of, inputs + tuple(grad_outputs), eps, atol, rtol, raise_exception)


def _random_like(tensors: list) -> tuple:
    """Standard-normal float64 tensors shaped like ``tensors``, requiring grad."""
    rng = np.random.default_rng(0)
    return tuple(
        Tensor(rng.standard_normal(t.shape), dtype=np.float64).requires_grad_(True) for t in tensors
    )
