"""Lessons 10-13: answers that give the right numbers on easy inputs but are wrong (a
dimension told by its size, a derivative by finite differences, a formula that overflows,
a library Jacobian where the loop was to be written, an input changed in place) are
refused with a hint that names the mistake and not the answer; the right answer, in its
usual and its unusual forms, still passes."""

from __future__ import annotations

import numpy as np
import pytest
from checker_results import rejection_message
from custom_functions import LINEAR_SECRETS, cube_with, linear_with
from dual_numbers import DUAL_SECRETS, Dual, dual_from, exact_div, exact_mul
from lesson_answers_10_13 import cube_dividing_by_x as divides_by_x
from polynomial_graph import poly_graph

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex
from naivegraph.ops import F

# -- 12-2: sum back to a shape --------------------------------------------------------------
SUM_SECRETS = ("keepdims=True)", "range(grad.ndim", "axis=0")


def sum_by_size(grad, shape):
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    axes = tuple(i for i, n in enumerate(grad.shape) if n not in shape)
    return grad.sum(axis=axes, keepdims=True)


def sum_by_size_reshaped(grad, shape):
    return sum_by_size(grad, shape).reshape(shape)


def sum_then_zero_the_callers_grad(grad, shape):
    extra = grad.ndim - len(shape)
    out = grad.sum(axis=tuple(range(extra)))
    out = out.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)
    grad[...] = 0
    return out


def sum_by_position_from_the_right(grad, shape):  # right, written unusually
    padded = (1,) * (grad.ndim - len(shape)) + tuple(shape)
    axes = tuple(i for i, n in enumerate(padded) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=axes, keepdims=True).reshape(shape)


@pytest.mark.parametrize("fn", [sum_by_size, sum_by_size_reshaped])
def test_sum_to_shape_telling_dimensions_by_size_is_refused(fn):
    assert "POSITION" in rejection_message(ex.check_sum_to_shape(fn), *SUM_SECRETS)


def test_sum_to_shape_writing_into_the_callers_grad_is_refused():
    message = rejection_message(ex.check_sum_to_shape(sum_then_zero_the_callers_grad), *SUM_SECRETS)
    assert "IN PLACE" in message


def test_sum_to_shape_by_position_from_the_right_is_accepted():
    assert ex.check_sum_to_shape(sum_by_position_from_the_right)


# -- 12-1: x ** 3 as a Function -------------------------------------------------------------
CUBE_SECRETS = ("3 * x ** 2", "3 * x**2", "3x^2", "x ** 2 * grad_output")


def finite_difference(ctx, grad_output):
    (x,) = ctx.saved_tensors
    return ((x + 1e-4) ** 3 - (x - 1e-4) ** 3) / 2e-4 * grad_output


def fine_finite_difference(ctx, grad_output):
    (x,) = ctx.saved_tensors
    return ((x + 1e-6) ** 3 - (x - 1e-6) ** 3) / 2e-6 * grad_output


def autograd_inside(ctx, grad_output):
    (x,) = ctx.saved_tensors
    with ng.enable_grad():
        (grad,) = ng.autograd.grad(x**3, x, grad_output, create_graph=True)
    return grad


def backward_inside(ctx, grad_output):
    (x,) = ctx.saved_tensors
    leaf = x.detach().requires_grad_()
    with ng.enable_grad():
        (leaf**3).backward(grad_output)
    return leaf.grad


def cube_rule(name, combine):
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return combine(3 * x**2, grad_output)

    backward.__name__ = name
    return backward


def right_by_pow_and_mul(ctx, grad_output):  # right, written unusually
    (x,) = ctx.saved_tensors
    return ng.mul(grad_output, x.pow(2)).mul(3)


def test_cube_backward_dividing_by_x_is_refused_at_x_zero():
    message = rejection_message(ex.check_cube_function(cube_with(divides_by_x)), *CUBE_SECRETS)
    assert "divides by x" in message


@pytest.mark.parametrize("backward", [finite_difference, fine_finite_difference])
def test_cube_backward_by_finite_differences_is_refused(backward):
    message = rejection_message(ex.check_cube_function(cube_with(backward)), *CUBE_SECRETS)
    assert "not exact" in message


@pytest.mark.parametrize("backward", [autograd_inside, backward_inside])
def test_cube_backward_asking_autograd_is_refused(backward):
    message = rejection_message(ex.check_cube_function(cube_with(backward)), *CUBE_SECRETS)
    assert "asks autograd" in message


@pytest.mark.parametrize(
    "combine",
    [
        lambda local, g: local * g.sum(),
        lambda local, g: local * g.mean(),
        lambda local, g: local / g,
        lambda local, g: local + g,
    ],
)
def test_cube_backward_with_grad_output_combined_wrongly_is_told_how_it_enters(combine):
    message = rejection_message(ex.check_cube_function(cube_with(cube_rule("b", combine))), *CUBE_SECRETS)
    assert "how grad_output enters" in message
    assert "finite difference" not in message and "cube(" not in message


def test_cube_backward_in_an_unusual_right_form_is_accepted():
    assert ex.check_cube_function(cube_with(right_by_pow_and_mul))


# -- 12-3: matmul's backward ----------------------------------------------------------------
MATMUL_SECRETS = ("dY @ W.T", "X.T @ dY", "W.T", "X.T")


def matmul_by_torch(X, W, dY):
    import torch

    x = torch.tensor(X, requires_grad=True)
    w = torch.tensor(W, requires_grad=True)
    (x @ w).backward(torch.tensor(dY))
    return x.grad.numpy(), w.grad.numpy()


def matmul_by_torch_grad(X, W, dY):
    import torch

    x = torch.tensor(X, requires_grad=True)
    w = torch.tensor(W, requires_grad=True)
    gx, gw = torch.autograd.grad(x @ w, (x, w), torch.tensor(dY))
    return gx.numpy(), gw.numpy()


def matmul_by_central_differences(X, W, dY):
    h = 1e-6
    grads = []
    for array in (X, W):
        grad = np.zeros_like(array)
        for index in np.ndindex(array.shape):
            saved = array[index]
            array[index] = saved + h
            up = np.sum((X @ W) * dY)
            array[index] = saved - h
            down = np.sum((X @ W) * dY)
            array[index] = saved
            grad[index] = (up - down) / (2 * h)
        grads.append(grad)
    return tuple(grads)


def matmul_with_ones(X, W, dY):
    return np.ones_like(dY) @ W.T, X.T @ np.ones_like(dY)


def matmul_by_einsum(X, W, dY):  # right, written unusually
    return np.einsum("nk,dk->nd", dY, W), np.einsum("nd,nk->dk", X, dY)


@pytest.mark.parametrize("fn", [matmul_by_torch, matmul_by_torch_grad])
def test_matmul_backward_asking_torchs_autograd_is_refused(fn):
    message = rejection_message(ex.check_matmul_backward(fn), *MATMUL_SECRETS)
    assert "asks torch's autograd" in message


def test_matmul_backward_by_central_differences_is_refused():
    message = rejection_message(ex.check_matmul_backward(matmul_by_central_differences), *MATMUL_SECRETS)
    assert "not exact" in message


def test_matmul_backward_leaving_dy_out_is_told_that_dy_must_enter():
    message = rejection_message(ex.check_matmul_backward(matmul_with_ones), *MATMUL_SECRETS)
    assert "dY must enter" in message


def test_matmul_backward_by_einsum_is_accepted():
    assert ex.check_matmul_backward(matmul_by_einsum)


# -- 12-5: softplus' partial ----------------------------------------------------------------
SOFTPLUS_SECRETS = ("F.sigmoid", "sigmoid(x)", "1 - F.exp(-out)")


def softplus_central_difference(g, x, out):
    return g * (F.log(1 + F.exp(x + 1e-6)) - F.log(1 + F.exp(x - 1e-6))) / 2e-6


def softplus_overflowing(g, x, out):
    return g * F.exp(x) / (1 + F.exp(x))


def test_softplus_by_finite_differences_is_refused():
    message = rejection_message(ex.check_softplus_partial(softplus_central_difference), *SOFTPLUS_SECRETS)
    assert "not exact" in message


def test_softplus_that_overflows_at_large_x_is_refused():
    message = rejection_message(ex.check_softplus_partial(softplus_overflowing), *SOFTPLUS_SECRETS)
    assert "x = 800" in message and "overflows" in message


@pytest.mark.parametrize(
    "partial",
    [
        lambda g, x, out: g * F.sigmoid(x),
        lambda g, x, out: F.sigmoid(x) * g,
        lambda g, x, out: g * (1 - F.exp(-out)),
        lambda g, x, out: g * F.exp(x - out),
    ],
)
def test_softplus_right_forms_pass_at_large_x_too(partial):
    assert ex.check_softplus_partial(partial)


def test_softplus_hint_names_a_way_to_list_the_ops():
    for _ in range(2):
        message = rejection_message(ex.check_softplus_partial(lambda g, x, out: g * out), *SOFTPLUS_SECRETS)
    assert "dir(F)" in message


# -- 11-2 and 11-3: Jacobians from JVPs and from VJPs ---------------------------------------
JACOBIAN_SECRETS = ("ng.eye(", "(seed,)", "vjp_fn(seed)", "dim=1)", "dim=0)")


def columns_by_central_differences(f, x):
    n = x.shape[0]
    seeds = [ng.eye(n, dtype=x.dtype)[i] for i in range(n)]
    return ng.stack([(f(x + 1e-6 * s) - f(x - 1e-6 * s)) / 2e-6 for s in seeds], dim=1)


def columns_by_forward_differences(f, x):
    n = x.shape[0]
    seeds = [ng.eye(n, dtype=x.dtype)[i] for i in range(n)]
    return ng.stack([(f(x + 1e-7 * s) - f(x)) / 1e-7 for s in seeds], dim=1)


def columns_by_jacrev(f, x):
    return ng.stack([ng.func.jacrev(f)(x)[:, i] for i in range(x.shape[0])], dim=1)


def columns_by_vjp_rows(f, x):
    y, vjp_fn = ng.func.vjp(f, x)
    m, n = y.shape[0], x.shape[0]
    rows = ng.stack([vjp_fn(ng.eye(m, dtype=y.dtype)[i])[0] for i in range(m)], dim=0)
    return ng.stack([rows[:, i] for i in range(n)], dim=1)


def columns_by_forward_ad(f, x):  # right, written unusually: the dual-number API
    import naivegraph.autograd.forward_ad as fwAD

    n = x.shape[0]
    columns = []
    for i in range(n):
        with fwAD.dual_level():
            dual = fwAD.make_dual(x, ng.eye(n, dtype=x.dtype)[i])
            columns.append(fwAD.unpack_dual(f(dual)).tangent)
    return ng.stack(columns, dim=1)


def rows_by_jvp_keeping_the_templates_vjp(f, x):
    y, vjp_fn = ng.func.vjp(f, x)
    n = x.shape[0]
    columns = [ng.func.jvp(f, (x,), (ng.eye(n, dtype=x.dtype)[i],))[1] for i in range(n)]
    return ng.stack(columns, dim=1)


def rows_by_central_differences(f, x):
    y, vjp_fn = ng.func.vjp(f, x)
    return columns_by_central_differences(f, x)


@pytest.mark.parametrize("fn", [columns_by_central_differences, columns_by_forward_differences])
def test_jacobian_forward_by_finite_differences_is_refused(fn):
    assert "not exact" in rejection_message(ex.check_jacobian_forward(fn), *JACOBIAN_SECRETS)


def test_jacobian_forward_from_jacrev_is_refused():
    message = rejection_message(ex.check_jacobian_forward(columns_by_jacrev), *JACOBIAN_SECRETS)
    assert "jacrev" in message and "writes that loop itself" in message


def test_jacobian_forward_from_reverse_mode_passes_is_refused():
    message = rejection_message(ex.check_jacobian_forward(columns_by_vjp_rows), *JACOBIAN_SECRETS)
    assert "reverse-mode passes" in message


@pytest.mark.parametrize("library", ["jacfwd", "jacrev"])
def test_jacobians_from_the_library_functions_are_refused(library):
    whole = lambda f, x: getattr(ng.func, library)(f)(x)  # noqa: E731
    assert "writes that loop itself" in rejection_message(ex.check_jacobian_forward(whole))
    checking.TRIES.clear()
    assert "writes that loop itself" in rejection_message(ex.check_jacobian_reverse(whole))


def test_jacobian_forward_with_the_forward_ad_api_is_accepted():
    assert ex.check_jacobian_forward(columns_by_forward_ad)


def test_jacobian_reverse_in_forward_mode_is_told_so_not_that_rows_recorded_f_again():
    message = rejection_message(
        ex.check_jacobian_reverse(rows_by_jvp_keeping_the_templates_vjp), *JACOBIAN_SECRETS
    )
    assert "forward-mode passes" in message and "recorded the forward pass" not in message


def test_jacobian_reverse_by_finite_differences_is_refused():
    message = rejection_message(ex.check_jacobian_reverse(rows_by_central_differences), *JACOBIAN_SECRETS)
    assert "not exact" in message


# -- 11-1: dual numbers ---------------------------------------------------------------------


def finite_difference_mul(u, v, h=1e-6):
    moved = (u.value + h * u.tangent) * (v.value + h * v.tangent)
    return Dual(u.value * v.value, (moved - u.value * v.value) / h)


def finite_difference_div(u, v, h=1e-6):
    moved = (u.value + h * u.tangent) / (v.value + h * v.tangent)
    return Dual(u.value / v.value, (moved - u.value / v.value) / h)


def mul_changing_u(u, v):
    tangent = u.tangent * v.value + u.value * v.tangent
    u.value = u.value * v.value
    u.tangent = tangent
    return u


def div_by_reciprocal(u, v):  # right, written unusually: u * (1 / v)
    inverse = Dual(1.0 / v.value, -v.tangent / v.value**2)
    return Dual(u.value * inverse.value, u.tangent * inverse.value + u.value * inverse.tangent)


@pytest.mark.parametrize(
    "mul, div", [(finite_difference_mul, exact_div), (exact_mul, finite_difference_div)]
)
def test_dual_rules_by_finite_differences_are_refused(mul, div):
    message = rejection_message(ex.check_dual_rules(dual_from(mul, div)), *DUAL_SECRETS)
    assert "not exact" in message


def test_dual_mul_that_changes_u_in_place_is_told_so():
    message = rejection_message(ex.check_dual_rules(dual_from(mul_changing_u, exact_div)), *DUAL_SECRETS)
    assert "in place" in message and "the values are plain" not in message


def test_dual_div_through_the_reciprocal_is_accepted():
    assert ex.check_dual_rules(dual_from(exact_mul, div_by_reciprocal))


# -- 10-1: update nodes ---------------------------------------------------------------------
UPDATE_SECRETS = ("assign(w1 - ", "w - lr * grad", "learning_rate * grad_w1")


def lesson_network(update, lr=1e-6):
    """The lesson's network, float32 and with its learning rate, updated by ``update``."""
    rng = np.random.default_rng(10)
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 100), dtype=np.float32)
        y = ns.placeholder("y", shape=(None, 10), dtype=np.float32)
        w1 = ns.Variable(rng.standard_normal((100, 30)).astype(np.float32), name="w1")
        w2 = ns.Variable(rng.standard_normal((30, 10)).astype(np.float32), name="w2")
        loss = ns.sum((ns.matmul(ns.relu(ns.matmul(x, w1)), w2) - y) ** 2.0)
        grad_w1, grad_w2 = ns.gradients(loss, [w1, w2])
        new_w1, new_w2 = update(w1, grad_w1, lr), update(w2, grad_w2, lr)
    return g, x, y, w1, w2, new_w1, new_w2, lr


def test_update_with_a_weight_decay_slipped_in_is_refused():
    decayed = lambda w, grad, lr: w.assign(w * (1 - lr) - lr * grad)  # noqa: E731
    message = rejection_message(ex.check_update_nodes(*lesson_network(decayed)), *UPDATE_SECRETS)
    assert "gradient is exactly 0" in message


def test_the_same_update_node_passed_twice_is_told_both_update_w1():
    args = list(lesson_network(lambda w, grad, lr: w.assign(w - lr * grad)))
    args[6] = args[5]
    message = rejection_message(ex.check_update_nodes(*args), *UPDATE_SECRETS)
    assert "both update w1" in message and "one and the same node" in message


@pytest.mark.parametrize(
    "update",
    [
        lambda w, grad, lr: w.assign(w - lr * grad),
        lambda w, grad, lr: ns.assign(w, w - grad * lr),
        lambda w, grad, lr: w.assign(w + (-lr) * grad),
        lambda w, grad, lr: w.assign(-(lr * grad - w)),
    ],
)
def test_update_in_the_lessons_float32_network_accepts_every_right_form(update):
    args = lesson_network(update)
    before = args[3].value.copy()
    assert ex.check_update_nodes(*args)
    assert np.array_equal(args[3].value, before)


# -- 10-3: the while_loop body --------------------------------------------------------------
POLY_SECRETS = ("p + 1.0", "y + e", "e * x**p", "(next p, y plus")


def check_body(make_body):
    poly, more, base, xp, top, weights = poly_graph()
    body = make_body(xp, *weights)
    return ex.check_poly_loop(poly, more, body, base, xp, top, weights)


@pytest.mark.parametrize(
    "make_body, phrase",
    [
        (lambda xp, a, b, c, d, e: lambda p, y: (p + 1.0, y - e * xp**p), "wrong sign"),
        (lambda xp, a, b, c, d, e: lambda p, y: (p + 1.0, y + d * xp**p), "wrong coefficient"),
        (lambda xp, a, b, c, d, e: lambda p, y: (p + 1.0, y + xp**p), "wrong coefficient"),
        (lambda xp, a, b, c, d, e: lambda p, y: (p + 2.0, y + e * xp**p), "skips terms"),
    ],
)
def test_poly_loop_hint_names_the_terms_mistake_not_the_order(make_body, phrase):
    checking.TRIES.clear()
    for _ in range(2):  # the stronger hint is a nudge, not the body
        message = rejection_message(check_body(make_body), *POLY_SECRETS)
    assert phrase in message and "order of loop_vars" not in message


def test_poly_loop_with_swapped_results_is_told_the_order():
    swapped = lambda xp, a, b, c, d, e: lambda p, y: (y + e * xp**p, p + 1.0)  # noqa: E731
    assert "yours come swapped" in rejection_message(check_body(swapped), *POLY_SECRETS)


def test_poly_loop_accepts_the_term_and_the_step_written_the_other_way_round():
    def make(xp, a, b, c, d, e):
        return lambda p, y: (1.0 + p, y + xp**p * e)

    assert check_body(make)


# -- 12-4: a linear Function ----------------------------------------------------------------


def zeros_when_unneeded(ctx, grad_output):
    x, w = ctx.saved_tensors
    gx = grad_output @ w.T if ctx.needs_input_grad[0] else ng.zeros_like(x)
    gw = x.T @ grad_output if ctx.needs_input_grad[1] else ng.zeros_like(w)
    return gx, gw


def gated_on_requires_grad(ctx, grad_output):
    x, w = ctx.saved_tensors
    gx = grad_output @ w.T if x.requires_grad else None
    gw = x.T @ grad_output if w.requires_grad else None
    return gx, gw


def right_reading_needs_by_name(ctx, grad_output):  # right, written unusually
    x, w = ctx.saved_tensors
    wants = dict(zip("xw", ctx.needs_input_grad))
    return (
        ng.matmul(grad_output, w.mT) if wants["x"] else None,
        ng.matmul(x.mT, grad_output) if wants["w"] else None,
    )


def test_linear_returning_zeros_for_an_unneeded_input_is_told_to_return_none():
    message = rejection_message(ex.check_linear_function(linear_with(zeros_when_unneeded)), *LINEAR_SECRETS)
    assert "return None, not zeros" in message and "thrown away" not in message


def test_linear_deciding_from_requires_grad_is_told_to_read_needs_input_grad():
    message = rejection_message(
        ex.check_linear_function(linear_with(gated_on_requires_grad)), *LINEAR_SECRETS
    )
    assert "ctx.needs_input_grad instead" in message and "got no gradient" not in message


def test_linear_gated_on_requires_grad_loses_the_gradient_of_a_detached_saved_input():
    # why the flag is not the contract: a Function may save detached copies
    class SavesDetached(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x.detach(), w.detach())
            return x @ w

        backward = staticmethod(gated_on_requires_grad)

    x = ng.tensor(np.ones((2, 3)), requires_grad=True)
    w = ng.tensor(np.ones((3, 2)), requires_grad=True)
    SavesDetached.apply(x, w).sum().backward()
    assert x.grad is None and w.grad is None


def test_linear_reading_needs_input_grad_by_name_is_accepted():
    assert ex.check_linear_function(linear_with(right_reading_needs_by_name))
