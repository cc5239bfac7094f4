"""Lesson 12's exercises on a two-input Function (12-4, ``ctx.needs_input_grad``) and on
an op added to the table (12-5, softplus' partial): right answers in every equivalent
form pass; each typical wrong one gets a hint that does not give the answer away."""

from __future__ import annotations

import numpy as np
import pytest
from checker_results import rejection_message
from custom_functions import LINEAR_SECRETS, cube_with, linear_right, linear_with

import naivegraph as ng
from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex
from naivegraph.ops import F

# -- 12-4: a linear Function -----------------------------------------------------------------


def right_with_matmul_and_transpose(ctx, grad_output):
    x, w = ctx.saved_tensors
    needs_x, needs_w = ctx.needs_input_grad
    gx = ng.matmul(grad_output, w.t()) if needs_x else None
    gw = ng.matmul(x.transpose(0, 1), grad_output) if needs_w else None
    return gx, gw


def both_always(ctx, grad_output):
    x, w = ctx.saved_tensors
    return grad_output @ w.T, x.T @ grad_output


def swapped(ctx, grad_output):
    x, w = ctx.saved_tensors
    gx, gw = None, None
    if ctx.needs_input_grad[0]:
        gx = grad_output @ w.T
    if ctx.needs_input_grad[1]:
        gw = x.T @ grad_output
    return gw, gx


def needs_read_backwards(ctx, grad_output):
    x, w = ctx.saved_tensors
    gx = grad_output @ w.T if ctx.needs_input_grad[1] else None
    gw = x.T @ grad_output if ctx.needs_input_grad[0] else None
    return gx, gw


def without_grad_output(ctx, grad_output):
    x, w = ctx.saved_tensors
    ones = ng.ones_like(grad_output)
    gx = ones @ w.T if ctx.needs_input_grad[0] else None
    gw = x.T @ ones if ctx.needs_input_grad[1] else None
    return gx, gw


def transposed_w_grad(ctx, grad_output):
    x, w = ctx.saved_tensors
    gx = grad_output @ w.T if ctx.needs_input_grad[0] else None
    gw = grad_output.T @ x if ctx.needs_input_grad[1] else None
    return gx, gw


def only_w(ctx, grad_output):
    x, w = ctx.saved_tensors
    return None, x.T @ grad_output


@pytest.mark.parametrize("backward", [linear_right, right_with_matmul_and_transpose])
def test_linear_accepts_every_right_form(backward):
    assert ex.check_linear_function(linear_with(backward))


def test_linear_computing_both_gradients_always_is_told_about_needs_input_grad():
    first = rejection_message(ex.check_linear_function(linear_with(both_always)), *LINEAR_SECRETS)
    assert "nobody asked for" in first
    second = rejection_message(ex.check_linear_function(linear_with(both_always)), *LINEAR_SECRETS)
    assert "ctx.needs_input_grad holds one bool per input" in second


@pytest.mark.parametrize(
    "backward, phrase",
    [
        (swapped, "swapped"),
        (needs_read_backwards, "requires grad but got no gradient"),
        (without_grad_output, "does it use grad_output"),
        (transposed_w_grad, "a gradient has the shape of its input"),
        (only_w, "x requires grad but got no gradient"),
    ],
)
def test_linear_rejects_each_typical_mistake_without_the_answer(backward, phrase):
    assert phrase in rejection_message(ex.check_linear_function(linear_with(backward)), *LINEAR_SECRETS)


def test_linear_blank_is_not_done_and_an_instance_is_refused():
    def blank(ctx, grad_output): ...

    assert ex.check_linear_function(linear_with(blank)).status == "todo"
    assert ex.check_linear_function(...).status == "todo"
    assert "pass the class itself" in rejection_message(ex.check_linear_function(linear_right))


def test_linear_backward_that_crashes_is_reported_not_raised():
    def crashes(ctx, grad_output):
        x, w = ctx.saved_tensors
        return grad_output @ w, None  # (4, 2) @ (3, 2)

    assert "your code raised" in rejection_message(ex.check_linear_function(linear_with(crashes)))


# -- 12-5: softplus' partial -------------------------------------------------------------------
SOFTPLUS_SECRETS = ("F.sigmoid", "sigmoid(x)", "1 - F.exp(-out)")


@pytest.mark.parametrize(
    "partial",
    [
        lambda g, x, out: g * F.sigmoid(x),
        lambda g, x, out: g * (1 - F.exp(-out)),
        lambda g, x, out: g / (1 + F.exp(-x)),
        lambda g, x, out: g * F.exp(x - out),
    ],
)
def test_softplus_accepts_every_right_form(partial):
    assert ex.check_softplus_partial(partial)


@pytest.mark.parametrize(
    "partial, phrase",
    [
        (lambda g, x, out: F.sigmoid(x), "the local derivative alone"),
        (lambda g, x, out: g * out, "differentiate log(1 + e^x)"),
        (lambda g, x, out: g * F.exp(x), "differentiate log(1 + e^x)"),
        (lambda g, x, out: g / (1 + F.exp(x)), "check the sign in the exponent"),
        (lambda g, x, out: g * F.log(1 + F.exp(x)) * 2, "with the chain rule"),
    ],
)
def test_softplus_rejects_each_wrong_derivative_without_the_answer(partial, phrase):
    assert phrase in rejection_message(ex.check_softplus_partial(partial), *SOFTPLUS_SECRETS)


@pytest.mark.parametrize(
    "partial",
    [
        lambda g, x, out: g / (1 + np.exp(-x)),
        lambda g, x, out: g * (1 / (1 + np.exp(-np.asarray(x)))),
    ],
)
def test_softplus_written_with_numpy_is_told_to_use_the_library_ops(partial):
    assert "right on numpy arrays" in rejection_message(ex.check_softplus_partial(partial))
    assert "F.<op>" in rejection_message(ex.check_softplus_partial(partial), *SOFTPLUS_SECRETS)


def test_softplus_blank_is_not_done():
    def blank(g, x, out):
        return ...

    assert ex.check_softplus_partial(blank).status == "todo"
    assert ex.check_softplus_partial(...).status == "todo"


def test_linear_blank_reports_once(capsys):
    def blank(ctx, grad_output):
        return ...

    ex.check_linear_function(linear_with(blank))
    assert capsys.readouterr().out.count("[12-4]") == 1


# What a learner working through 12-4 had accepted, although wrong.
def in_place_on_grad_output(ctx, grad_output):
    x, w = ctx.saved_tensors
    g = grad_output.mul_(1.0)
    gx = g @ w.T if ctx.needs_input_grad[0] else None
    gw = x.T @ g if ctx.needs_input_grad[1] else None
    return gx, gw


def through_numpy(ctx, grad_output):
    x, w = ctx.saved_tensors
    gx = ng.tensor(grad_output.numpy() @ w.numpy().T) if ctx.needs_input_grad[0] else None
    gw = ng.tensor(x.numpy().T @ grad_output.numpy()) if ctx.needs_input_grad[1] else None
    return gx, gw


def test_linear_changing_grad_output_in_place_is_rejected():
    message = rejection_message(ex.check_linear_function(linear_with(in_place_on_grad_output)))
    assert "IN PLACE" in message


def test_linear_computed_through_numpy_is_told_it_left_the_graph():
    message = rejection_message(ex.check_linear_function(linear_with(through_numpy)), *LINEAR_SECRETS)
    assert "left the graph" in message and "create_graph=True" in message


# What a learner working through 12-1 had accepted, although wrong: a backward whose
# numbers are right but which detaches x, so a second derivative is lost.
def test_cube_backward_that_detaches_x_is_told_it_left_the_graph():
    def detached(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 3 * x.detach() ** 2

    def through_numpy(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * ng.tensor(3 * x.detach().numpy() ** 2)

    for backward in (detached, through_numpy):
        checking.TRIES.clear()
        message = rejection_message(ex.check_cube_function(cube_with(backward)), "3 * x ** 2")
        assert "left the graph" in message


def test_softplus_with_a_tensor_method_is_told_rules_also_run_on_arrays():
    message = rejection_message(
        ex.check_softplus_partial(lambda g, x, out: g * F.sigmoid(x.detach())), *SOFTPLUS_SECRETS
    )
    assert "raised AttributeError" in message and "runs the table's rules on arrays" in message


# What a learner working through 12-4 had accepted, although wrong: both gradients
# computed every time, None returned for the unneeded one only at the end.
def both_computed_none_returned(ctx, grad_output):
    x, w = ctx.saved_tensors
    gx = grad_output @ w.T
    gw = x.T @ grad_output
    return (gx if ctx.needs_input_grad[0] else None), (gw if ctx.needs_input_grad[1] else None)


def both_computed_through_functions(ctx, grad_output):
    x, w = ctx.saved_tensors
    gx = ng.matmul(grad_output, w.t())
    gw = ng.mm(x.t(), grad_output)
    return (gx if ctx.needs_input_grad[0] else None), (gw if ctx.needs_input_grad[1] else None)


def x_gradient_always_computed(ctx, grad_output):
    x, w = ctx.saved_tensors
    gx = grad_output @ w.T
    gw = x.T @ grad_output if ctx.needs_input_grad[1] else None
    return (gx if ctx.needs_input_grad[0] else None), gw


def right_with_views_taken_first(ctx, grad_output):
    x, w = ctx.saved_tensors
    xt, wt = x.T, w.t()  # views cost no arithmetic
    gx = grad_output @ wt if ctx.needs_input_grad[0] else None
    gw = xt @ grad_output if ctx.needs_input_grad[1] else None
    return gx, gw


@pytest.mark.parametrize(
    "backward, unneeded",
    [
        (both_computed_none_returned, "w"),
        (both_computed_through_functions, "w"),
        (x_gradient_always_computed, "x"),
    ],
)
def test_linear_computing_an_unneeded_gradient_then_returning_none_is_rejected(backward, unneeded):
    first = rejection_message(ex.check_linear_function(linear_with(backward)), *LINEAR_SECRETS)
    assert f"returns None for {unneeded} when {unneeded} needs no gradient" in first
    assert f"computes {unneeded}'s gradient all the same" in first
    second = rejection_message(ex.check_linear_function(linear_with(backward)), *LINEAR_SECRETS)
    assert "BEFORE computing a gradient" in second


def test_linear_taking_views_before_asking_needs_input_grad_is_accepted():
    assert ex.check_linear_function(linear_with(right_with_views_taken_first))


def test_linear_whose_backward_returns_a_list_is_told_what_autograd_takes():
    # torch counts a list as one gradient and refuses it ("expected 2, got 1")
    def as_list(ctx, grad_output):
        return list(linear_right(ctx, grad_output))

    message = rejection_message(ex.check_linear_function(linear_with(as_list)), *LINEAR_SECRETS)
    assert "returned a list" in message and "torch refuses it too" in message


def test_softplus_hints_never_write_the_derivative_out():
    for partial in (lambda g, x, out: g * F.exp(x), lambda g, x, out: g / (1 + F.exp(x))):
        checking.TRIES.clear()
        for _ in range(2):
            message = rejection_message(ex.check_softplus_partial(partial), *SOFTPLUS_SECRETS)
            for formula in ("e^x / (1 + e^x)", "1 / (1 + e^-x)", "met in the op table"):
                assert formula not in message, (formula, message)
