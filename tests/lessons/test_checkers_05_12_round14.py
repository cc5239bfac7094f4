"""Lessons 5-12, fourteenth round: 09-1 refuses logits cast to float16 (two close logits
tie there), and each hint names the mistake the learner made: an accuracy read off the
first rows of a batch, a train_step stepping the notebook's optimizer, a cube gradient
rounded through float32, a finite op in 12-6 (its advice said once), a setup that
changed a copy of the model, a prediction joined from runs on parts of the batch, the
extra Variable by its own name, a descent with momentum; never the answer, and the
right forms are still accepted."""

from __future__ import annotations

import copy

import numpy as np
from checker_results import never_states, outcome, rejected_on_first_try
from custom_functions import cube_right, cube_with
from lesson_answers_01_05 import finetune_with, predict_ok
from lesson_answers_08 import Node, descend_with

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import exercises as ex

F = ng.nn.functional
CUBE_SECRETS = ("3 * x ** 2", "3 * x**2", "3x^2", "grad_output * 3")


# -- 09-1: logits cast to float16; the first rows of a batch only ---------------------------
def _on_arrays(logits, labels):
    return float(np.mean(np.asarray(logits).argmax(axis=1) == np.asarray(labels)))


def _in_float32(logits, labels):
    predicted = np.asarray(logits, dtype=np.float32).argmax(axis=1)
    return float(np.mean(predicted == np.asarray(labels)))


def test_09_1_logits_cast_to_float16_are_refused_naming_the_lost_digits(capsys):
    def in_float16(logits, labels):
        return float(
            np.mean(np.asarray(logits, dtype=np.float16).argmax(axis=1) == np.asarray(labels))
        )

    result = rejected_on_first_try(
        capsys, ex.check_accuracy_fn, in_float16, says="the logits were cast to float16"
    )
    assert "float16 keeps about 3 digits" in result.message
    assert "average is computed in float16" not in result.message
    never_states(result, "argmax(axis=1)", "np.mean", "1 for a batch")
    for accuracy in (_on_arrays, _in_float32):
        assert outcome(capsys, ex.check_accuracy_fn, accuracy).passed


def test_09_1_an_accuracy_of_the_first_rows_only_is_told_so(capsys):
    def first_rows(logits, labels):
        return float(np.mean(np.asarray(logits)[:5].argmax(axis=1) == np.asarray(labels)[:5]))

    result = rejected_on_first_try(
        capsys, ex.check_accuracy_fn, first_rows, says="looks at the first 5 rows of a batch only"
    )
    assert "right for two classes" not in result.message
    never_states(result, "argmax(axis=1)", "np.mean", "[:5]")
    assert outcome(capsys, ex.check_accuracy_fn, _on_arrays).passed


# -- 09-2: the notebook's optimizer stepped ------------------------------------------------
ng.manual_seed(0)
notebook_model = ng.nn.Sequential(ng.nn.Linear(2, 8), ng.nn.Tanh(), ng.nn.Linear(8, 2))
optimizer = ng.optim.SGD(notebook_model.parameters(), lr=0.5)  # the notebook's


def _right_step(net, opt, X, y):
    opt.zero_grad()
    loss = F.cross_entropy(net(X), y)
    loss.backward()
    opt.step()
    return loss.item()


def test_09_2_a_step_of_the_notebooks_optimizer_is_named(capsys):
    def train_step(net, opt, X, y):
        optimizer.zero_grad()
        loss = F.cross_entropy(net(X), y)
        loss.backward()
        optimizer.step()
        return loss.item()

    result = rejected_on_first_try(
        capsys, ex.check_train_step, train_step,
        says="your train_step steps `optimizer`, the notebook's optimizer",
    )
    assert "(`opt` in your function)" in result.message
    assert "the optimizer must take its step" not in result.message
    never_states(result, "opt.step()", "opt.zero_grad()", "loss.item()")
    assert outcome(capsys, ex.check_train_step, _right_step).passed


# -- 12-1: a float32 cast; 12-6: one hint, said once -----------------------------------------
def test_12_1_a_gradient_through_float32_is_named_not_blamed_on_a_clip(capsys):
    def through_float32(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 3 * x.detach().float() ** 2 * grad_output

    result = rejected_on_first_try(
        capsys, ex.check_cube_function, cube_with(through_float32),
        says="went through a narrower float",
    )
    assert "bounds or clips" not in result.message
    never_states(result, *CUBE_SECRETS)

    def through_float64(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * (x * x * 3).double()

    for backward in (cube_right, through_float64):
        assert outcome(capsys, ex.check_cube_function, cube_with(backward)).passed


def test_12_6_the_hint_for_a_finite_op_gives_its_advice_once(capsys):
    for name in ("MulBackward0", "SumBackward0"):
        result = rejected_on_first_try(
            capsys, ex.check_first_nan, name, says="returns finite numbers here"
        )
        assert "another op: check every one of the three" in result.message
        never_states(result, "SqrtBackward0", "sqrt", "Sqrt")
        again = outcome(capsys, ex.check_first_nan, name)  # a second try: both hints
        assert "step by step" not in again.message
        assert again.message.count("at x = [0, 4]") == 1, again.message
        never_states(again, "SqrtBackward0", "sqrt", "Sqrt")
    assert outcome(capsys, ex.check_first_nan, "SqrtBackward0").passed


# -- 05-2: a copy changed; 05-3: the batch split ---------------------------------------------
def test_05_2_a_setup_that_changes_a_copy_is_told_it_changed_a_copy(capsys):
    def on_a_copy(model, n_classes):
        model = copy.deepcopy(model)
        for p in model.parameters():
            p.requires_grad = False
        model.fc = ng.nn.Linear(8, n_classes)
        return ng.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)

    result = rejected_on_first_try(
        capsys, ex.check_finetune_setup, on_a_copy,
        says="your function changed a copy of the model",
    )
    assert "model.fc is still the old layer" not in result.message
    never_states(result, "lr=0.1", "momentum=0.9", "requires_grad = False", "Linear(8")
    assert outcome(capsys, ex.check_finetune_setup, finetune_with(lr=0.1, momentum=0.9)).passed


def test_05_3_a_prediction_joined_row_by_row_is_told_the_model_ran_on_parts(capsys):
    def row_by_row(model, x):
        with ng.no_grad():
            return ng.cat([model(x[i : i + 1]) for i in range(len(x))])

    result = rejected_on_first_try(
        capsys, ex.check_inference, row_by_row, says="your function runs the model 4 times"
    )
    assert "float32 products over a smaller batch round differently" in result.message
    assert "something was added" not in result.message
    never_states(result, "ng.no_grad()", "with ")
    again = outcome(capsys, ex.check_inference, row_by_row)  # a second try: both hints
    assert "Call the model once, on the whole x" in again.message
    assert outcome(capsys, ex.check_inference, predict_ok).passed


# -- 06-1: the extra Variable named ----------------------------------------------------------
def _toy_graph(extra: bool):
    with ns.Graph() as g:
        x = ns.placeholder("input", shape=(None, 2))
        w1 = ns.Variable(2.0, name="w1")
        w2 = ns.Variable(3.0, name="w2")
        w3 = ns.Variable(4.0, name="w3")
        second = ns.Variable(2.0, name="w1b") if extra else w1
        loss = ns.mean((x * w1 + w2) * (x * second * w3))
    return g, x, loss


def test_06_1_the_extra_variable_is_named_by_its_own_name(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_static_model, *_toy_graph(extra=True),
        says="your loss also reads the Variable w1b, which the model does not have",
    )
    assert "the Variable w1," not in result.message
    assert "extra Variable w1b" in result.message
    assert outcome(capsys, ex.check_static_model, *_toy_graph(extra=False)).passed


# -- 08-6: momentum named ------------------------------------------------------------------
def test_08_6_a_descent_with_momentum_is_told_plain_descent_uses_the_current_gradient(capsys):
    def with_momentum(f, x0, y0, lr=0.1, steps=200):
        x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
        vx = vy = 0.0
        for _ in range(steps):
            x.grad = y.grad = 0.0
            f(x, y).backward()
            vx, vy = 0.9 * vx + x.grad, 0.9 * vy + y.grad
            x.value -= lr * vx
            y.value -= lr * vy
        return x.value, y.value

    result = rejected_on_first_try(
        capsys, ex.check_gradient_descent, with_momentum, says="keeps a velocity (momentum)"
    )
    assert "-lr times its CURRENT gradient only" in result.message
    assert "use the f, start, lr and steps you are given" not in result.message

    def checkers_f(x, y):  # the f the checker descends, from (0.5, 1.0) with lr 0.05
        return (x - 2) ** 2 + 3 * (y + 1) ** 2 + x * y / 4

    end = descend_with()(checkers_f, 0.5, 1.0, 0.05, 60)
    never_states(result, "-= lr", "x.grad = y.grad = 0", *(f"{v:.4g}" for v in end))
    for backward in ("method", "run_backward"):
        assert outcome(capsys, ex.check_gradient_descent, descend_with(backward)).passed
