"""Lessons 6-9: answers that agree with the right one only on the checker's easy cases
are refused with a hint naming their mistake (never the expected value or code), the
right answer in its usual and unusual forms is still accepted, and no checker raises."""

from __future__ import annotations

import numpy as np
import pytest

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex


@pytest.fixture(autouse=True)
def fresh_tries():
    checking.TRIES.clear()
    yield
    checking.TRIES.clear()
    ng.set_grad_enabled(True)


def outcome(capsys, checker, *args):
    result = checker(*args)
    printed = capsys.readouterr().out
    assert printed.strip() == result.message
    return result


def rejected(capsys, checker, *args, says: str):
    checking.TRIES.clear()  # each case is a first try: its first hint
    result = outcome(capsys, checker, *args)
    assert result.status == "fail", result.message
    assert says in result.message, result.message
    return result


def never_states(result, *values: str):
    for value in values:
        assert value not in result.message, (value, result.message)


# ------------------------------------------------------------------------- lesson 6
def static_model(body):
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(2, 2))
        w1, w2, w3 = ns.Variable(2.0), ns.Variable(3.0), ns.Variable(4.0)
        loss = body(x, w1, w2, w3)
    return g, x, loss


@pytest.mark.parametrize(
    "body",
    [
        lambda x, w1, w2, w3: ns.mean(x * w1 + w2) * ns.mean(x * w1 * w3),
        lambda x, w1, w2, w3: ns.max((x * w1 + w2) * (x * w1 * w3)),
        lambda x, w1, w2, w3: ns.min((x * w1 + w2) * (x * w1 * w3)),
        lambda x, w1, w2, w3: (ns.mean(x) * w1 + w2) * (ns.mean(x) * w1 * w3),
    ],
)
def test_06_1_a_loss_right_only_for_feeds_of_equal_elements_is_refused(capsys, body):
    result = rejected(capsys, ex.check_static_model, *static_model(body),
                      says="wrong for a feed of different numbers")
    assert "only the loss reduces them" in result.message
    never_states(result, "180", "ns.mean((")


def test_06_1_the_model_is_still_accepted_with_the_mean_as_a_method(capsys):
    def steps(x, w1, w2, w3):
        l1 = x * w1
        return ((l1 + w2) * (w3 * l1)).mean()

    assert outcome(capsys, ex.check_static_model, *static_model(steps))


def test_06_1_the_last_resort_hint_does_not_point_at_the_rebound_loss(capsys):
    result = rejected(capsys, ex.check_static_model,
                      *static_model(lambda x, w1, w2, w3: ns.mean(x * w1)),
                      says="what the graph g of the cells above printed for ones")
    assert "`loss.value`" not in result.message


def test_06_3_text_is_told_it_is_text(capsys):
    result = rejected(capsys, ex.check_memory_plan, "2", says="got the text '2'")
    assert "without quotes" in result.message
    assert outcome(capsys, ex.check_memory_plan, 2)
    assert outcome(capsys, ex.check_memory_plan, np.int64(2))
