"""Differential fuzzing of ``ng.func`` with closures over tensors that require grad.

Every input ``x0 .. xk`` of a random program (``random_programs``) requires grad.  A
transform differentiates ``y -> L(y, x1 .. xk) * L(x0, x1 .. xk)`` at ``y = x0``: the
same tensor is the argument *and* is captured, so a transform that does not keep to its
own argument (perturbation confusion) differentiates the captured ``x0`` too.  The
transform's result must equal torch.func's, and so must the gradients of that result
(weighted) with respect to every captured input: the result's graph reaches the caller's
tensors as torch's does.  In-place steps are left out (torch.func refuses an in-place
write into a captured leaf).  Raise the example count with ``NAIVEGRAPH_FUZZ_EXAMPLES``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

torch = pytest.importorskip("torch")

from random_programs import (  # noqa: E402
    FUZZ,
    OP_KINDS,
    DynamicBackend,
    TorchBackend,
    _torch_array,
    assert_close,
    build,
    programs,
)

import naivegraph as ng  # noqa: E402

pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning"
)
NO_INPLACE = sorted(set(OP_KINDS) - {"inplace"})


class _Fed:
    """A backend whose leaves are the tensors given."""

    def __init__(self, leaves):
        self._leaves = iter(leaves)

    def leaf(self, array, spec=None, name=None):
        return next(self._leaves)


class _FedTorch(_Fed, TorchBackend):
    def __init__(self, leaves):
        TorchBackend.__init__(self)
        _Fed.__init__(self, leaves)


class _FedDynamic(_Fed, DynamicBackend):
    def __init__(self, leaves):
        DynamicBackend.__init__(self)
        _Fed.__init__(self, leaves)


LIBS = {"torch": (torch, _FedTorch), "naivegraph": (ng, _FedDynamic)}


def _captured(lib, program) -> list:
    return [lib.tensor(a, requires_grad=True) for a in program.input_arrays()]


def _weights(shape) -> np.ndarray:
    return np.random.default_rng(len(shape) + 7).normal(size=shape)


def _array(lib, t) -> np.ndarray:
    return _torch_array(t) if lib is torch else t.detach().numpy()


def _grads_through(lib, result, leaves) -> list[np.ndarray]:
    """d <result, w> / d leaf for every captured leaf (zeros where it does not reach)."""
    if not result.requires_grad:
        return [np.zeros(tuple(x.shape)) for x in leaves]
    w = lib.tensor(_weights(tuple(result.shape)))
    found = lib.autograd.grad((result * w).sum(), leaves, allow_unused=True)
    return [
        np.zeros(tuple(x.shape)) if g is None else _array(lib, g) for g, x in zip(found, leaves)
    ]


def grad_with_captures(name: str, program) -> list[np.ndarray]:
    lib, Fed = LIBS[name]
    xs = _captured(lib, program)

    def f(y):
        return build(Fed([y, *xs[1:]]), program)[2] * build(Fed(xs), program)[2]

    result = lib.func.grad(f)(xs[0])
    return [_array(lib, result), *_grads_through(lib, result, xs)]


def vjp_with_captures(name: str, program) -> list[np.ndarray]:
    lib, Fed = LIBS[name]
    xs = _captured(lib, program)

    def f(y):
        last = build(Fed([y, *xs[1:]]), program)[1][-1]
        return last * build(Fed(xs), program)[2]

    output, vjp_fn = lib.func.vjp(f, xs[0])
    (result,) = vjp_fn(lib.tensor(_weights(tuple(output.shape))))
    return [_array(lib, result), *_grads_through(lib, result, xs)]


def _assert_same(got: list, want: list, label: str) -> None:
    assert_close(got[0], want[0], f"{label}: the transform's result")
    for k, (a, b) in enumerate(zip(got[1:], want[1:])):
        assert_close(a, b, f"{label}: gradient of the result with respect to captured x{k}")


@FUZZ
@given(program=programs(kinds=NO_INPLACE))
def test_fuzz_func_grad_keeps_to_its_argument_as_torch_func(program):
    _assert_same(
        grad_with_captures("naivegraph", program), grad_with_captures("torch", program), "grad"
    )


@FUZZ
@given(program=programs(kinds=NO_INPLACE))
def test_fuzz_func_vjp_keeps_to_its_argument_as_torch_func(program):
    _assert_same(
        vjp_with_captures("naivegraph", program), vjp_with_captures("torch", program), "vjp"
    )
