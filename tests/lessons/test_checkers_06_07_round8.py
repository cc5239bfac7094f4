"""Lessons 6 and 7: a step compiled from a copy of the graph, a loss right only inside
the feeds and weights the checker used to try, a factor or a term float32 rounds away,
state the answer cell left changed, and a prediction reached through the notebook's own
names are refused with a hint naming the mistake, never the expected value or code;
right answers, numpy numbers and fractions among them, are still accepted."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from checker_results import never_states, outcome, rejected_on_first_try
from lesson_answers_06_07 import (
    MODEL_SECRETS,
    RULE_SECRETS,
    STEP_SECRETS,
    lesson_graph,
    notebook_shell,
    run_answer_cell,
    static_model,
)

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import exercises as ex


# ------------------------------------------------------------------------- 06-1
def l4(x, w1, w2, w3):
    return (x * w1 + w2) * (x * w1 * w3)


def model(x, w1, w2, w3):
    return ns.mean(l4(x, w1, w2, w3))


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


# ------------------------------------------------------------------------- 07-1
def rule(x):
    return ng.where(x > 0, x * 2, x * -1)


def test_07_1_grad_mode_left_off_by_the_cell_outside_f_is_refused(capsys):
    ng.set_grad_enabled(False)
    try:
        result = rejected_on_first_try(
            capsys,
            ex.check_where_fix,
            rule,
            says="grad mode is off in this notebook",
        )
        assert "ng.set_grad_enabled(True)" in result.message
        assert not ng.is_grad_enabled()  # the learner puts it back, as the hint says
    finally:
        ng.set_grad_enabled(True)
    never_states(result, *RULE_SECRETS)


def test_07_1_a_default_dtype_changed_by_the_cell_outside_f_is_refused(capsys):
    ng.set_default_dtype(ng.float64)
    try:
        result = rejected_on_first_try(
            capsys,
            ex.check_where_fix,
            rule,
            says="the default dtype is float64 (the lab's is float32)",
        )
        assert "ng.set_default_dtype(ng.float32)" in result.message
    finally:
        ng.set_default_dtype(ng.float32)
    never_states(result, *RULE_SECRETS)


def test_07_1_the_rule_is_accepted_with_the_notebooks_state_as_the_lesson_has_it(capsys):
    assert ng.is_grad_enabled() and ng.get_default_dtype() == np.float32
    assert outcome(capsys, ex.check_where_fix, rule)


# ------------------------------------------------------------------------- 07-2
@pytest.fixture
def shell():
    yield from notebook_shell("run, also = traced, scaled\n")


ALONG = "np.apply_along_axis({}, 0, np.array([1.0, 2.0]))"


@pytest.mark.parametrize(
    "answer, says",
    [
        (
            "import __main__\ntraced_result = [float(v) for v in "
            + ALONG.format('__main__.__dict__["tra" + "ced"]')
            + "]\neager_result = [10.0, 20.0]",
            "uses `__main__`, which a prediction does not need",
        ),
        (
            "from __main__ import traced as t\ntraced_result = [2.0, 4.0]\n"
            "eager_result = [10.0, 20.0]",
            "uses `__main__`, which a prediction does not need",
        ),
        (
            "d = locals\ntraced_result = [2.0, 4.0]\neager_result = [10.0, 20.0]",
            "uses `locals`, which a prediction does not need",
        ),
        (
            "traced_result = [float(v) for v in " + ALONG.format("run") + "]\n"
            "eager_result = [10.0, 20.0]",
            "calls `np.apply_along_axis`, which runs a function, and a prediction runs none",
        ),
        (
            "traced_result = [2.0, 4.0]\neager_result = [10.0, 20.0]\n"
            "ng.autograd.functional.jacobian(also, ng.tensor([1.0, 2.0]))",
            "hands a function to `ng.autograd.functional.jacobian`, and a prediction runs none",
        ),
        (
            "each = np.vectorize(also)\ntraced_result = [2.0, 4.0]\neager_result = [10.0, 20.0]",
            "calls `np.vectorize`, which runs a function, and a prediction runs none",
        ),
    ],
)
def test_07_2_a_function_reached_through_the_notebooks_names_is_refused(shell, answer, says):
    result = run_answer_cell(shell, answer)
    assert result.status == "fail", result.message
    assert f"your answer cell {says}" in result.message
    never_states(result, "[2, 4]", "[10, 20]")


@pytest.mark.parametrize(
    "answer",
    [
        "traced_result = [np.float64(2), np.float64(4)]\neager_result = [10.0, 20.0]",
        "from fractions import Fraction\ntraced_result = [Fraction(2), Fraction(4)]\n"
        "eager_result = [Fraction(10), Fraction(20)]",
        "import fractions\ntraced_result = [fractions.Fraction(2), 4]\neager_result = [10, 20]",
        "traced_result = [2.0, 4.0]\neager_result = [10.0, 20.0]\nprint(traced_result)",
    ],
)
def test_07_2_a_prediction_of_numpy_numbers_or_fractions_is_accepted(shell, answer):
    result = run_answer_cell(shell, answer)
    assert result.status == "pass", result.message


def test_07_2_numpy_numbers_and_fractions_are_accepted_outside_a_notebook(capsys):
    assert outcome(capsys, ex.check_trace_pitfall, [np.float64(2), np.float64(4)], [10, 20])
    assert outcome(capsys, ex.check_trace_pitfall, [Fraction(2), Fraction(4)], [10.0, 20.0])
