"""gradcheck's mismatch message prints the Jacobians as torch does: one row per input
element, one column per output element."""

from __future__ import annotations

import numpy as np
import pytest

import naivegraph as ng
from naivegraph.autograd import GradcheckError


class ForgetsGradOutput(ng.autograd.Function):
    """x ** 3 whose backward returns the local derivative alone."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 3 * x**2


def mismatch_message() -> str:
    x = ng.tensor([0.5, -1.0, 2.0], dtype=ng.float64, requires_grad=True)
    with pytest.raises(GradcheckError) as caught:
        ng.autograd.gradcheck(ForgetsGradOutput.apply, (x,))
    return str(caught.value)


def test_mismatch_prints_the_analytical_jacobian_with_a_row_per_input_element():
    message = mismatch_message()
    analytical = message.split("analytical:")[1].strip()
    # each input element's row holds its own 3 x^2, once per output element
    assert analytical == str(np.array([[0.75] * 3, [3.0] * 3, [12.0] * 3]))


def test_mismatch_message_has_torchs_first_line_and_the_numerical_jacobian():
    message = mismatch_message()
    assert message.startswith("Jacobian mismatch for output 0 with respect to input 0,\n")
    numerical = message.split("numerical:")[1].split("analytical:")[0].strip()
    assert numerical == str(np.diag([0.75, 3.0, 12.0]))


def test_the_layout_is_torchs():
    torch = pytest.importorskip("torch")

    class TorchForgets(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return 3 * x**2

    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError) as caught:
        torch.autograd.gradcheck(TorchForgets.apply, (x,))
    torch_rows = str(caught.value).split("analytical:")[1].strip().splitlines()
    assert torch_rows[0].count("0.7500") == 3  # torch's first row: input 0, every output
    analytical = mismatch_message().split("analytical:")[1].strip().splitlines()
    assert analytical[0].count("0.75") == 3
