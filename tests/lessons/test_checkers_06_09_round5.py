"""Lessons 6-9: answers a tiny amount away from the right one (a term of 1e-9, a
threshold of 1e-9, a derivative off by 1e-12, a descent that stops early) are refused,
right answers written another way (a torch-style mask cast, the engine's run_backward
called directly) are accepted, and each hint names the mistake actually made, never the
expected value or code."""

from __future__ import annotations

import numpy as np
import pytest
from checker_results import never_states, outcome, rejected_on_first_try

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
