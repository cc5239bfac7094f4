"""Lessons 10-13: answers that give the right numbers on easy inputs but are wrong (a
dimension told by its size, a derivative by finite differences, a formula that overflows,
a library Jacobian where the loop was to be written, an input changed in place) are
refused with a hint that names the mistake and not the answer; the right answer, in its
usual and its unusual forms, still passes."""

from __future__ import annotations

import numpy as np
import pytest

from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex


@pytest.fixture(autouse=True)
def fresh_tries():
    checking.TRIES.clear()


def rejected(result, *secrets: str) -> str:
    assert result.status == "fail", result.message
    for secret in secrets:
        assert secret not in result.message, (secret, result.message)
    return result.message


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
    assert "POSITION" in rejected(ex.check_sum_to_shape(fn), *SUM_SECRETS)


def test_sum_to_shape_writing_into_the_callers_grad_is_refused():
    message = rejected(ex.check_sum_to_shape(sum_then_zero_the_callers_grad), *SUM_SECRETS)
    assert "IN PLACE" in message


def test_sum_to_shape_by_position_from_the_right_is_accepted():
    assert ex.check_sum_to_shape(sum_by_position_from_the_right)
