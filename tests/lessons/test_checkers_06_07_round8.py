"""Lessons 6 and 7: a step compiled from a copy of the graph, a loss right only inside
the feeds and weights the checker used to try, a factor or a term float32 rounds away,
state the answer cell left changed, and a prediction reached through the notebook's own
names are refused with a hint naming the mistake, never the expected value or code;
right answers, numpy numbers and fractions among them, are still accepted."""

from __future__ import annotations

import pytest
from checker_results import never_states, outcome, rejected_on_first_try

import naivegraph.static as ns
from naivegraph.lessons import exercises as ex


# ------------------------------------------------------------------------- 06-1
def static_model(body):
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(2, 2))
        w1, w2, w3 = (
            ns.Variable(2.0, name="w1"),
            ns.Variable(3.0, name="w2"),
            ns.Variable(4.0, name="w3"),
        )
        loss = body(x, w1, w2, w3)
    return g, x, loss


def l4(x, w1, w2, w3):
    return (x * w1 + w2) * (x * w1 * w3)


def model(x, w1, w2, w3):
    return ns.mean(l4(x, w1, w2, w3))


MODEL_SECRETS = ("40", "112", "ns.mean(", "x * w1")


@pytest.mark.parametrize(
    "body",
    [
        lambda x, w1, w2, w3: model(ns.clamp(x, -1e4, 1e4), w1, w2, w3),
        lambda x, w1, w2, w3: ns.mean(ns.where(x > 1e5, x * 0.0, l4(x, w1, w2, w3))),
        lambda x, w1, w2, w3: ns.mean(
            ns.where(x > 999.0, l4(x, w1, w2, w3) * 0.0, l4(x, w1, w2, w3))
        ),
    ],
)
def test_06_1_a_loss_that_clamps_or_cuts_off_large_feeds_is_refused(capsys, body):
    result = rejected_on_first_try(
        capsys, ex.check_static_model, *static_model(body), says="wrong for other feeds"
    )
    assert "clamps or cuts off large entries" in result.message
    never_states(result, *MODEL_SECRETS)


@pytest.mark.parametrize(
    "body",
    [
        lambda x, w1, w2, w3: model(x, ns.clamp(w1, -10.0, 10.0), w2, w3),
        lambda x, w1, w2, w3: ns.mean(
            ns.where(w1 > 100.0, l4(x, w1, w2, w3) * 2.0, l4(x, w1, w2, w3))
        ),
    ],
)
def test_06_1_a_loss_that_clamps_or_cuts_off_large_weights_is_refused(capsys, body):
    result = rejected_on_first_try(
        capsys,
        ex.check_static_model,
        *static_model(body),
        says="wrong once the weights take other values",
    )
    assert "clamps or cuts off large weights" in result.message
    never_states(result, *MODEL_SECRETS)


@pytest.mark.parametrize(
    "body",
    [
        lambda x, w1, w2, w3: model(x, w1, w2, w3) * (1 + 1e-13),
        lambda x, w1, w2, w3: model(x, w1, w2, w3) + 1e-12,
    ],
)
def test_06_1_a_factor_or_term_float32_rounds_away_is_refused(capsys, body):
    result = rejected_on_first_try(
        capsys,
        ex.check_static_model,
        *static_model(body),
        says="computed in float64 your loss differs from the model's by a tiny amount",
    )
    never_states(result, *MODEL_SECRETS)


@pytest.mark.parametrize(
    "body",
    [
        model,
        lambda x, w1, w2, w3: ns.mean(w3 * (x * x * w1 * w1 + x * w1 * w2)),
        lambda x, w1, w2, w3: ns.sum((x * w1 + w2) * (w3 * (w1 * x))) / 4,
        lambda x, w1, w2, w3: ns.mean((x * w1 + w2) * (x * w1 * w3) * 1.0 + 0.0),
    ],
)
def test_06_1_the_model_in_its_usual_forms_is_accepted_over_the_wider_probes(capsys, body):
    g, x, loss = static_model(body)
    assert outcome(capsys, ex.check_static_model, g, x, loss)
    assert [float(v.value) for v in g.nodes if isinstance(v, ns.Variable)] == [2.0, 3.0, 4.0]


# ------------------------------------------------------------------------- 06-2
def lesson_graph():
    g = ns.Graph()
    with g:
        x = ns.placeholder("input", shape=(2, 2))
        w1, w2, w3 = (
            ns.Variable(2.0, name="w1"),
            ns.Variable(3.0, name="w2"),
            ns.Variable(4.0, name="w3"),
        )
        loss = ns.mean((x * w1 + w2) * (x * w1 * w3) * 1.0 + 0.0)
        grads = ns.gradients(loss, [w1, w2, w3])
    return g, x, (w1, w2, w3), loss, grads


STEP_SECRETS = ("[40", "28, 8", "g.compile(", "outputs=[loss")


def rebuilt_copy():
    """The model rebuilt in a graph of its own, with Variables of the same names."""
    h = ns.Graph()
    with h:
        xx = ns.placeholder("xx", shape=(2, 2))
        v1, v2, v3 = (
            ns.Variable(2.0, name="w1"),
            ns.Variable(3.0, name="w2"),
            ns.Variable(4.0, name="w3"),
        )
        loss = ns.mean((xx * v1 + v2) * (xx * v1 * v3))
        outs = [loss, *ns.gradients(loss, [v1, v2, v3])]
    return h.compile([xx], outs)


def test_06_2_a_step_compiled_from_a_rebuilt_copy_of_the_graph_is_refused(capsys):
    g, *_ = lesson_graph()
    result = rejected_on_first_try(
        capsys,
        ex.check_compiled_step,
        rebuilt_copy(),
        g,
        says="f must be compiled from g: yours reads Variables of another graph",
    )
    never_states(result, *STEP_SECRETS)
    assert [float(v.value) for v in g.nodes if isinstance(v, ns.Variable)] == [2.0, 3.0, 4.0]


def test_06_2_a_step_that_clamps_large_feeds_is_refused_naming_the_clamp(capsys):
    g, x, (w1, w2, w3), _, _ = lesson_graph()
    with g:
        xc = ns.clamp(x, -1e4, 1e4)
        loss = ns.mean((xc * w1 + w2) * (xc * w1 * w3))
        grads = ns.gradients(loss, [w1, w2, w3])
    result = rejected_on_first_try(
        capsys,
        ex.check_compiled_step,
        g.compile([x], [loss, *grads]),
        g,
        says="a step that clamps or cuts off large entries",
    )
    never_states(result, *STEP_SECRETS)


def test_06_2_a_loss_a_factor_float32_rounds_away_is_refused(capsys):
    g, x, _, loss, grads = lesson_graph()
    with g:
        off = loss * (1 + 1e-13)
    result = rejected_on_first_try(
        capsys,
        ex.check_compiled_step,
        g.compile([x], [off, *grads]),
        g,
        says="a tiny amount away from its loss and gradients",
    )
    never_states(result, *STEP_SECRETS)


def test_06_2_the_step_compiled_from_g_is_accepted_and_leaves_its_weights(capsys):
    g, x, ws, loss, grads = lesson_graph()
    for optimize in (True, False):
        f = g.compile(inputs=[x], outputs=[loss, *grads], optimize=optimize)
        assert outcome(capsys, ex.check_compiled_step, f, g)
    assert [float(w.value) for w in ws] == [2.0, 3.0, 4.0]
