"""Lessons 8-13, tenth round: a check started while a cell has left global state
changed from the lab's (grad mode off, a float64 default dtype, anomaly detection on)
is refused, naming the state and the line that puts it back, and leaves the learner's
kernel as it was; the train op of 09-3 must minimize the loss it fetches; 10-1 names a
w1 rebound by `-=`; lesson 8's float32 answers are told float32."""

from __future__ import annotations

import math

import numpy as np
import pytest
from checker_results import never_states, outcome, rejected_on_first_try
from custom_functions import cube_right, cube_with

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex

F = ng.nn.functional


@pytest.fixture(autouse=True)
def lab_state():
    """Each test starts from the lab's state and leaves it so."""
    yield
    ng.set_grad_enabled(True)
    ng.set_default_dtype(ng.float32)
    ng.autograd.set_detect_anomaly(False)


def train_step(model, opt, X, y):
    opt.zero_grad()
    loss = F.cross_entropy(model(X), y)
    loss.backward()
    opt.step()
    return loss.item()


CUBE = cube_with(cube_right)

# (what a cell does, what the hint names, the line that puts it back, is it back?)
LEFT_BY_A_CELL = [
    (
        lambda: ng.set_grad_enabled(False),
        "grad mode is off in this notebook",
        "`ng.set_grad_enabled(True)`",
        lambda: not ng.is_grad_enabled(),
    ),
    (
        lambda: ng.set_default_dtype(ng.float64),
        "the default dtype is float64 (the lab's is float32)",
        "`ng.set_default_dtype(ng.float32)`",
        lambda: ng.get_default_dtype() == ng.float64,
    ),
    (
        lambda: ng.autograd.set_detect_anomaly(True),
        "anomaly detection is on in this notebook",
        "`ng.autograd.set_detect_anomaly(False)`",
        lambda: ng.autograd.is_anomaly_enabled(),
    ),
]


@pytest.mark.parametrize(
    ("check", "right"), [(ex.check_train_step, train_step), (ex.check_cube_function, CUBE)]
)
@pytest.mark.parametrize(("cell", "names", "puts_back", "still_changed"), LEFT_BY_A_CELL)
def test_a_right_answer_checked_after_a_cell_changed_global_state_is_refused_and_the_state_kept(
    capsys, check, right, cell, names, puts_back, still_changed
):
    cell()
    result = rejected_on_first_try(capsys, check, right, says=names)
    assert puts_back in result.message
    assert "your answer was not checked" in result.message
    assert "raised" not in result.message
    assert still_changed()  # the learner puts it back, not the check
    assert checking.TRIES == {}  # not a wrong try


def test_two_states_left_changed_are_both_named(capsys):
    ng.set_grad_enabled(False)
    ng.autograd.set_detect_anomaly(True)
    result = rejected_on_first_try(
        capsys,
        ex.check_train_step,
        train_step,
        says="grad mode is off and anomaly detection is on in this notebook",
    )
    assert "`ng.set_grad_enabled(True)`; `ng.autograd.set_detect_anomaly(False)`" in result.message


@pytest.mark.parametrize("cell", [row[0] for row in LEFT_BY_A_CELL])
def test_once_the_state_is_put_back_the_same_answer_passes(capsys, cell):
    cell()
    assert not outcome(capsys, ex.check_train_step, train_step)
    ng.set_grad_enabled(True)
    ng.set_default_dtype(ng.float32)
    ng.autograd.set_detect_anomaly(False)
    assert outcome(capsys, ex.check_train_step, train_step).passed


def test_in_the_labs_state_the_right_answers_pass_and_the_state_is_unchanged(capsys):
    assert outcome(capsys, ex.check_train_step, train_step).passed
    assert outcome(capsys, ex.check_cube_function, CUBE).passed
    assert ng.is_grad_enabled()
    assert ng.get_default_dtype() == ng.float32
    assert not ng.autograd.is_anomaly_enabled()


def test_a_check_called_inside_a_no_grad_block_is_not_taken_for_a_leftover(capsys):
    with ng.no_grad():
        assert outcome(capsys, ex.check_cube_function, CUBE).passed
        assert not ng.is_grad_enabled()
    assert ng.is_grad_enabled()


@pytest.mark.filterwarnings("ignore:Anomaly Detection")
def test_a_check_called_inside_a_detect_anomaly_block_is_not_taken_for_a_leftover(capsys):
    with ng.autograd.detect_anomaly():
        assert outcome(capsys, ex.check_cube_function, CUBE).passed


# -- 10-1: `w1 -= ...` rebinds w1 to a new node -----------------------------------------------
def graph_with_updates(update):
    """The lesson's network (smaller): ``update(w1, w2, grad_w1, grad_w2, lr)`` gives
    the names w1, w2, new_w1, new_w2 after the exercise cell."""
    rng = np.random.default_rng(1)
    lr = 1e-3
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 6))
        y = ns.placeholder("y", shape=(None, 2))
        w1 = ns.Variable(rng.standard_normal((6, 4)).astype(np.float32), name="w1")
        w2 = ns.Variable(rng.standard_normal((4, 2)).astype(np.float32), name="w2")
        loss = ns.sum((ns.matmul(ns.relu(ns.matmul(x, w1)), w2) - y) ** 2.0)
        grad_w1, grad_w2 = ns.gradients(loss, [w1, w2])
        w1, w2, new_w1, new_w2 = update(w1, w2, grad_w1, grad_w2, lr)
    return g, x, y, w1, w2, new_w1, new_w2, lr


def torch_habit(w1, w2, grad_w1, grad_w2, lr):
    w1 -= lr * grad_w1
    w2 -= lr * grad_w2
    return w1, w2, w1, w2


def assigned(w1, w2, grad_w1, grad_w2, lr):
    return w1, w2, w1.assign(w1 - lr * grad_w1), w2.assign(w2 - lr * grad_w2)


def test_10_1_w1_rebound_by_minus_equals_is_told_it_is_no_longer_the_variable(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_update_nodes,
        *graph_with_updates(torch_habit),
        says="w1 is no longer the Variable: `w1 -= ...`",
    )
    assert "needs an assign node" in result.message
    assert "raised" not in result.message
    never_states(result, "w1.assign(w1 - ", "assign(w1 - learning_rate")
    again = outcome(capsys, ex.check_update_nodes, *graph_with_updates(torch_habit))
    assert "Re-run the cell that makes w1" in result.message
    assert "keep the names w1 and w2" in again.message


def test_10_1_assign_nodes_are_still_accepted(capsys):
    assert outcome(capsys, ex.check_update_nodes, *graph_with_updates(assigned)).passed


# -- 09-3: the train op must minimize the loss step fetches ------------------------------------
def static_minimizing(minimized):
    """A build_static whose train op minimizes ``minimized(logits, ys, loss)``, fetching
    the mean loss."""

    def build_static(init, lr):
        with ns.Graph() as g:
            W1, b1, W2, b2 = (ns.Variable(v) for v in init)
            xs = ns.placeholder("X", shape=(None, 2), dtype=np.float32)
            ys = ns.placeholder("y", shape=(None,), dtype=np.int64)
            logits = ns.tanh(xs @ ns.t(W1) + b1) @ ns.t(W2) + b2
            loss = ns.cross_entropy(logits, ys)
            train = ns.optim.Adam([W1, b1, W2, b2], lr=lr).minimize(minimized(logits, ys, loss))
        return g.compile([xs, ys], [loss, train]), g.compile([xs], [logits])

    return build_static


@pytest.mark.parametrize(
    ("minimized", "says"),
    [
        (
            lambda logits, ys, loss: ns.cross_entropy(logits, ys, reduction="sum"),
            "times (the batch size)",
        ),
        (lambda logits, ys, loss: loss * 2.0, "is twice the model's"),
    ],
)
def test_09_3_a_train_op_minimizing_a_scaled_loss_is_refused(capsys, minimized, says):
    result = rejected_on_first_try(
        capsys,
        ex.check_static_classifier,
        static_minimizing(minimized),
        says="your training op minimizes another node than the loss step fetches",
    )
    assert says in result.message
    never_states(result, "minimize(loss)", 'reduction="sum"', "loss * 2")


def test_09_3_a_train_op_minimizing_the_fetched_loss_is_still_accepted(capsys):
    right = static_minimizing(lambda logits, ys, loss: loss)
    assert outcome(capsys, ex.check_static_classifier, right).passed


# -- 08-1: a derivative rounded to float32 ------------------------------------------------------
TABLE = {
    "add": (lambda a, b: a + b, lambda a, b, i: 1.0),
    "sub": (lambda a, b: a - b, lambda a, b, i: 1.0 if i == 0 else -1.0),
    "mul": (lambda a, b: a * b, lambda a, b, i: b if i == 0 else a),
    "div": (lambda a, b: a / b, lambda a, b, i: 1 / b if i == 0 else -a / b**2),
    "pow": (lambda a, b: a**b, lambda a, b, i: b * a ** (b - 1) if i == 0 else a**b * math.log(a)),
    "sin": (lambda a: math.sin(a), lambda a, i: math.cos(a)),
    "cos": (lambda a: math.cos(a), lambda a, i: -math.sin(a)),
    "exp": (lambda a: math.exp(a), lambda a, i: math.exp(a)),
    "log": (lambda a: math.log(a), lambda a, i: 1 / a),
}


def test_08_1_a_derivative_rounded_to_float32_is_told_float32(capsys):
    mul = (TABLE["mul"][0], lambda a, b, i: float(np.float32(b if i == 0 else a)))
    result = rejected_on_first_try(
        capsys, ex.check_derivative_table, {**TABLE, "mul": mul}, says="is rounded to float32"
    )
    assert "finite difference" not in result.message
    never_states(result, "b if i == 0 else a")


def test_08_1_the_exact_table_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_derivative_table, TABLE).passed


def self_assigned(w1, w2, grad_w1, grad_w2, lr):
    return w1, w2, w1.assign(w1 - lr * grad_w1), w2.assign(w2)


def test_10_1_a_weight_assigned_its_own_value_is_told_it_never_moves(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_update_nodes,
        *graph_with_updates(self_assigned),
        says="new_w2 assigns w2 its own value",
    )
    assert "put into the graph as numbers" not in result.message
    never_states(result, "w2.assign(w2 - ", "learning_rate * grad_w2")
