"""The checkers of lessons 10-12 accept right answers in any equivalent form, reject each
typical wrong one with a hint, never print the expected answer, and never raise."""

from __future__ import annotations

import numpy as np
import pytest

import naivegraph as ng
from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex


@pytest.fixture(autouse=True)
def fresh_tries():
    checking.TRIES.clear()


def rejected(result, *secrets: str) -> str:
    """The message of a rejection, after checking it gives none of ``secrets`` away."""
    assert result.status == "fail", result.message
    for secret in secrets:
        assert secret not in result.message, (secret, result.message)
    return result.message


# -- 12-1: a custom Function --------------------------------------------------------------


def cube_with(backward):
    class Cube(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

    Cube.backward = staticmethod(backward)
    return Cube


def right_backward(ctx, grad_output):
    (x,) = ctx.saved_tensors
    return 3 * x**2 * grad_output


def also_right_backward(ctx, grad_output):  # the same, written another way
    (x,) = ctx.saved_tensors
    return grad_output * x * x * 3.0


def no_upstream(ctx, grad_output):
    (x,) = ctx.saved_tensors
    return 3 * x**2


def power_rule_slip(ctx, grad_output):
    (x,) = ctx.saved_tensors
    return 2 * x * grad_output


@pytest.mark.parametrize("backward", [right_backward, also_right_backward])
def test_cube_function_accepts_the_chain_rule_in_any_form(backward):
    assert ex.check_cube_function(cube_with(backward))


def test_cube_function_without_grad_output_gets_a_chain_rule_hint_then_a_stronger_one():
    first = rejected(ex.check_cube_function(cube_with(no_upstream)), "3 * x ** 2 * grad_output")
    assert "what if y feeds further ops" in first
    second = rejected(ex.check_cube_function(cube_with(no_upstream)), "3 * x ** 2 * grad_output")
    assert "multiply the local derivative by grad_output" in second
    assert 'ex.reveal("12-1")' in second


def test_cube_function_with_the_wrong_power_rule_is_sent_to_the_power_rule():
    message = rejected(ex.check_cube_function(cube_with(power_rule_slip)))
    assert "power rule" in message


def test_cube_function_that_raises_is_reported_not_raised():
    def broken(ctx, grad_output):
        return undefined_name  # noqa: F821

    message = rejected(ex.check_cube_function(cube_with(broken)))
    assert "your code raised NameError" in message


def test_cube_function_with_blank_backward_is_not_done_yet():
    assert ex.check_cube_function(cube_with(lambda ctx, g: ...)).status == "todo"
    assert ex.check_cube_function(...).status == "todo"


# -- 12-2: sum back to a shape --------------------------------------------------------------


def sum_to_shape(grad, shape):
    extra = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=stretched, keepdims=True)


def sum_to_shape_by_loop(grad, shape):  # right, written differently
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, n in enumerate(shape):
        if n == 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


def drops_the_kept_ones(grad, shape):  # forgets keepdims
    grad = grad.sum(axis=tuple(range(grad.ndim - len(shape))))
    return grad.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1))


def only_leading(grad, shape):  # forgets stretched dimensions
    return grad.sum(axis=tuple(range(grad.ndim - len(shape))))


def averages(grad, shape):
    return sum_to_shape(grad, shape) / max(1, grad.size // max(1, int(np.prod(shape))))


@pytest.mark.parametrize("fn", [sum_to_shape, sum_to_shape_by_loop])
def test_sum_to_shape_accepts_right_answers(fn):
    assert ex.check_sum_to_shape(fn)


@pytest.mark.parametrize(
    "fn, phrase",
    [(drops_the_kept_ones, "keepdims=True"), (only_leading, "stretch"), (averages, "sum")],
)
def test_sum_to_shape_rejects_typical_mistakes_with_their_hint(fn, phrase):
    assert phrase in rejected(ex.check_sum_to_shape(fn))


def test_sum_to_shape_blank_body_is_not_done_yet():
    assert ex.check_sum_to_shape(lambda grad, shape: None).status == "todo"


# -- 12-3: matmul's backward ----------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda X, W, dY: (dY @ W.T, X.T @ dY),
        lambda X, W, dY: (np.matmul(dY, W.transpose()), (dY.T @ X).T),
    ],
)
def test_matmul_backward_accepts_right_answers(fn):
    assert ex.check_matmul_backward(fn)


@pytest.mark.parametrize(
    "fn, phrase",
    [
        (lambda X, W, dY: (X.T @ dY, dY @ W.T), "swapped"),
        (lambda X, W, dY: (dY @ W, X @ dY), "raised ValueError"),
        (lambda X, W, dY: (dY @ W.T * 2, X.T @ dY), "not the right values"),
        (lambda X, W, dY: (dY @ W.T, (X.T @ dY) + 1), "not the right values"),
    ],
)
def test_matmul_backward_rejects_typical_mistakes(fn, phrase):
    assert phrase in rejected(ex.check_matmul_backward(fn), "dY @ W.T", "X.T @ dY")


def test_matmul_backward_returning_one_array_says_return_two():
    message = rejected(ex.check_matmul_backward(lambda X, W, dY: dY @ W.T))
    assert "(dX, dW)" in message


# -- 12-4: which backward made the NaN ------------------------------------------------------


@pytest.mark.parametrize("name", ["SqrtBackward0", " 'SqrtBackward0' "])
def test_first_nan_accepts_the_name(name):
    assert ex.check_first_nan(name)


@pytest.mark.parametrize(
    "name, phrase", [("sqrt", "exactly as the error spells"), ("MulBackward0", "first line")]
)
def test_first_nan_rejects_close_misses_without_the_answer(name, phrase):
    assert phrase in rejected(ex.check_first_nan(name), "SqrtBackward0")


def test_first_nan_blank_is_not_done_and_a_number_is_refused():
    assert ex.check_first_nan(...).status == "todo"
    assert ex.check_first_nan(3).status == "fail"
