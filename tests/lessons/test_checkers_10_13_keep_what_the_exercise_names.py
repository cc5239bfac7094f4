"""Lessons 10-13: answers whose numbers are right but that lose what the exercise is
about (a second derivative, the variable an update names) are refused with a hint that
names the loss, and right answers still pass."""

from __future__ import annotations

import numpy as np
import pytest
from checker_results import rejection_message
from custom_functions import LINEAR_SECRETS, cube_right, cube_with, linear_right, linear_with

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import exercises as ex
from naivegraph.ops import F

SOFTPLUS_SECRETS = ("F.sigmoid", "sigmoid(x)", "1 - F.exp(-out)")


# -- 12-5: softplus' partial -------------------------------------------------------------------


def softplus_detaching_tensors(g, x, out):
    return g * F.sigmoid(x.detach()) if hasattr(x, "detach") else g * F.sigmoid(x)


def test_softplus_rule_that_detaches_x_on_tensors_is_told_it_left_the_graph():
    message = rejection_message(
        ex.check_softplus_partial(softplus_detaching_tensors), *SOFTPLUS_SECRETS
    )
    assert "left the graph" in message and "second derivative" in message


@pytest.mark.parametrize(
    "partial",
    [
        lambda g, x, out: g * F.sigmoid(x),
        lambda g, x, out: g * (1 - F.exp(-out)),
        lambda g, x, out: g * F.exp(x - out),
        lambda g, x, out: g / (1 + F.exp(-x)),
    ],
)
def test_softplus_right_forms_keep_the_second_derivative(partial):
    assert ex.check_softplus_partial(partial)


# -- 10-1: update nodes ------------------------------------------------------------------------
UPDATE_SECRETS = ("assign(w1 - ", "assign(w2 - ", "learning_rate * grad_w")


def network_with_updates():
    """A small two-layer static network, its updates and what 10-1's checker is given."""
    rng = np.random.default_rng(3)
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 5))
        y = ns.placeholder("y", shape=(None, 2))
        w1 = ns.Variable(rng.standard_normal((5, 3)).astype(np.float32), name="w1")
        w2 = ns.Variable(rng.standard_normal((3, 2)).astype(np.float32), name="w2")
        loss = ns.sum((ns.matmul(ns.relu(ns.matmul(x, w1)), w2) - y) ** 2.0)
        grad_w1, grad_w2 = ns.gradients(loss, [w1, w2])
        new_w1, new_w2 = w1.assign(w1 - 1e-3 * grad_w1), w2.assign(w2 - 1e-3 * grad_w2)
    return [g, x, y, w1, w2, new_w1, new_w2, 1e-3]


def test_updates_given_in_swapped_names_are_told_new_w1_should_update_w1():
    args = network_with_updates()
    args[5], args[6] = args[6], args[5]
    message = rejection_message(ex.check_update_nodes(*args), *UPDATE_SECRETS)
    assert "new_w1 should update w1" in message


def test_updates_in_their_own_names_still_pass():
    assert ex.check_update_nodes(*network_with_updates())


# -- 12-1: the cube's backward -----------------------------------------------------------------
CUBE_SECRETS = ("3 * x ** 2", "3 * x**2")


def cube_scaling_x_data(ctx, grad_output):
    (x,) = ctx.saved_tensors
    grad = 3 * x**2 * grad_output
    x.data.mul_(2.0)
    return grad


def cube_multiplying_x_by_one(ctx, grad_output):
    (x,) = ctx.saved_tensors
    x.mul_(1.0)
    return 3 * x**2 * grad_output


def cube_zeroing_a_detached_x(ctx, grad_output):
    (x,) = ctx.saved_tensors
    grad = 3 * x**2 * grad_output
    x.detach().zero_()
    return grad


def cube_writing_through_numpy(ctx, grad_output):
    (x,) = ctx.saved_tensors
    grad = 3 * x**2 * grad_output
    x.detach().numpy()[...] = 0.0
    return grad


@pytest.mark.parametrize(
    "backward",
    [
        cube_scaling_x_data,
        cube_multiplying_x_by_one,
        cube_zeroing_a_detached_x,
        cube_writing_through_numpy,
    ],
)
def test_cube_backward_that_changes_the_saved_x_is_told_so(backward):
    message = rejection_message(ex.check_cube_function(cube_with(backward)), *CUBE_SECRETS)
    assert "changed the saved x IN PLACE" in message and "left the graph" not in message


def test_cube_right_backward_still_passes():
    assert ex.check_cube_function(cube_with(cube_right))


# -- 11-2 and 11-3: Jacobians from JVPs and VJPs -----------------------------------------------
JACOBIAN_SECRETS = ("ng.func.jvp(f, (x,)", "vjp_fn(ng.eye", "ng.eye(n")


def columns_by_jvp(f, x):
    n = x.shape[0]
    seeds = ng.eye(n, dtype=x.dtype)
    return ng.stack([ng.func.jvp(f, (x,), (seeds[i],))[1] for i in range(n)], dim=1)


def rows_by_vjp(f, x):
    y, vjp_fn = ng.func.vjp(f, x)
    seeds = ng.eye(y.shape[0], dtype=y.dtype)
    return ng.stack([vjp_fn(seeds[i])[0] for i in range(y.shape[0])], dim=0)


def columns_made_float(f, x):
    return columns_by_jvp(f, x).float()


def rows_through_lists(f, x):
    return ng.tensor(rows_by_vjp(f, x).tolist(), dtype=ng.float32)


@pytest.mark.parametrize(
    "check, jacobian",
    [
        (ex.check_jacobian_forward, columns_made_float),
        (ex.check_jacobian_reverse, rows_through_lists),
    ],
)
def test_jacobian_that_loses_float64_is_told_to_keep_it(check, jacobian):
    message = rejection_message(check(jacobian), *JACOBIAN_SECRETS)
    assert "keep float64" in message and "finite difference" not in message


def test_jacobians_in_float64_still_pass():
    assert ex.check_jacobian_forward(columns_by_jvp)
    assert ex.check_jacobian_reverse(rows_by_vjp)


# -- 12-4: a linear Function -------------------------------------------------------------------


def linear_w_averaged_over_the_batch(ctx, grad_output):
    x, w = ctx.saved_tensors
    gx, gw = linear_right(ctx, grad_output)
    return gx, None if gw is None else gw / x.shape[0]


def test_linear_gradient_divided_by_the_batch_is_told_the_constant_factor():
    message = rejection_message(
        ex.check_linear_function(linear_with(linear_w_averaged_over_the_batch)), *LINEAR_SECRETS
    )
    assert "constant factor" in message and "does it use grad_output" not in message


def test_linear_right_backward_still_passes():
    assert ex.check_linear_function(linear_with(linear_right))


# -- 13-3: the branch a trace baked in ---------------------------------------------------------
BAKED_SECRETS = ("3 graphs", '("tanh"')


@pytest.mark.parametrize("count", [3.7, True, float("nan")])
def test_baked_branch_count_that_is_no_whole_number_is_not_told_about_quotes(count):
    message = rejection_message(ex.check_baked_branch(("tanh", count)), *BAKED_SECRETS)
    assert "whole number" in message and "quotes" not in message


def test_baked_branch_count_in_quotes_is_told_to_drop_them():
    message = rejection_message(ex.check_baked_branch(("tanh", "3")), *BAKED_SECRETS)
    assert "without quotes" in message


@pytest.mark.parametrize("op", ["tanh_1", "%tanh_1", "relu_2"])
def test_baked_branch_node_name_is_told_to_give_the_op(op):
    message = rejection_message(ex.check_baked_branch((op, 3)), *BAKED_SECRETS)
    assert "give the op, not the node's name" in message


def test_baked_branch_op_in_its_spellings_still_passes():
    assert ex.check_baked_branch(("tanh", 3))
    assert ex.check_baked_branch(("x.tanh()", 3.0))


# -- 12-3: matmul's backward -------------------------------------------------------------------
MATMUL_SECRETS = ("dY @ W.T", "X.T @ dY")


def matmul_backward_with_ones(X, W, dY):
    ones = np.ones_like(dY)
    return ones @ W.T, X.T @ ones


def matmul_backward_by_torch_forward_mode(X, W, dY):
    import torch

    def product(x, w):
        return (x @ w * torch.from_numpy(dY)).sum()

    jac = torch.func.jacfwd(product, argnums=(0, 1))(torch.from_numpy(X), torch.from_numpy(W))
    return jac[0].numpy(), jac[1].numpy()


def test_matmul_backward_with_ones_is_not_nudged_about_shapes_that_are_right():
    first = rejection_message(ex.check_matmul_backward(matmul_backward_with_ones), *MATMUL_SECRETS)
    again = rejection_message(ex.check_matmul_backward(matmul_backward_with_ones), *MATMUL_SECRETS)
    assert "upstream gradient dY must enter" in first
    assert "inner sizes" not in again and "shapes are right" in again


def test_matmul_backward_by_torch_forward_mode_is_not_said_to_run_a_backward_pass():
    message = rejection_message(
        ex.check_matmul_backward(matmul_backward_by_torch_forward_mode), *MATMUL_SECRETS
    )
    assert "asks torch's autograd" in message and "backward pass" not in message


def test_matmul_backward_right_answer_still_passes():
    assert ex.check_matmul_backward(lambda X, W, dY: (dY @ W.T, X.T @ dY))
