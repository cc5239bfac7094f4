"""Lesson 12's checkers refuse answers that pass on small 1-D float64 examples but break
in the engine: a gradient of the wrong shape or dtype, a backward that writes .grad, a
rule that bounds x, inputs changed in place, forward-mode autograd where a rule was to
be written.  Each refusal names the mistake without the answer; every right form,
usual or not, still passes."""

from __future__ import annotations

import numpy as np
import pytest
from checker_results import rejection_message
from custom_functions import LINEAR_SECRETS, cube_right, cube_with, linear_right, linear_with
from lesson_answers_10_13 import sum_to_shape as sum_right

import naivegraph as ng
from naivegraph.lessons import exercises as ex

# -- 12-1: a custom Function --------------------------------------------------------------
CUBE_SECRETS = ("3 * x ** 2", "3 * x**2", "3x^2", "grad_output * 3")


def cube_right_by_mul(ctx, grad_output):
    (x,) = ctx.saved_tensors
    return ng.mul(grad_output, x.pow(2)).mul(3.0)


def cube_flattened(ctx, grad_output):
    (x,) = ctx.saved_tensors
    return (3 * x**2 * grad_output).flatten()


def cube_summed_over_rows(ctx, grad_output):
    (x,) = ctx.saved_tensors
    g = 3 * x**2 * grad_output
    return g.sum(0) if x.ndim > 1 else g


def cube_writes_grad(ctx, grad_output):
    (x,) = ctx.saved_tensors
    x.grad = 3 * x**2 * grad_output
    return x.grad


def cube_as_float32(ctx, grad_output):
    (x,) = ctx.saved_tensors
    return (3 * x**2 * grad_output).float()


def cube_to_float32(ctx, grad_output):
    (x,) = ctx.saved_tensors
    return (3 * x**2 * grad_output).to(ng.float32)


def cube_clamped(ctx, grad_output):
    (x,) = ctx.saved_tensors
    return 3 * x.clamp(min=-1e3, max=1e3) ** 2 * grad_output


@pytest.mark.parametrize("backward", [cube_right, cube_right_by_mul])
def test_cube_right_forms_pass_on_matrices_scalars_and_large_x(backward):
    assert ex.check_cube_function(cube_with(backward))


@pytest.mark.parametrize("backward", [cube_flattened, cube_summed_over_rows])
def test_cube_gradient_reshaped_is_told_to_keep_x_shape(backward):
    message = rejection_message(ex.check_cube_function(cube_with(backward)), *CUBE_SECRETS)
    assert "exactly x's shape" in message
    assert "raised" not in message


def test_cube_backward_writing_x_grad_is_told_autograd_adds_it():
    message = rejection_message(ex.check_cube_function(cube_with(cube_writes_grad)), *CUBE_SECRETS)
    assert "writes x.grad" in message and "twice" in message


@pytest.mark.parametrize("backward", [cube_as_float32, cube_to_float32])
def test_cube_gradient_in_float32_is_told_to_keep_the_dtype(backward):
    message = rejection_message(ex.check_cube_function(cube_with(backward)), *CUBE_SECRETS)
    assert "keep the input's dtype" in message


def test_cube_gradient_that_bounds_x_is_caught_at_large_x():
    message = rejection_message(ex.check_cube_function(cube_with(cube_clamped)), *CUBE_SECRETS)
    assert "large" in message and "bounds or clips" in message


# -- 12-2: sum_to_shape ---------------------------------------------------------------------
SUM_SECRETS = ("range(grad.ndim", "keepdims=True)", "n == 1")


def sum_right_by_loops(grad, shape):
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


def sum_if_not_while(grad, shape):
    if grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=stretched, keepdims=True)


def sum_first_stretched_only(grad, shape):
    grad = grad.sum(axis=tuple(range(grad.ndim - len(shape))))
    for i, n in enumerate(shape):
        if n == 1 and grad.shape[i] != 1:
            return grad.sum(axis=i, keepdims=True)
    return grad


def sum_in_float32(grad, shape):
    return sum_right(grad, shape).astype(np.float32)


@pytest.mark.parametrize("fn", [sum_right, sum_right_by_loops])
def test_sum_to_shape_right_forms_pass_with_two_leading_and_two_stretched_axes(fn):
    assert ex.check_sum_to_shape(fn)


@pytest.mark.parametrize(
    "fn, phrase",
    [
        (sum_if_not_while, "MORE than one leading dimension"),
        (sum_first_stretched_only, "MORE than one dimension may be stretched"),
    ],
)
def test_sum_to_shape_handling_one_axis_only_is_told_there_may_be_several(fn, phrase):
    message = rejection_message(ex.check_sum_to_shape(fn), *SUM_SECRETS)
    assert phrase in message


def test_sum_to_shape_in_float32_is_told_to_keep_the_dtype():
    message = rejection_message(ex.check_sum_to_shape(sum_in_float32), *SUM_SECRETS)
    assert "keep the input's dtype" in message


# -- 12-3: the backward of a matrix product -------------------------------------------------
MATMUL_SECRETS = ("dY @ W.T", "X.T @ dY", "W.T", "X.T")


def matmul_right(X, W, dY):
    return dY @ W.T, X.T @ dY


def matmul_right_by_einsum(X, W, dY):
    return np.einsum("nk,dk->nd", dY, W), np.einsum("nd,nk->dk", X, dY)


def matmul_updates_w(X, W, dY):
    dW = X.T @ dY
    W -= 0.1 * dW
    return dY @ W.T, dW


def matmul_scales_dy(X, W, dY):
    dY *= 1.0
    dY[0, 0] += 1.0
    return dY @ W.T, X.T @ dY


def matmul_by_ng_jacfwd(X, W, dY):
    import naivegraph as ng

    x, w, dy = (ng.tensor(a, dtype=ng.float64) for a in (X, W, dY))
    jx = ng.func.jacfwd(lambda x_: (x_ @ w * dy).sum())(x)
    jw = ng.func.jacfwd(lambda w_: (x @ w_ * dy).sum())(w)
    return jx.numpy(), jw.numpy()


def matmul_by_torch_jacfwd(X, W, dY):
    import torch

    x, w, dy = (torch.tensor(a) for a in (X, W, dY))
    jx = torch.func.jacfwd(lambda x_: (x_ @ w * dy).sum())(x)
    jw = torch.func.jacfwd(lambda w_: (x @ w_ * dy).sum())(w)
    return jx.numpy(), jw.numpy()


def matmul_by_torch_dual_numbers(X, W, dY):
    import torch
    import torch.autograd.forward_ad as fwAD

    w, dy = torch.tensor(W), torch.tensor(dY)
    dX = np.zeros_like(X)
    with fwAD.dual_level():
        for i in np.ndindex(X.shape):
            seed = torch.zeros(X.shape, dtype=torch.float64)
            seed[i] = 1.0
            y = fwAD.make_dual(torch.tensor(X), seed) @ w
            dX[i] = float((fwAD.unpack_dual(y).tangent * dy).sum())
    return dX, X.T @ dY


def matmul_in_float32(X, W, dY):
    return (dY @ W.T).astype(np.float32), (X.T @ dY).astype(np.float32)


def matmul_sign_flipped(X, W, dY):
    return -dY @ W.T, -X.T @ dY


def matmul_averaged(X, W, dY):
    return dY @ W.T, X.T @ dY / X.shape[0]


@pytest.mark.parametrize("fn", [matmul_right, matmul_right_by_einsum])
def test_matmul_backward_right_forms_pass(fn):
    assert ex.check_matmul_backward(fn)


@pytest.mark.parametrize("fn, name", [(matmul_updates_w, "W"), (matmul_scales_dy, "dY")])
def test_matmul_backward_changing_an_input_in_place_is_refused(fn, name):
    message = rejection_message(ex.check_matmul_backward(fn), *MATMUL_SECRETS)
    assert f"changed {name} IN PLACE" in message


@pytest.mark.parametrize(
    "fn, library",
    [
        (matmul_by_ng_jacfwd, "naivegraph's"),
        (matmul_by_torch_jacfwd, "torch's"),
        (matmul_by_torch_dual_numbers, "torch's"),
    ],
)
def test_matmul_backward_by_forward_mode_autograd_is_refused(fn, library):
    message = rejection_message(ex.check_matmul_backward(fn), *MATMUL_SECRETS)
    assert f"asks {library} autograd" in message


def test_matmul_backward_in_float32_is_told_to_keep_float64():
    message = rejection_message(ex.check_matmul_backward(matmul_in_float32), *MATMUL_SECRETS)
    assert "keep float64" in message and "finite difference" not in message


@pytest.mark.parametrize(
    "fn, phrase",
    [(matmul_sign_flipped, "wrong sign"), (matmul_averaged, "constant factor")],
)
def test_matmul_backward_off_by_a_factor_is_told_so(fn, phrase):
    message = rejection_message(ex.check_matmul_backward(fn), *MATMUL_SECRETS)
    assert phrase in message and "write the shapes down" not in message


# -- 12-4: a linear Function ----------------------------------------------------------------


def linear_right_with_size_checks(ctx, grad_output):
    x, w = ctx.saved_tensors
    assert len(x) == len(grad_output)
    assert x.numel() == x.shape[0] * x.size(1) and w.dim() == 2
    assert len(w) == w.shape[0]
    grad_x = grad_w = None
    if ctx.needs_input_grad[0]:
        grad_x = grad_output @ w.T
    if ctx.needs_input_grad[1]:
        grad_w = x.T @ grad_output
    return grad_x, grad_w


def linear_w_in_float32(ctx, grad_output):
    grad_x, grad_w = linear_right(ctx, grad_output)
    return grad_x, None if grad_w is None else grad_w.float()


def linear_updates_w(ctx, grad_output):
    grad_x, grad_w = linear_right(ctx, grad_output)
    _, w = ctx.saved_tensors
    if grad_w is not None:
        w.data -= 0.1 * grad_w.data
    return grad_x, grad_w


def linear_zeroes_x(ctx, grad_output):
    grad_x, grad_w = linear_right(ctx, grad_output)
    x, _ = ctx.saved_tensors
    x.data.zero_()
    return grad_x, grad_w


@pytest.mark.parametrize("backward", [linear_right, linear_right_with_size_checks])
def test_linear_right_forms_pass_even_reading_sizes_of_an_unneeded_input(backward):
    assert ex.check_linear_function(linear_with(backward))


def test_linear_gradient_in_float32_is_told_to_keep_the_dtype():
    message = rejection_message(ex.check_linear_function(linear_with(linear_w_in_float32)), *LINEAR_SECRETS)
    assert "keep the input's dtype" in message


@pytest.mark.parametrize("backward, name", [(linear_updates_w, "w"), (linear_zeroes_x, "x")])
def test_linear_changing_a_saved_tensor_is_told_so(backward, name):
    message = rejection_message(ex.check_linear_function(linear_with(backward)), *LINEAR_SECRETS)
    assert f"changed the saved {name} IN PLACE" in message
    assert "not needed" not in message
