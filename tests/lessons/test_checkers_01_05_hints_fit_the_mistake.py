"""The checkers of lessons 1-5 on answers a learner gave that the hints did not fit:
a wrong answer refused with a hint for that mistake, giving nothing of the answer
away; a right answer, however written, accepted; and the learner's state left as it was."""

from __future__ import annotations

import numpy as np
import pytest
from checker_results import never_states, outcome, rejected_on_first_try

import naivegraph as ng
from naivegraph.lessons import exercises as ex


def derivatives_read_from_x_grad(f, x):  # backward writes into (adds to) the caller's x.grad
    (g,) = ng.autograd.grad(f(x), [x], create_graph=True)
    g.backward()
    return g, x.grad


def derivatives_after_an_extra_backward(f, x):
    f(x).backward()
    (g,) = ng.autograd.grad(f(x), [x], create_graph=True)
    g.backward()
    return g, x.grad


@pytest.mark.parametrize(
    "reads", [derivatives_read_from_x_grad, derivatives_after_an_extra_backward]
)
def test_03_5_a_second_derivative_read_from_x_grad_is_refused(reads, capsys):
    result = rejected_on_first_try(capsys, ex.check_second_derivative, reads, says="x.grad")
    assert "autograd.grad" in result.message
    never_states(result, "create_graph=True)", "(first,)")


def test_03_5_the_callers_x_grad_is_left_as_it_was_by_the_right_answer(capsys):
    def derivatives(f, x):
        (first,) = ng.autograd.grad(f(x), [x], create_graph=True)
        (second,) = ng.autograd.grad(first, [x])
        return first, second

    assert outcome(capsys, ex.check_second_derivative, derivatives).passed


def derivatives_as_one_tuples(f, x):
    first = ng.autograd.grad(f(x), [x], create_graph=True)
    return first, ng.autograd.grad(first[0], [x])


def test_03_5_tuples_from_autograd_grad_are_told_to_unpack_them(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_second_derivative, derivatives_as_one_tuples, says="unpack it"
    )
    never_states(result, "create_graph")


def test_03_5_a_dict_is_told_to_return_two_values(capsys):
    def as_dict(f, x):
        (g,) = ng.autograd.grad(f(x), [x], create_graph=True)
        return {"first": g, "second": ng.autograd.grad(g, [x])[0]}

    rejected_on_first_try(capsys, ex.check_second_derivative, as_dict, says="not a dict")


def test_03_4_the_exact_formula_under_no_grad_is_accepted(capsys):
    def gradf(x):
        with ng.no_grad():
            return (2 * x + x**2) * ng.exp(x)

    assert outcome(capsys, ex.check_manual_gradient, gradf).passed


def test_03_4_numpy_under_no_grad_is_still_refused(capsys):
    def gradf(x):
        with ng.no_grad():
            v = x.detach().numpy()
        return ng.tensor(v * (v + 2) * np.exp(v), dtype=x.dtype)

    rejected_on_first_try(capsys, ex.check_manual_gradient, gradf, says="not numpy")


def reset_leaving_grad_mode_off(a):
    ng.set_grad_enabled(False)
    a[:] = 10.0
    return a


def test_04_3_a_reset_that_leaves_grad_mode_off_is_told_so_and_grad_mode_is_back_on(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_reset_leaf, reset_leaving_grad_mode_off, says="left grad mode off"
    )
    assert "ng.no_grad()" in result.message
    assert ng.is_grad_enabled()


def hook_leaving_grad_mode_off(grad):
    ng.set_grad_enabled(False)
    return grad * 2


def derivatives_changing_the_default_dtype(f, x):
    ng.set_default_dtype(ng.float64)
    (first,) = ng.autograd.grad(f(x), [x], create_graph=True)
    return first, ng.autograd.grad(first, [x])[0]


@pytest.mark.parametrize(
    "check, answer",
    [
        (ex.check_double_hook, hook_leaving_grad_mode_off),
        (ex.check_second_derivative, derivatives_changing_the_default_dtype),
        (ex.check_reset_leaf, reset_leaving_grad_mode_off),
    ],
)
def test_checkers_put_grad_mode_and_the_default_dtype_back(check, answer, capsys):
    dtype = ng.get_default_dtype()
    outcome(capsys, check, answer)
    assert ng.is_grad_enabled()
    assert ng.get_default_dtype() == dtype


def hook_without_return(grad):
    grad * 2


def reset_without_return(a):
    with ng.no_grad():
        a.fill_(10.0)


def setup_without_return(model, n_classes):
    for p in model.parameters():
        p.requires_grad = False
    model.fc = ng.nn.Linear(8, n_classes)
    ng.optim.SGD(model.fc.parameters(), lr=0.1)


@pytest.mark.parametrize(
    "check, answer",
    [
        (ex.check_double_hook, hook_without_return),
        (ex.check_reset_leaf, reset_without_return),
        (ex.check_finetune_setup, setup_without_return),
    ],
)
def test_a_finished_function_without_return_is_wrong_not_unfinished(check, answer, capsys):
    result = rejected_on_first_try(capsys, check, answer, says="no `return`")
    never_states(result, "replace every", "grad * 2", "return a")


def test_03_2_an_error_class_is_told_that_the_second_backward_runs(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_accumulated_grad, RuntimeError, says="That backward runs"
    )
    never_states(result, "12")


def test_03_4_a_forward_difference_is_told_it_is_a_finite_difference(capsys):
    def gradf(x):
        f = lambda t: t**2 * ng.exp(t)  # noqa: E731
        return (f(x + 1e-3) - f(x)) / 1e-3

    rejected_on_first_try(capsys, ex.check_manual_gradient, gradf, says="finite difference")


def test_03_4_a_division_by_x_is_told_it_gives_nan_at_zero(capsys):
    rejected_on_first_try(
        capsys,
        ex.check_manual_gradient,
        lambda x: x**2 * ng.exp(x) * (2 / x + 1),
        says="nan at x = 0: you divide by zero there (0 / 0: a division by x",
    )


def test_03_4_e_to_the_power_x_is_told_to_use_exp(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_manual_gradient,
        lambda x: (2 * x + x**2) * ng.tensor(np.e) ** x,
        says="use ng.exp",
    )
    never_states(result, "finite difference", "2x e^x")
