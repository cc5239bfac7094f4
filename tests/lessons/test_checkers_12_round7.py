"""Lesson 12's hints name the mistake an answer made: grad mode switched off inside a
backward (with grad mode put back), autograd run inside an op's backward, a rule that
changes g in place or casts its gradient to float32, gradients cast to longdouble.
Each hint gives no answer away, and the right forms still pass."""

from __future__ import annotations

import numpy as np
import pytest
from checker_results import rejection_message
from custom_functions import LINEAR_SECRETS, cube_right, cube_with, linear_right, linear_with

import naivegraph as ng
from naivegraph.autograd.function import once_differentiable
from naivegraph.lessons import exercises as ex
from naivegraph.ops import F

CUBE_SECRETS = ("3 * x ** 2", "3 * x**2", "3x^2", "grad_output * 3")
SOFTPLUS_SECRETS = ("F.sigmoid", "sigmoid(x)", "1 - F.exp(-out)")
MATMUL_SECRETS = ("dY @ W.T", "X.T @ dY")


# -- grad mode switched off inside backward (12-1, 12-4) ----------------------------------
def cube_grad_off(ctx, grad_output):
    ng.set_grad_enabled(False)
    (x,) = ctx.saved_tensors
    return 3 * x**2 * grad_output


def cube_in_no_grad(ctx, grad_output):
    (x,) = ctx.saved_tensors
    with ng.no_grad():
        return 3 * x**2 * grad_output


@once_differentiable
def cube_once_differentiable(ctx, grad_output):
    (x,) = ctx.saved_tensors
    return 3 * x**2 * grad_output


def cube_in_enable_grad(ctx, grad_output):
    (x,) = ctx.saved_tensors
    with ng.enable_grad():
        return 3 * x**2 * grad_output


@pytest.mark.parametrize("backward", [cube_grad_off, cube_in_no_grad])
def test_cube_backward_switching_grad_mode_off_is_told_so(backward):
    message = rejection_message(ex.check_cube_function(cube_with(backward)), *CUBE_SECRETS)
    assert "your backward switches grad mode off" in message
    assert "the second derivative of x^3 is lost" in message
    assert "left the graph" not in message
    assert ng.is_grad_enabled() is True


def test_cube_backward_switched_off_by_the_librarys_once_differentiable_is_told_it_left_the_graph():
    message = rejection_message(
        ex.check_cube_function(cube_with(cube_once_differentiable)), *CUBE_SECRETS
    )
    assert "your gradient left the graph" in message
    assert "grad mode" not in message


@pytest.mark.parametrize("backward", [cube_right, cube_in_enable_grad])
def test_cube_backward_leaving_grad_mode_to_autograd_still_passes(backward):
    assert ex.check_cube_function(cube_with(backward))


def linear_grad_off(ctx, grad_output):
    ng.set_grad_enabled(False)
    return linear_right(ctx, grad_output)


def linear_in_no_grad(ctx, grad_output):
    with ng.no_grad():
        return linear_right(ctx, grad_output)


@pytest.mark.parametrize("backward", [linear_grad_off, linear_in_no_grad])
def test_linear_backward_switching_grad_mode_off_is_told_so_and_grad_mode_is_put_back(backward):
    result = ex.check_linear_function(linear_with(backward))
    message = rejection_message(result, *LINEAR_SECRETS)
    assert "your backward switches grad mode off" in message
    assert "a second derivative through Linear is lost" in message
    assert "element 0 of tensors" not in message
    assert "left grad mode changed" not in message
    assert ng.is_grad_enabled() is True


@pytest.mark.parametrize(
    "check, right",
    [
        (ex.check_cube_function, cube_with(cube_right)),
        (ex.check_linear_function, linear_with(linear_right)),
        (ex.check_softplus_partial, lambda g, x, out: g * F.sigmoid(x)),
    ],
)
def test_right_answers_still_pass_when_checked_with_grad_mode_off(check, right):
    with ng.no_grad():
        assert check(right)
        assert ng.is_grad_enabled() is False
    assert ng.is_grad_enabled() is True


def test_linear_backward_switching_grad_mode_off_is_told_so_when_checked_with_grad_mode_off():
    with ng.no_grad():
        message = rejection_message(
            ex.check_linear_function(linear_with(linear_grad_off)), *LINEAR_SECRETS
        )
        assert ng.is_grad_enabled() is False
    assert "your backward switches grad mode off" in message


# -- autograd inside 12-4's backward -------------------------------------------------------
def linear_by_autograd_grad(ctx, grad_output):
    x, w = ctx.saved_tensors
    with ng.enable_grad():
        xx, ww = x.detach().requires_grad_(), w.detach().requires_grad_()
        grad_x, grad_w = ng.autograd.grad(xx @ ww, (xx, ww), grad_output)
    need_x, need_w = ctx.needs_input_grad
    return (grad_x if need_x else None), (grad_w if need_w else None)


def linear_by_tensor_backward(ctx, grad_output):
    x, w = ctx.saved_tensors
    with ng.enable_grad():
        xx, ww = x.detach().requires_grad_(), w.detach().requires_grad_()
        (xx @ ww).backward(grad_output)
    need_x, need_w = ctx.needs_input_grad
    return (xx.grad if need_x else None), (ww.grad if need_w else None)


@pytest.mark.parametrize("backward", [linear_by_autograd_grad, linear_by_tensor_backward])
def test_linear_backward_running_autograd_is_told_it_asks_autograd(backward):
    result = ex.check_linear_function(linear_with(backward))
    message = rejection_message(result, *LINEAR_SECRETS)
    assert "your backward asks autograd for the gradients" in message
    assert "although it is not needed" not in message
    assert ng.is_grad_enabled() is True


# -- 12-5: g changed in place, a float32 gradient ------------------------------------------
def softplus_in_place(g, x, out):
    g *= F.sigmoid(x)
    return g


def softplus_float32(g, x, out):
    return (g * F.sigmoid(x)).astype(np.float32)


def softplus_float(g, x, out):
    return (g * F.sigmoid(x)).float()


def test_softplus_changing_g_in_place_is_told_so():
    message = rejection_message(ex.check_softplus_partial(softplus_in_place), *SOFTPLUS_SECRETS)
    assert "your rule changed g IN PLACE" in message
    assert "np.*" not in message


def test_softplus_cast_to_float32_is_told_to_keep_the_inputs_dtype():
    message = rejection_message(ex.check_softplus_partial(softplus_float32), *SOFTPLUS_SECRETS)
    assert "your gradient is float32 while g and x are float64: keep the input's dtype" in message
    assert "approximat" not in message


def test_softplus_cast_by_float_names_float32():
    message = rejection_message(ex.check_softplus_partial(softplus_float), *SOFTPLUS_SECRETS)
    assert ".float() would give a float32 gradient" in message


@pytest.mark.parametrize(
    "partial",
    [
        lambda g, x, out: g * F.sigmoid(x),
        lambda g, x, out: g * (1 - F.exp(-out)),
        lambda g, x, out: F.sigmoid(x) * g,
    ],
)
def test_softplus_right_forms_still_pass(partial):
    assert ex.check_softplus_partial(partial)


# -- 12-3: gradients cast to longdouble ----------------------------------------------------
@pytest.mark.skipif(
    np.dtype(np.longdouble).itemsize <= 8, reason="longdouble is float64 on this platform"
)
@pytest.mark.parametrize("which", ["dX", "dW"])
def test_matmul_backward_cast_to_longdouble_is_told_float64_neither_lower_nor_higher(which):
    def longer(X, W, dY):
        dX, dW = dY @ W.T, X.T @ dY
        if which == "dX":
            return dX.astype(np.longdouble), dW
        return dX, dW.astype(np.longdouble)

    message = rejection_message(ex.check_matmul_backward(longer), *MATMUL_SECRETS)
    assert f"{which} is {np.dtype(np.longdouble)} (numpy's longdouble)" in message
    assert "its input's dtype, float64 here, neither lower nor higher" in message
    assert "lower precision loses digits" not in message


def test_matmul_backward_cast_to_float32_is_still_told_it_loses_digits():
    message = rejection_message(
        ex.check_matmul_backward(lambda X, W, dY: ((dY @ W.T).astype(np.float32), X.T @ dY)),
        *MATMUL_SECRETS,
    )
    assert "dX is float32 while X, W and dY are float64: keep float64" in message


def test_matmul_backward_by_hand_still_passes():
    assert ex.check_matmul_backward(lambda X, W, dY: (dY @ W.T, X.T @ dY))
