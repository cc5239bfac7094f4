"""``ng.autograd.gradcheck`` itself: it must catch wrong gradients and pass right ones.

Its inputs are float64, as torch's gradcheck wants them (``dtype=ng.float64``, since the
default dtype is float32): finite differences need the precision."""

from __future__ import annotations

import pytest

import naivegraph as ng
from naivegraph.autograd import GradcheckError


def test_gradcheck_passes_view_returning_functions():
    # A reshape or index of the input shares its memory: the finite differences must copy
    # each evaluation before the input is perturbed again.
    x = ng.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=ng.float64, requires_grad=True)
    assert ng.autograd.gradcheck(lambda x: x.reshape(4), (x,))
    assert ng.autograd.gradcheck(lambda x: x[0], (x,))
    assert ng.autograd.gradcheck(lambda x: x.transpose(0, 1), (x,))


def test_gradcheck_of_function_that_calls_autograd_grad():
    # A second-derivative check: the function itself differentiates with create_graph.
    x = ng.tensor([1.0, -2.0, 0.5], dtype=ng.float64, requires_grad=True)

    def first_derivative(x):
        (g,) = ng.autograd.grad((x**3).sum(), x, create_graph=True)
        return g

    assert ng.autograd.gradcheck(first_derivative, (x,))


def test_gradcheck_detects_a_wrong_vjp():
    class WrongSquare(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x  # should be 2 * x

    x = ng.tensor([1.0, 2.0], dtype=ng.float64, requires_grad=True)
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        ng.autograd.gradcheck(WrongSquare.apply, (x,))
    assert ng.autograd.gradcheck(WrongSquare.apply, (x,), raise_exception=False) is False


def test_gradcheck_warns_of_float32_inputs_as_torch_and_its_differences_fail():
    torch = pytest.importorskip("torch")
    message = "Input #0 requires gradient and is not a double precision floating point"
    for lib in (ng, torch):
        x = lib.tensor([1.0, 2.0], dtype=lib.float32, requires_grad=True)
        with pytest.warns(UserWarning, match=message):
            with pytest.raises(GradcheckError if lib is ng else RuntimeError, match="Jacobian"):
                lib.autograd.gradcheck(lambda x: x * 2, (x,))


def test_gradcheck_leaves_inputs_unchanged():
    x = ng.tensor([1.0, 2.0, 3.0], dtype=ng.float64, requires_grad=True)
    ng.autograd.gradcheck(lambda x: (x.exp() * x).sum(), (x,))
    assert x.tolist() == [1.0, 2.0, 3.0] and x.grad is None
