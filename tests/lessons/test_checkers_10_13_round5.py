"""Lessons 10-13: a weight decay or a step scale too small for float32 to show, a
sum_to_shape that calls the engine, and hints that name the mistake where it is (the
input a nan comes from, both products, a tangent rounded to float32)."""

from __future__ import annotations

import numpy as np
import pytest
from checker_results import rejection_message

import naivegraph.static as ns
from naivegraph.lessons import exercises as ex

# -- 10-1: what float32 rounds away, float64 shows ------------------------------------------
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


@pytest.mark.parametrize(
    "update",
    [
        lambda w, grad, lr: w.assign(w - lr * grad - lr * 1e-4 * w),  # SGD's weight_decay
        lambda w, grad, lr: w.assign(w * (1 - 1e-9) - lr * grad),
        lambda w, grad, lr: w.assign(w - lr * grad - 1e-12 * w),
    ],
)
def test_update_with_a_weight_decay_float32_cannot_show_is_refused(update):
    message = rejection_message(ex.check_update_nodes(*lesson_network(update)), *UPDATE_SECRETS)
    assert "gradient is exactly 0" in message and "float64" in message


@pytest.mark.parametrize("scale", [1.00001, 0.99999, 1.0000001, 1 + 1e-9])
def test_update_with_a_step_scaled_by_a_hair_is_refused_with_its_factor(scale):
    def scaled(w, grad, lr):
        return w.assign(w - lr * scale * grad)

    message = rejection_message(ex.check_update_nodes(*lesson_network(scaled)), *UPDATE_SECRETS)
    assert f"its step is {scale:.12g} times a step of gradient descent" in message


@pytest.mark.parametrize(
    "update",
    [
        lambda w, grad, lr: w.assign(w - np.float32(lr) * grad),
        lambda w, grad, lr: w.assign(w - ns.Constant(np.float32(lr)) * grad),
        lambda w, grad, lr: w.assign(w - ns.Constant(np.array(lr)) * grad),
        lambda w, grad, lr: w.assign(w - grad / (1 / lr)),
        lambda w, grad, lr: w.assign(w - 2 * lr * grad / 2),
        lambda w, grad, lr: w.assign(-(lr * grad - w)),
    ],
)
def test_update_written_any_right_way_still_passes_in_float64(update):
    args = lesson_network(update)
    before = args[3].value.copy(), args[4].value.copy()
    assert ex.check_update_nodes(*args)
    assert np.array_equal(args[3].value, before[0]) and np.array_equal(args[4].value, before[1])
