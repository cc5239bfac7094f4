"""Lessons 11-13: a wrong answer hears about the mistake it made (g added instead of
multiplied, two names where one is asked, primals and tangents swapped, a Dual as a
tangent, a pair in the wrong order), never about another one, and never the answer."""

from __future__ import annotations

import numpy as np
import pytest

from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex
from naivegraph.ops import F


@pytest.fixture(autouse=True)
def fresh_tries():
    checking.TRIES.clear()


def rejected(result, *secrets: str) -> str:
    """The message of a rejection, after checking it gives none of ``secrets`` away."""
    assert result.status == "fail", result.message
    for secret in secrets:
        assert secret not in result.message, (secret, result.message)
    return result.message


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
    message = rejected(ex.check_softplus_partial(partial), *SOFTPLUS_SECRETS)
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
    message = rejected(ex.check_first_nan(name))
    assert "give ONE name" in message


@pytest.mark.parametrize("name", ["MulBackward0", "SumBackward0"])
def test_first_nan_hint_for_an_early_op_does_not_point_at_the_next_one(name):
    message = rejected(ex.check_first_nan(name), "SqrtBackward0", "sqrt", "after it")
    assert "every one of the three" in message


@pytest.mark.parametrize("name", ["SqrtBackward0", "'SqrtBackward0'"])
def test_first_nan_right_name_still_passes(name):
    assert ex.check_first_nan(name)


def test_first_nan_op_written_in_two_words_is_one_name():
    assert "right op" in rejected(ex.check_first_nan("sqrt backward"))
