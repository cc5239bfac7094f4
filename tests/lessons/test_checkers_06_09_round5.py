"""Lessons 6-9: answers a tiny amount away from the right one (a term of 1e-9, a
threshold of 1e-9, a derivative off by 1e-12, a descent that stops early) are refused,
right answers written another way (a torch-style mask cast, the engine's run_backward
called directly) are accepted, and each hint names the mistake actually made, never the
expected value or code."""

from __future__ import annotations

import numpy as np
import pytest
from checker_results import never_states, outcome, rejected_on_first_try

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import exercises as ex


# ------------------------------------------------------------------------- 06-1
def static_model(body):
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(2, 2))
        w1, w2, w3 = ns.Variable(2.0), ns.Variable(3.0), ns.Variable(4.0)
        loss = body(x, w1, w2, w3)
    return g, x, loss


def model(x, w1, w2, w3):
    return ns.mean((x * w1 + w2) * (x * w1 * w3))


@pytest.mark.parametrize(
    "body, says",
    [
        (lambda x, w1, w2, w3: model(x, w1, w2, w3) + 1e-9 * w2, "by a tiny amount for a feed"),
        (lambda x, w1, w2, w3: model(x, w1, w2, w3) * (1 + 1e-12), "by a tiny amount for a feed"),
        (
            lambda x, w1, w2, w3: model(x, w1, w2, w3) + 1e-9 * w2 - 3e-9,
            "changes with w2 by a tiny amount",
        ),
        (
            lambda x, w1, w2, w3: model(x, w1, w2, w3) + 1e-9 * w1 * w1 - 4e-9,
            "changes with w1 by a tiny amount",
        ),
    ],
)
def test_06_1_a_loss_a_tiny_term_away_from_the_model_is_refused(capsys, body, says):
    result = rejected_on_first_try(
        capsys, ex.check_static_model, *static_model(body), says="computed in float64 your loss"
    )
    assert says in result.message
    never_states(result, "40", "112", "102", "ns.mean(", "x * w1")


@pytest.mark.parametrize(
    "body",
    [
        model,
        lambda x, w1, w2, w3: ns.mean(x * w1 * w3 * (x * w1 + w2)),
        lambda x, w1, w2, w3: ns.mean(w3 * (x * x * w1 * w1 + x * w1 * w2)),
        lambda x, w1, w2, w3: ns.sum((x * w1 + w2) * (w3 * (w1 * x))) / 4,
        lambda x, w1, w2, w3: ((x * w1 + w2) * (x * w1 * w3)).mean() + 0.0 * w2,
    ],
)
def test_06_1_the_model_written_in_another_order_is_still_accepted(capsys, body):
    assert outcome(capsys, ex.check_static_model, *static_model(body))


# ------------------------------------------------------------------------- 07-1
@pytest.mark.parametrize("threshold", [1e-9, 1e-300, -1e-9, -1e-300])
def test_07_1_a_threshold_a_hair_away_from_zero_is_refused(capsys, threshold):
    result = rejected_on_first_try(
        capsys,
        ex.check_where_fix,
        lambda x: ng.where(x > threshold, x * 2, x * -1),
        says="wrong for entries close to it",
    )
    never_states(result, "x * 2, x * -1", "ng.where(")


@pytest.mark.parametrize(
    "f",
    [
        lambda x: ng.where(x > 0, x * 2, x * -1),
        lambda x: ng.where(x >= 0, x * 2, x * -1),  # the same at 0: both branches give 0
        lambda x: ng.where(x.gt(0), 2 * x, -x),
        lambda x: (x > 0).float() * x * 2 + (x <= 0).float() * x * -1,
        lambda x: (x > 0).double() * x * 2 - (x <= 0).double() * x,
        lambda x: (x > 0).to(x.dtype) * x * 2 + (x <= 0).to(x.dtype) * -x,
        lambda x: (x > 0).type_as(x) * 3 * x - x,
    ],
)
def test_07_1_a_torch_style_mask_or_comparison_is_accepted(capsys, f):
    assert outcome(capsys, ex.check_where_fix, f)


@pytest.mark.parametrize(
    "factory",
    [lambda x: ng.zeros_like(x), lambda x: ng.full_like(x, 0.0), lambda x: ng.tensor(0.0)],
)
def test_07_1_a_tensor_made_inside_the_traced_function_is_told_it_does_not_mix(capsys, factory):
    result = rejected_on_first_try(
        capsys,
        ex.check_where_fix,
        lambda x: ng.where(x > factory(x), x * 2, x * -1),
        says="makes a tensor while it runs",
    )
    assert "a tensor and a node do not mix" in result.message
    assert "Python `if`" not in result.message and "ns.constant" not in result.message
    never_states(result, "x * 2, x * -1", "x > 0")


@pytest.mark.parametrize("reduce", [lambda x: x.sum(), lambda x: x.mean(), lambda x: ng.max(x)])
def test_07_1_a_condition_on_a_reduction_is_told_it_decides_once_for_every_entry(
    capsys, reduce
):
    result = rejected_on_first_try(
        capsys,
        ex.check_where_fix,
        lambda x: ng.where(reduce(x) > 0, x * 2, x * -1),
        says="chooses one branch for the whole input",
    )
    assert "each entry by its own sign" in result.message
    assert "check both branches" not in result.message
    never_states(result, "x * 2, x * -1", "x > 0,")


def test_07_1_a_result_summed_to_one_number_is_told_its_shape(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_where_fix,
        lambda x: ng.where(x > 0, x * 2, x * -1).sum(),
        says="returns values of shape () for an x of shape (2,)",
    )
    assert "check both branches" not in result.message
    never_states(result, "x * 2, x * -1")
