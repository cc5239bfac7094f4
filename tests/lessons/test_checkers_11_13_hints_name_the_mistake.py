"""Lessons 11-13: a wrong answer hears about the mistake it made (g added instead of
multiplied, two names where one is asked, primals and tangents swapped, a Dual as a
tangent, a pair in the wrong order), never about another one, and never the answer."""

from __future__ import annotations

import numpy as np
import pytest
from checker_results import rejection_message
from dual_numbers import DUAL_SECRETS, Dual, dual_from, exact_div, exact_mul
from lesson_answers_10_13 import jacobian_forward as jacobian_forward_right

import naivegraph as ng
from naivegraph.lessons import exercises as ex
from naivegraph.ops import F

# -- 12-5: softplus' partial ------------------------------------------------------------------
SOFTPLUS_SECRETS = ("sigmoid", "g * F.", "1 - F.exp")


@pytest.mark.parametrize(
    "partial",
    [
        lambda g, x, out: g + F.sigmoid(x),
        lambda g, x, out: F.sigmoid(x) / g,
        lambda g, x, out: F.sigmoid(x) - g,
    ],
)
def test_softplus_with_g_not_multiplied_is_told_how_g_combines(partial):
    message = rejection_message(ex.check_softplus_partial(partial), *SOFTPLUS_SECRETS)
    assert "local derivative is right" in message and "multiplies" in message
    assert "differentiate log(1 + e^x)" not in message


def test_softplus_right_forms_still_pass():
    assert ex.check_softplus_partial(lambda g, x, out: g * F.sigmoid(x))
    assert ex.check_softplus_partial(lambda g, x, out: F.sigmoid(x) * g)


# -- 12-6: the first backward to give NaN -------------------------------------------------
@pytest.mark.parametrize(
    "name", ["MulBackward0, SqrtBackward0", "SumBackward0 / MulBackward0", "sqrt; mul"]
)
def test_first_nan_with_several_names_is_asked_for_one(name):
    message = rejection_message(ex.check_first_nan(name))
    assert "give ONE name" in message


@pytest.mark.parametrize("name", ["MulBackward0", "SumBackward0"])
def test_first_nan_hint_for_an_early_op_does_not_point_at_the_next_one(name):
    message = rejection_message(ex.check_first_nan(name), "SqrtBackward0", "sqrt", "after it")
    assert "every one of the three" in message


@pytest.mark.parametrize("name", ["SqrtBackward0", "'SqrtBackward0'"])
def test_first_nan_right_name_still_passes(name):
    assert ex.check_first_nan(name)


def test_first_nan_op_written_in_two_words_is_one_name():
    assert "right op" in rejection_message(ex.check_first_nan("sqrt backward"))


# -- 11-1: dual numbers ---------------------------------------------------------------------


def div_with_a_dual_tangent(u, v):
    return Dual(u.value / v.value, Dual(u.tangent, v.tangent))


def div_on_numpy_numbers(u, v):
    value, tangent = (
        np.float64(u.value) / v.value,
        np.array(u.tangent * v.value - u.value * v.tangent),
    )
    return Dual(value, tangent / v.value**2)


def test_dual_whose_tangent_is_a_dual_is_told_it_must_be_a_number():
    message = rejection_message(
        ex.check_dual_rules(dual_from(exact_mul, div_with_a_dual_tangent)), *DUAL_SECRETS
    )
    assert "the tangent must be a number, not a Dual" in message
    assert "raised" not in message


def test_dual_with_numpy_numbers_still_passes():
    assert ex.check_dual_rules(dual_from(exact_mul, div_on_numpy_numbers))
    assert ex.check_dual_rules(dual_from(exact_mul, exact_div))


def mul_with_abs(u, v):  # right only while both terms are positive
    return Dual(u.value * v.value, abs(u.tangent * v.value) + abs(u.value * v.tangent))


def div_with_abs(u, v):
    tangent = (abs(u.tangent * v.value) - abs(u.value * v.tangent)) / v.value**2
    return Dual(u.value / v.value, tangent)


def mul_in_float32(u, v):  # the right rule, its tangent rounded to float32
    return Dual(u.value * v.value, np.float32(u.tangent * v.value + u.value * v.tangent))


def test_dual_rules_with_abs_are_refused_on_terms_of_opposite_signs():
    message = rejection_message(
        ex.check_dual_rules(dual_from(mul_with_abs, div_with_abs)), *DUAL_SECRETS
    )
    assert "mul's tangent is off" in message


def test_a_dual_tangent_rounded_to_float32_is_refused():
    assert not ex.check_dual_rules(dual_from(mul_in_float32, exact_div))


# -- 11-2: a Jacobian from JVPs -------------------------------------------------------------
def jacobian_forward_swapped(f, x):
    n = x.shape[0]
    columns = [ng.func.jvp(f, (ng.eye(n, dtype=x.dtype)[i],), (x,))[1] for i in range(n)]
    return ng.stack(columns, dim=1)


def test_jacobian_forward_with_primals_and_tangents_swapped_is_told_so():
    message = rejection_message(
        ex.check_jacobian_forward(jacobian_forward_swapped), "(x,), (seed,)"
    )
    assert "primals and tangents swapped" in message
    assert "different row of the identity" not in message


def test_jacobian_forward_right_still_passes():
    assert ex.check_jacobian_forward(jacobian_forward_right)


# -- 13-1 and 13-3: pairs the wrong way round ----------------------------------------------
def test_freed_first_pair_the_wrong_way_round_is_told_the_order():
    message = rejection_message(ex.check_freed_first((3, "mul_1")), "('mul_1', 3)")
    assert "the name first" in message and "write it as a string" not in message


def test_freed_first_right_pair_still_passes():
    assert ex.check_freed_first(("mul_1", 3))
    assert ex.check_freed_first(("%mul_1", 3.0))


def test_baked_branch_pair_the_wrong_way_round_is_told_the_order():
    message = rejection_message(ex.check_baked_branch((3, "tanh")))
    assert "wrong way round" in message and "without quotes" not in message


@pytest.mark.parametrize(
    "op", ["tanh", "x.tanh", "x.tanh()", "ns.tanh", "F.tanh", "np.tanh", " 'TANH' "]
)
def test_baked_branch_names_the_op_however_it_is_written(op):
    assert ex.check_baked_branch((op, 3))


@pytest.mark.parametrize("op", ["relu", "ns.relu", "x.relu()"])
def test_baked_branch_other_op_is_refused_however_it_is_written(op):
    message = rejection_message(ex.check_baked_branch((op, 3)), "tanh")
    assert "which shape did the example have" in message
