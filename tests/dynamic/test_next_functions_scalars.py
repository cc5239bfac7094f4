"""``next_functions`` of arithmetic with a Python number on either side, as torch has them.

The introductory PyTorch tutorial ("Autograd" of Learn the Basics / introyt) walks
``grad_fn.next_functions[0][0]`` from ``2 * x``-style expressions: the tensor's edge must
come first, and ``2 - x`` / ``2 ** x`` (torch's Scalar overloads) have a single edge.
"""

import pytest
from torch_oracle import assert_exact, assert_ulps

import naivegraph as ng

torch = pytest.importorskip("torch")

EXPRESSIONS = [
    "x + 2", "2 + x", "x - 2", "2 - x", "x * 2", "2 * x", "x / 2", "2 / x",
    "x ** 2", "2 ** x", "x + 2.5", "2.5 * x", "1.5 - x", "0.5 ** x",
    "x * x", "x - x * 2", "2 * (x + 1)", "3 - 2 * x",
]  # fmt: skip


def structure(node, depth=3):
    """(name, [children...]) down to ``depth``: names of grad_fn nodes and edge indices."""
    if node is None:
        return None
    if depth == 0:
        return type(node).__name__
    return (
        type(node).__name__,
        [(structure(child, depth - 1), index) for child, index in node.next_functions],
    )


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_next_functions_match_torch_with_a_number_on_either_side(expression):
    x_ng = ng.tensor([1.5, -2.0], requires_grad=True, dtype=ng.float64)
    x_torch = torch.tensor([1.5, -2.0], requires_grad=True, dtype=torch.float64)
    got = eval(expression, {"x": x_ng}).grad_fn
    want = eval(expression, {"x": x_torch}).grad_fn
    assert structure(got) == structure(want)


@pytest.mark.parametrize("expression", ["2 - x", "2 ** x", "2 * x", "3.5 + x", "0 ** x"])
def test_gradients_with_a_number_first_match_torch(expression):
    x_ng = ng.tensor([0.0, 1.5, -2.0], requires_grad=True, dtype=ng.float64)
    x_torch = torch.tensor([0.0, 1.5, -2.0], requires_grad=True, dtype=torch.float64)
    eval(expression, {"x": x_ng}).sum().backward()
    eval(expression, {"x": x_torch}).sum().backward()
    if "**" in expression:  # 2 ** x * log(2): pow's last bit depends on the CPU
        assert_ulps(x_ng.grad, x_torch.grad)
    else:
        assert_exact(x_ng.grad, x_torch.grad)
