"""Optimisers inside the graph: ``ns.optim.SGD/Adam(...).minimize(loss)`` is one step
node, built once and run many times, taking ``naivegraph.optim``'s steps exactly."""

import numpy as np
import pytest
from default_dtype import float64_default

import naivegraph as ng
import naivegraph.static as ns

# numpy float64 data; twenty optimiser steps compared with dynamic mode to 1e-12:
# placeholders and Python floats in float64 too (the default dtype is float32)
pytestmark = pytest.mark.usefixtures(float64_default.__name__)

SETTINGS = [
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
]


def regression_problem(seed=0):
    rng = np.random.default_rng(seed)
    return (
        rng.standard_normal((3, 2)),
        rng.standard_normal(2),
        rng.standard_normal((8, 3)),
        rng.standard_normal((8, 2)),
    )


def build_static(name, settings, w0, b0):
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(None, 3))
        y = ns.placeholder("y", shape=(None, 2))
        w, b = ns.Variable(w0, name="w"), ns.Variable(b0, name="b")
        loss = ns.mse_loss(ns.tanh(x @ w + b), y)
        step = getattr(ns.optim, name)([w, b], **settings).minimize(loss)
    return g, x, y, w, b, loss, step


@pytest.mark.parametrize("name,settings", SETTINGS, ids=[f"{n}-{s}" for n, s in SETTINGS])
def test_twenty_steps_match_the_dynamic_optimiser(name, settings):
    w0, b0, x_value, y_value = regression_problem()
    g, x, y, w, b, loss, step = build_static(name, settings, w0, b0)
    wt, bt = ng.tensor(w0, requires_grad=True), ng.tensor(b0, requires_grad=True)
    optimizer = getattr(ng.optim, name)([wt, bt], **settings)
    rng = np.random.default_rng(1)
    for _ in range(20):
        batch = rng.choice(8, size=4, replace=False)  # mini-batches of a None batch size
        static_loss, nothing = g.run([loss, step], {x: x_value[batch], y: y_value[batch]})
        optimizer.zero_grad()
        dynamic_loss = ng.nn.functional.mse_loss(
            (ng.tensor(x_value[batch]) @ wt + bt).tanh(), ng.tensor(y_value[batch])
        )
        dynamic_loss.backward()
        optimizer.step()
        assert nothing is None  # the step node has no value of its own, as tf.group
        assert float(static_loss) == pytest.approx(dynamic_loss.item(), rel=1e-12)
    np.testing.assert_allclose(w.value, wt.detach().numpy(), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(b.value, bt.detach().numpy(), rtol=1e-10, atol=1e-14)


def test_the_compiled_step_trains_like_the_run_loop():
    w0, b0, x_value, y_value = regression_problem()
    g1, x1, y1, w1, _, loss1, step1 = build_static("Adam", dict(lr=0.05), w0, b0)
    g2, x2, y2, w2, _, loss2, step2 = build_static("Adam", dict(lr=0.05), w0, b0)
    train = g2.compile([x2, y2], [loss2, step2])
    for _ in range(10):
        expected, _ = g1.run([loss1, step1], {x1: x_value, y1: y_value})
        got, nothing = train(x_value, y_value)
        assert nothing is None and float(got) == pytest.approx(float(expected), rel=1e-12)
    np.testing.assert_allclose(w2.value, w1.value, rtol=1e-12)


def test_optimiser_slots_are_non_trainable_variables_of_the_graph():
    w0, b0, _, _ = regression_problem()
    g, *_ = build_static("Adam", dict(lr=0.01), w0, b0)
    slots = [v.name for v in g.variables if not v.trainable]
    assert slots == [
        "w/step",
        "w/exp_avg",
        "w/exp_avg_sq",
        "b/step",
        "b/exp_avg",
        "b/exp_avg_sq",
    ]
    g2, *_ = build_static("SGD", dict(lr=0.01, momentum=0.5), w0, b0)
    assert [v.name for v in g2.variables if not v.trainable] == ["w/momentum", "b/momentum"]


def test_minimize_of_a_loss_that_ignores_the_variables_is_refused_and_adds_nothing():
    with ns.Graph() as g:
        w = ns.Variable(1.0, name="w")
        x = ns.placeholder("x", shape=())
        loss = x * 2.0
        size = len(g.nodes)
        with pytest.raises(ValueError, match="does not depend on any of the variables"):
            ns.optim.SGD([w], lr=0.1).minimize(loss)
    assert len(g.nodes) == size


@pytest.mark.parametrize(
    "make,error,phrase",
    [
        (lambda w, x: ns.optim.SGD([x], lr=0.1), TypeError, "trains trainable Variables"),
        (lambda w, x: ns.optim.SGD([], lr=0.1), ValueError, "empty list of variables"),
        (lambda w, x: ns.optim.SGD([w, w], lr=0.1), ValueError, "a Variable twice"),
        (lambda w, x: ns.optim.SGD([w], lr=-1.0), ValueError, "Invalid learning rate"),
        (lambda w, x: ns.optim.SGD([w], lr=0.1, nesterov=True), ValueError, "requires a momentum"),
        (lambda w, x: ns.optim.Adam([w], betas=(1.0, 0.9)), ValueError, "Invalid beta"),
    ],
)
def test_bad_optimiser_settings_are_refused_with_torchs_words(make, error, phrase):
    with ns.Graph():
        w = ns.Variable(1.0, name="w")
        x = ns.placeholder("x", shape=())
        with pytest.raises(error, match=phrase):
            make(w, x)


def test_a_second_optimiser_in_one_graph_numbers_its_slots_as_tensorflow_does():
    with ns.Graph() as g:
        w = ns.Variable(np.array([1.0, 2.0]), name="w")
        loss = ns.sum(w * w)
        first = ns.optim.Adam([w], lr=0.1).minimize(loss)
        second = ns.optim.Adam([w], lr=0.1).minimize(loss)
    slots = [v.name for v in g.variables if not v.trainable]
    assert slots == [
        "w/step",
        "w/exp_avg",
        "w/exp_avg_sq",
        "w/step_1",
        "w/exp_avg_1",
        "w/exp_avg_sq_1",
    ]
    g.run(first)
    g.run(second)  # each keeps its own moments: two first steps of about lr each
    np.testing.assert_allclose(w.value, [0.8, 1.8], rtol=1e-8)
