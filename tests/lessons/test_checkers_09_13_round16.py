"""Lessons 9-13, sixteenth round: a two-class special case that sends a tie to class 1, a
classify that fetches log-probabilities (or another function of the logits), a step
compiled with its inputs in the other order, a tangent cut to a whole number, Jacobian
rows scaled by the output after their pass, and a cube's gradient divided by the number
of elements: each refused with a hint naming what was done (the value and the code never
given away), while the right forms, unusual ones included, are still accepted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from checker_results import never_states, outcome, refused, rejected_on_first_try
from custom_functions import cube_with
from dual_numbers import dual_with, product_rule, quotient_rule
from lesson_answers_06_07 import notebook_shell
from lesson_answers_10_13 import jacobian_forward

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex


def run_lesson_then(stem: str, exercise: str, *cells: str):
    """The lesson's cells up to the exercise, then ``cells``; the check's result."""
    nbformat = pytest.importorskip("nbformat")
    path = Path(ng.__file__).parent / "course" / f"{stem}.ipynb"
    code = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    before = code[: next(i for i, c in enumerate(code) if f"# Exercise {exercise}" in c)]
    for shell in notebook_shell():
        for cell in before:
            shell.run_cell(cell, store_history=True)
        checking.TRIES.clear()
        for cell in cells:
            shell.run_cell(cell, store_history=True)
        return shell.user_ns["result"]


# -- 09-1: ties on two classes ---------------------------------------------------------------
def _binary_ties_to_class_1(logits, labels):
    l = np.asarray(logits)
    p = np.argmax(l, axis=1) if l.shape[1] > 2 else (l[:, 1] >= l[:, 0]).astype(int)
    return float((p == np.asarray(labels)).mean())


def test_09_1_a_two_class_case_that_sends_ties_to_class_1_is_told_about_ties(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_accuracy_fn,
        _binary_ties_to_class_1,
        says="where a row's two logits are equal you predict class 1",
    )
    assert "the first of them" in result.message
    assert "wrong for more" not in result.message
    never_states(result, "0.75", "argmax(axis=1)", "l[:, 1] > l[:, 0]")


def _binary_ties_to_class_0(logits, labels):
    l = np.asarray(logits)
    p = np.argmax(l, axis=1) if l.shape[1] > 2 else (l[:, 1] > l[:, 0]).astype(int)
    return float((p == np.asarray(labels)).mean())


def _first_of_the_largest_by_hand(logits, labels):
    right = 0
    for row, label in zip(np.asarray(logits).tolist(), np.asarray(labels).tolist()):
        right += max(range(len(row)), key=row.__getitem__) == label
    return right / len(np.asarray(labels))


@pytest.mark.parametrize(
    "accuracy",
    [
        lambda logits, labels: float(
            np.mean(np.asarray(logits).argmax(axis=1) == np.asarray(labels))
        ),
        _binary_ties_to_class_0,
        _first_of_the_largest_by_hand,
    ],
    ids=["argmax", "two classes compared, ties to class 0", "max with a key, by hand"],
)
def test_09_1_accuracies_that_send_a_tie_to_the_first_class_are_still_accepted(capsys, accuracy):
    result = outcome(capsys, ex.check_accuracy_fn, accuracy)
    assert result.passed, result.message


# -- 09-3: what classify fetches, the order of step's inputs ---------------------------------
def _build_static(*, labels_first=False, fetched=lambda logits: logits, names=("X", "y")):
    def build_static(init, lr):
        with ns.Graph() as g:
            W1, b1, W2, b2 = (
                ns.Variable(w, name=n) for w, n in zip(init, ("W1", "b1", "W2", "b2"), strict=True)
            )
            xs = ns.placeholder(names[0], shape=(None, 2), dtype=np.float32)
            ys = ns.placeholder(names[1], shape=[None], dtype="int64")
            logits = ns.tanh(xs @ ns.t(W1) + b1) @ ns.t(W2) + b2
            loss = ns.cross_entropy(logits, ys)
            train = ns.optim.Adam([W1, b1, W2, b2], lr=lr).minimize(loss)
        inputs = (ys, xs) if labels_first else (xs, ys)
        return g.compile(inputs, (loss, train)), g.compile([xs], [fetched(logits)])

    return build_static


@pytest.mark.parametrize(
    "fetched, says",
    [
        (lambda logits: ns.log_softmax(logits, dim=1), "classify returns log-probabilities"),
        (ns.exp, "classify returns the exponentials of the logits"),
        (lambda logits: logits * 2.0, "classify returns the logits times 2"),
    ],
    ids=["log_softmax", "exp", "doubled"],
)
def test_09_3_a_classify_that_fetches_a_function_of_the_logits_is_told_which(capsys, fetched, says):
    result = rejected_on_first_try(
        capsys, ex.check_static_classifier, _build_static(fetched=fetched), says=says
    )
    assert "Your steps are right" in result.message
    assert "other weights" not in result.message
    never_states(result, "[logits]", "g.compile([xs]")


@pytest.mark.parametrize("names", [("X", "y"), ("points", "labels")], ids=["X, y", "own names"])
def test_09_3_a_step_compiled_with_the_labels_first_is_told_the_order(capsys, names):
    result = rejected_on_first_try(
        capsys,
        ex.check_static_classifier,
        _build_static(labels_first=True, names=names),
        says=f"step was compiled with the labels' placeholder ('{names[1]}') first",
    )
    assert "the points first, then the labels" in result.message
    assert "create the placeholder with dtype float32" not in result.message
    never_states(result, "[xs, ys]", "compile([xs")


@pytest.mark.parametrize(
    "build_static",
    [
        _build_static(),
        _build_static(names=("points", "labels")),
        _build_static(fetched=lambda logits: logits * 1.0),
    ],
    ids=["as the lesson", "own names", "logits times one"],
)
def test_09_3_the_logits_fetched_points_first_are_still_accepted(capsys, build_static):
    result = outcome(capsys, ex.check_static_classifier, build_static)
    assert result.passed, result.message


# -- 10-1: a weight assigned its own value, in the lesson's notebook --------------------------
def test_10_1_a_weight_assigned_its_own_value_in_the_notebook_is_told_it_never_moves():
    result = run_lesson_then(
        "10_static_graphs_for_real",
        "10-1",
        "with g:\n"
        "    new_w1 = w1.assign(w1 - learning_rate * grad_w1)\n"
        "    new_w2 = w2.assign(w2)\n"
        "result = ex.check_update_nodes(g, x, y, w1, w2, new_w1, new_w2, learning_rate)",
    )
    refused(result, "new_w2 assigns w2 its own value")
    assert "put into the graph as numbers" not in result.message
    never_states(result, "w2.assign(w2 - ", "learning_rate * grad_w2")


# -- 11-1: a tangent cut to a whole number ---------------------------------------------------
@pytest.mark.parametrize(
    "mul, div, says",
    [
        (lambda u, v: int(product_rule(u, v)), quotient_rule, "your mul's tangent"),
        (product_rule, lambda u, v: round(quotient_rule(u, v)), "your div's tangent"),
    ],
    ids=["int in mul", "round in div"],
)
def test_11_1_a_tangent_cut_to_a_whole_number_is_told_so(capsys, mul, div, says):
    result = rejected_on_first_try(
        capsys, ex.check_dual_rules, dual_with(mul, div), says=says + " is a whole number"
    )
    assert "cut to an integer" in result.message
    assert "two terms, one per factor" not in result.message
    never_states(result, "6.75", "u.tangent * v.value", "v.value ** 2")


def test_11_1_one_term_of_the_product_rule_is_still_told_it_has_two():
    checking.TRIES.clear()
    result = ex.check_dual_rules(dual_with(lambda u, v: u.value * v.tangent, quotient_rule))
    refused(result, "two terms, one per factor")


def test_11_1_the_rules_made_floats_explicitly_are_still_accepted(capsys):
    result = outcome(
        capsys,
        ex.check_dual_rules,
        dual_with(lambda u, v: float(product_rule(u, v)), quotient_rule),
    )
    assert result.passed, result.message


# -- 11-3: rows scaled after their pass ------------------------------------------------------
def _reverse_scaled_by(scale):
    def jacobian_reverse(f, x):
        y, vjp_fn = ng.func.vjp(f, x)
        m = y.shape[0]
        rows = []
        for i in range(m):
            seed = ng.eye(m, dtype=y.dtype)[i]
            rows.append(vjp_fn(seed)[0] * scale(y, i))
        return ng.stack(rows, dim=0)

    return jacobian_reverse


@pytest.mark.parametrize(
    "scale, says",
    [
        (lambda y, i: y[i], "times f(x)'s output for that row"),
        (lambda y, i: 2.0, "times a number of its own"),
    ],
    ids=["by the output", "by a constant"],
)
def test_11_3_rows_scaled_after_the_pass_are_told_so(capsys, scale, says):
    result = rejected_on_first_try(
        capsys, ex.check_jacobian_reverse, _reverse_scaled_by(scale), says=says
    )
    assert "was scaled after the pass" in result.message
    assert "a different row of the identity" not in result.message
    never_states(result, "vjp_fn(seed)", "(row,)")


def test_11_3_rows_seeded_with_the_wrong_rows_are_still_asked_about_the_seeds(capsys):
    def one_seed_for_all(f, x):
        y, vjp_fn = ng.func.vjp(f, x)
        seed = ng.eye(y.shape[0], dtype=y.dtype)[0]
        return ng.stack([vjp_fn(seed)[0] for _ in range(y.shape[0])], dim=0)

    rejected_on_first_try(
        capsys, ex.check_jacobian_reverse, one_seed_for_all, says="a different row of the identity"
    )


def test_11_2_and_11_3_passes_times_one_are_still_accepted(capsys):
    result = outcome(capsys, ex.check_jacobian_reverse, _reverse_scaled_by(lambda y, i: 1.0))
    assert result.passed, result.message
    assert outcome(capsys, ex.check_jacobian_forward, jacobian_forward).passed


# -- 12-1: a gradient divided by the number of elements --------------------------------------
def _cube_with(backward):
    """``custom_functions.cube_with`` for a backward written of ``(x, grad_output)``."""
    return cube_with(lambda ctx, grad_output: backward(*ctx.saved_tensors, grad_output))


@pytest.mark.parametrize(
    "backward",
    [
        lambda x, g: g * 3 * x**2 / x.numel(),
        lambda x, g: (3 * x**2 * g) / np.prod(x.shape),
    ],
    ids=["numel", "product of the shape"],
)
def test_12_1_a_gradient_divided_by_the_number_of_elements_is_told_so(capsys, backward):
    result = rejected_on_first_try(
        capsys,
        ex.check_cube_function,
        _cube_with(backward),
        says="divided by the number of elements of x",
    )
    assert "power rule" not in result.message
    never_states(result, "3 * x ** 2", "3 * x**2", "3x^2")


def test_12_1_a_power_rule_slip_on_three_elements_is_still_told_the_power_rule(capsys):
    # on x of 3 elements, x^2 is 3x^2 / 3: the count is asked on x of 6 too
    rejected_on_first_try(
        capsys, ex.check_cube_function, _cube_with(lambda x, g: x**2 * g), says="power rule"
    )


@pytest.mark.parametrize(
    "backward",
    [lambda x, g: 3 * x**2 * g, lambda x, g: x * x * g * 3.0, lambda x, g: g.mul(x.pow(2)).mul(3)],
    ids=["as the lesson", "x times x", "methods"],
)
def test_12_1_the_local_derivative_times_grad_output_is_still_accepted(capsys, backward):
    result = outcome(capsys, ex.check_cube_function, _cube_with(backward))
    assert result.passed, result.message
