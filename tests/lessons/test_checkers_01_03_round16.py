"""The checkers of lessons 1 and 3 on a sixteenth round of answers, where the refusal
was right but its hint did not fit: in 01-1 a whole tensor the learner typed is told
that one element is asked, not that it was read off the model; in 03-3 a set is told
it has no order and None that it is no answer; in 03-4 a cast to float32 inside the
formula is named as the precision lost, a constant added to the derivative as a
constant, and an e^x that holds only near 0 (a cut series, a clamp) as such.  Each
wrong answer is refused with a hint naming the mistake and no answer; the right forms
are still accepted."""

from __future__ import annotations

import math

import pytest
from checker_results import never_states, outcome, refused, rejected_on_first_try
from lesson_answers_01_05 import CHECK_01_1, MODEL
from lesson_answers_06_07 import notebook_shell, run_in_notebook

import naivegraph as ng
from naivegraph.lessons import exercises as ex

TYPED_REST = "l2_value, l3_value, l4_value, loss_value = 5, 8, 40, 40\n"
FORMULA = ("2x e^x + x^2 e^x", "2 * x * ng.exp(x) +", "x ** 2 * ng.exp(x)")


@pytest.fixture
def shell():
    yield from notebook_shell()


# ----------------------------------------------------- 01-1: a whole tensor typed in


@pytest.mark.parametrize(
    "above, cell",
    [
        ("", "l1_value = ng.ones([2, 2]) * 2\n"),
        ("", "l1_value = ng.full((2, 2), 2.0)\n"),
        ("typed = ng.ones([2, 2]) * 2", "l1_value = typed\n"),
    ],
    ids=["ones-times-two", "full", "typed-in-a-cell-above"],
)
def test_01_1_a_whole_tensor_typed_in_is_told_one_element_is_asked_not_that_it_was_read_off(
    shell, above, cell
):
    result = run_in_notebook(shell, MODEL, above, cell + TYPED_REST + CHECK_01_1)
    refused(result, "ONE number is asked, one element of the layer, and yours is a whole tensor")
    never_states(result, "read off", "2.0", "l1 = 2")


@pytest.mark.parametrize(
    "above, cell",
    [
        ("", "l1_value = l1.detach()\n"),
        ("held = l1.detach()", "l1_value = held\n"),
        ("l1.retain_grad()\nl4.sum().backward(retain_graph=True)", "l1_value = l1.grad\n"),
    ],
    ids=["detach", "detach-in-a-cell-above", "retained-grad"],
)
def test_01_1_a_whole_tensor_read_off_the_model_is_still_told_so(shell, above, cell):
    result = run_in_notebook(shell, MODEL, above, cell + TYPED_REST + CHECK_01_1)
    refused(result, "not one read off the model or its .grad")
    never_states(result, "2.0", "l1 = 2")


@pytest.mark.parametrize("l1_value", ["2", "2.0", "ng.tensor(2.0)"])
def test_01_1_one_number_typed_is_still_accepted(shell, l1_value):
    result = run_in_notebook(shell, MODEL, f"l1_value = {l1_value}\n" + TYPED_REST + CHECK_01_1)
    assert result.passed, result.message


# ----------------------------------------------------------------- 03-3: a set, None


@pytest.mark.parametrize("x_grad", [{2, 0.4, 0.06}, frozenset([2, 0.4, 0.06]), {0.06, 2}])
def test_03_3_a_set_is_told_it_has_no_order_and_a_list_is_asked(capsys, x_grad):
    result = rejected_on_first_try(
        capsys, ex.check_vector_backward, x_grad, says="a set ({...}) has no order"
    )
    assert "give a list" in result.message
    assert "you gave a set;" in result.message


def test_03_3_none_is_told_it_is_no_answer_not_to_replace_the_blanks(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_vector_backward, None, says="None is not an answer"
    )
    assert "replace every" not in result.message
    never_states(result, "0.4", "0.06")


def test_03_3_the_blank_is_still_not_done(capsys):
    assert outcome(capsys, ex.check_vector_backward, ...).status == "todo"


@pytest.mark.parametrize("x_grad", [[2, 0.4, 0.06], (2.0, 0.4, 0.06), ng.tensor([2.0, 0.4, 0.06])])
def test_03_3_the_list_is_still_accepted(capsys, x_grad):
    assert outcome(capsys, ex.check_vector_backward, x_grad).passed


# ------------------------------------------------------------- 03-4: cast, offset, series


@pytest.mark.parametrize(
    "gradf",
    [
        lambda x: (2 * x + x**2) * ng.exp(x.float()),
        lambda x: (2 * x + x**2) * ng.exp(x.to(ng.float32)),
        lambda x: 2 * x * ng.exp(x) + x.float() ** 2 * ng.exp(x),
    ],
    ids=["float", "to-float32", "float-in-one-term"],
)
def test_03_4_a_cast_to_float32_inside_is_told_it_lost_precision(capsys, gradf):
    result = rejected_on_first_try(
        capsys, ex.check_manual_gradient, gradf, says="the cast lost precision"
    )
    assert "finite difference" not in result.message
    never_states(result, *FORMULA)


@pytest.mark.parametrize("offset, shown", [(1e-7, "1e-07"), (0.5, "0.5"), (-3.0, "-3")])
def test_03_4_a_constant_added_is_told_it_is_the_same_at_every_x(capsys, offset, shown):
    result = rejected_on_first_try(
        capsys,
        ex.check_manual_gradient,
        lambda x: (2 * x + x**2) * ng.exp(x) + offset,
        says="off by the same amount at every x: a constant is added",
    )
    assert f"you gave a gradient off by {shown} at every x" in result.message
    assert "finite difference" not in result.message
    never_states(result, *FORMULA)


def _taylor_exp(x, terms: int = 12):
    return sum(x**k / math.factorial(k) for k in range(terms))


@pytest.mark.parametrize(
    "gradf",
    [
        lambda x: (2 * x + x**2) * _taylor_exp(x),
        lambda x: (2 * x + x**2) * ng.exp(x.clamp(max=5)),
    ],
    ids=["taylor-series", "clamp"],
)
def test_03_4_an_e_to_the_x_right_only_near_0_is_told_to_use_ng_exp_for_every_x(capsys, gradf):
    result = rejected_on_first_try(
        capsys,
        ex.check_manual_gradient,
        gradf,
        says="near the derivative for small x but far off for large ones",
    )
    assert "Use ng.exp, which is right for every x" in result.message
    assert "you gave gradf(12) =" in result.message
    never_states(result, *FORMULA)


def test_03_4_a_finite_difference_is_still_told_it_is_an_estimate(capsys):
    h = 1e-4
    rejected_on_first_try(
        capsys,
        ex.check_manual_gradient,
        lambda x: ((x + h) ** 2 * ng.exp(x + h) - (x - h) ** 2 * ng.exp(x - h)) / (2 * h),
        says="finite difference",
    )


@pytest.mark.parametrize(
    "gradf",
    [
        lambda x: 2 * x * ng.exp(x) + x**2 * ng.exp(x),
        lambda x: x * (x + 2) * ng.exp(x),
        lambda x: (2 * x + x**2) * ng.exp(x),
        lambda x: ng.exp(x) * x * x + 2 * ng.exp(x) * x,
        lambda x: (2 * x + x**2) * x.exp(),
    ],
)
def test_03_4_the_product_rule_in_any_form_is_still_accepted(capsys, gradf):
    assert outcome(capsys, ex.check_manual_gradient, gradf).passed
