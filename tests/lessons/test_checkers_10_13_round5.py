"""Lessons 10-13: a weight decay or a step scale too small for float32 to show, a
sum_to_shape that calls the engine, and hints that name the mistake where it is (the
input a nan comes from, both products, a tangent rounded to float32)."""

from __future__ import annotations

import numpy as np
import pytest
from checker_results import rejection_message
from custom_functions import cube_with
from dual_numbers import DUAL_SECRETS, Dual, dual_from, exact_div, exact_mul
from lesson_answers_10_13 import cube_dividing_by_x, sum_by_hand

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import exercises as ex

# -- 10-1: what float32 rounds away, float64 shows ------------------------------------------
UPDATE_SECRETS = ("assign(w1 - ", "w - lr * grad", "learning_rate * grad_w1")


def lesson_network(update, lr=1e-6, step=None):
    """The lesson's network, float32 and with its learning rate, updated by ``update``
    (or, given ``step(loss, w1, w2, lr)``, by the node it builds, as both updates)."""
    rng = np.random.default_rng(10)
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 100), dtype=np.float32)
        y = ns.placeholder("y", shape=(None, 10), dtype=np.float32)
        w1 = ns.Variable(rng.standard_normal((100, 30)).astype(np.float32), name="w1")
        w2 = ns.Variable(rng.standard_normal((30, 10)).astype(np.float32), name="w2")
        loss = ns.sum((ns.matmul(ns.relu(ns.matmul(x, w1)), w2) - y) ** 2.0)
        if step is not None:
            new_w1 = new_w2 = step(loss, w1, w2, lr)
        else:
            grad_w1, grad_w2 = ns.gradients(loss, [w1, w2])
            new_w1, new_w2 = update(w1, grad_w1, lr), update(w2, grad_w2, lr)
    return g, x, y, w1, w2, new_w1, new_w2, lr


@pytest.mark.parametrize(
    "update",
    [
        lambda w, grad, lr: w.assign(w - lr * grad - lr * 1e-4 * w),  # SGD's weight_decay
        lambda w, grad, lr: w.assign(w * (1 - 1e-9) - lr * grad),
        lambda w, grad, lr: w.assign(w - lr * grad - 1e-12 * w),
    ],
)
def test_update_with_a_weight_decay_float32_cannot_show_is_refused(update):
    message = rejection_message(ex.check_update_nodes(*lesson_network(update)), *UPDATE_SECRETS)
    assert "gradient is exactly 0" in message and "float64" in message


@pytest.mark.parametrize("scale", [1.00001, 0.99999, 1.0000001, 1 + 1e-9])
def test_update_with_a_step_scaled_by_a_hair_is_refused_with_its_factor(scale):
    def scaled(w, grad, lr):
        return w.assign(w - lr * scale * grad)

    message = rejection_message(ex.check_update_nodes(*lesson_network(scaled)), *UPDATE_SECRETS)
    assert f"its step is {scale:.12g} times a step of gradient descent" in message


@pytest.mark.parametrize(
    "update",
    [
        lambda w, grad, lr: w.assign(w - np.float32(lr) * grad),
        lambda w, grad, lr: w.assign(w - ns.Constant(np.float32(lr)) * grad),
        lambda w, grad, lr: w.assign(w - ns.Constant(np.array(lr)) * grad),
        lambda w, grad, lr: w.assign(w - grad / (1 / lr)),
        lambda w, grad, lr: w.assign(w - 2 * lr * grad / 2),
        lambda w, grad, lr: w.assign(-(lr * grad - w)),
    ],
)
def test_update_written_any_right_way_still_passes_in_float64(update):
    args = lesson_network(update)
    before = args[3].value.copy(), args[4].value.copy()
    assert ex.check_update_nodes(*args)
    assert np.array_equal(args[3].value, before[0]) and np.array_equal(args[4].value, before[1])


# -- 12-2: the sum written by hand, not asked of the engine ---------------------------------
SUM_SECRETS = ("keepdims=True)", "range(grad.ndim", "axis=0")


def sum_by_backward(grad, shape):
    small = ng.tensor(np.zeros(shape), requires_grad=True)
    (small.expand(*grad.shape) * ng.tensor(grad)).sum().backward()
    return small.grad.numpy()


def sum_by_autograd_grad(grad, shape):
    small = ng.tensor(np.zeros(shape), requires_grad=True)
    (summed,) = ng.autograd.grad(
        small + ng.zeros(grad.shape, dtype=ng.float64), small, ng.tensor(grad)
    )
    return summed.numpy()


@pytest.mark.parametrize("fn", [sum_by_backward, sum_by_autograd_grad])
def test_sum_to_shape_that_runs_the_engine_is_refused_with_why(fn):
    message = rejection_message(ex.check_sum_to_shape(fn), *SUM_SECRETS)
    assert "calls the autograd engine" in message
    assert "must not re-enter autograd" in message


def test_sum_to_shape_by_hand_with_numpy_still_passes():
    assert ex.check_sum_to_shape(sum_by_hand)


# -- 12-1: a nan named where it appears ------------------------------------------------------
CUBE_SECRETS = ("3 * x ** 2", "3 * x**2", "3x^2", "x ** 2 * grad_output")


def cube_by_log(ctx, grad_output):  # exp(2 log x) is nan for x < 0, fine at x = 0
    (x,) = ctx.saved_tensors
    return 3 * (2 * x.log()).exp() * grad_output


def cube_by_sqrt(ctx, grad_output):
    (x,) = ctx.saved_tensors
    return 3 * x.sqrt() ** 4 * grad_output


@pytest.mark.parametrize("backward", [cube_by_log, cube_by_sqrt])
def test_cube_nan_at_a_negative_x_is_placed_there_not_at_zero(backward):
    message = rejection_message(ex.check_cube_function(cube_with(backward)), *CUBE_SECRETS)
    assert "at x = -1 your backward gives nan" in message and "negative number" in message
    assert "x = 0" not in message and "divides by x" not in message


def test_cube_nan_at_zero_still_blames_the_division_by_x():
    message = rejection_message(
        ex.check_cube_function(cube_with(cube_dividing_by_x)), *CUBE_SECRETS
    )
    assert "at x = 0 your backward gives nan" in message and "divides by x" in message


# -- 12-3: both products, and no shape advice for right shapes ------------------------------
MATMUL_SECRETS = ("dY @ W.T", "X.T @ dY", "W.T", "X.T")


def both_untransposed(X, W, dY):
    return dY @ W, X @ dY


def dX_right_dW_untransposed(X, W, dY):
    return dY @ W.T, X @ dY


def dX_untransposed_dW_right(X, W, dY):
    return dY @ W, X.T @ dY


def both_squared(X, W, dY):
    return (dY @ W.T) ** 2, (X.T @ dY) ** 2


def dW_shifted(X, W, dY):
    return dY @ W.T, X.T @ dY + 1.0


def both_nudged(X, W, dY):
    return dY @ W.T + 1e-9, X.T @ dY + 1e-9


def test_matmul_backward_with_both_products_unfit_says_both():
    message = rejection_message(ex.check_matmul_backward(both_untransposed), *MATMUL_SECRETS)
    assert "both of your products need fixing" in message and "one of your" not in message


@pytest.mark.parametrize(
    "fn, name", [(dX_right_dW_untransposed, "dW"), (dX_untransposed_dW_right, "dX")]
)
def test_matmul_backward_with_one_product_unfit_names_it(fn, name):
    message = rejection_message(ex.check_matmul_backward(fn), *MATMUL_SECRETS)
    assert f"your product for {name} does not fit" in message


@pytest.mark.parametrize(
    "fn, says",
    [
        (both_squared, "dX and dW both have the right shape but not the right values"),
        (dW_shifted, "dW has the right shape but not the right values"),
        (both_nudged, "close but not exact"),
    ],
)
def test_matmul_backward_with_right_shapes_gets_no_shape_advice(fn, says):
    first = rejection_message(ex.check_matmul_backward(fn), *MATMUL_SECRETS)
    again = rejection_message(ex.check_matmul_backward(fn), *MATMUL_SECRETS)
    assert says in first
    for message in (first, again):
        assert "write the shapes down" not in message and "inner sizes" not in message


# -- 11-1: a result rounded to float32 is told so -------------------------------------------
def mul_tangent_in_float32(u, v):
    return Dual(u.value * v.value, np.float32(u.tangent * v.value + u.value * v.tangent))


def mul_tangent_through_float32(u, v):
    return Dual(u.value * v.value, float(np.float32(u.tangent * v.value + u.value * v.tangent)))


def div_tangent_in_float32(u, v):
    return Dual(
        u.value / v.value, np.float32((u.tangent * v.value - u.value * v.tangent) / v.value**2)
    )


def mul_value_in_float32(u, v):
    return Dual(np.float32(u.value * v.value), u.tangent * v.value + u.value * v.tangent)


@pytest.mark.parametrize(
    "mul, div, what",
    [
        (mul_tangent_in_float32, exact_div, "mul's tangent"),
        (mul_tangent_through_float32, exact_div, "mul's tangent"),
        (exact_mul, div_tangent_in_float32, "div's tangent"),
        (mul_value_in_float32, exact_div, "mul's value"),
    ],
)
def test_dual_result_rounded_to_float32_is_told_to_stay_float64(mul, div, what):
    message = rejection_message(ex.check_dual_rules(dual_from(mul, div)), *DUAL_SECRETS)
    assert f"{what} is rounded to float32" in message and "keep the result float64" in message
    assert "finite difference is off" not in message


def test_dual_rules_exact_in_float64_still_pass():
    assert ex.check_dual_rules(dual_from(exact_mul, exact_div))


def test_update_by_an_optimizers_step_is_told_it_is_no_assign_node():
    def by_optimizer(loss, w1, w2, lr):
        return ns.optim.SGD([w1, w2], lr=lr).minimize(loss)

    args = lesson_network(None, step=by_optimizer)
    message = rejection_message(ex.check_update_nodes(*args), *UPDATE_SECRETS)
    assert "group of updates" in message and "not an assign node" in message
    assert "weight decay" not in message


def mul_without_return(u, v):
    Dual(u.value * v.value, u.tangent * v.value + u.value * v.tangent)


def mul_as_a_pair(u, v):
    return (u.value * v.value, u.tangent * v.value + u.value * v.tangent)


def test_dual_mul_without_return_is_told_it_returns_none():
    message = rejection_message(
        ex.check_dual_rules(dual_from(mul_without_return, exact_div)), *DUAL_SECRETS
    )
    assert "your mul returned None" in message and "`return`" in message
    assert "AttributeError" not in message


def test_dual_mul_returning_a_pair_is_told_to_return_a_dual():
    message = rejection_message(
        ex.check_dual_rules(dual_from(mul_as_a_pair, exact_div)), *DUAL_SECRETS
    )
    assert "your mul returned a tuple, not a Dual" in message


# -- 12-1, 12-2, 12-3: a body written in full that lacks its return -------------------------
def cube_without_return(ctx, grad_output):
    (x,) = ctx.saved_tensors
    grad_input = 3 * x**2 * grad_output  # noqa: F841


def sum_to_shape_without_return(grad, shape):
    grad = grad.sum(axis=tuple(range(grad.ndim - len(shape))))
    grad = grad.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)  # noqa: F841


def matmul_backward_without_return(X, W, dY):
    dX = dY @ W.T  # noqa: F841
    dW = X.T @ dY  # noqa: F841


def test_cube_backward_without_return_is_asked_for_its_return():
    message = rejection_message(
        ex.check_cube_function(cube_with(cube_without_return)), *CUBE_SECRETS
    )
    assert "autograd got None from your backward" in message and "`return`" in message


@pytest.mark.parametrize(
    "check, fn",
    [
        (ex.check_sum_to_shape, sum_to_shape_without_return),
        (ex.check_matmul_backward, matmul_backward_without_return),
    ],
)
def test_function_written_in_full_without_return_is_told_so_not_left_blank(check, fn):
    result = check(fn)
    message = rejection_message(result, *SUM_SECRETS, *MATMUL_SECRETS)
    assert "has no `return`" in message and "replace every" not in message
